#!/usr/bin/env bash
# tests/cli/stdout_is.sh EXPECTED -- COMMAND [ARGS...]
# Runs COMMAND and checks it exits 0 and its stdout is exactly EXPECTED followed by one newline
# (byte for byte: generated text, UTF-8 included). stderr is shown on failure only.
set -uo pipefail
expected="$1"; shift
[ "${1:-}" = "--" ] && shift
out="$(mktemp)"; err="$(mktemp)"; want="$(mktemp)"
trap 'rm -f "$out" "$err" "$want"' EXIT
"$@" >"$out" 2>"$err"
code=$?
printf '%s\n' "$expected" >"$want"
fail=0
if [ "$code" -ne 0 ]; then echo "FAIL: exit code $code, expected 0"; fail=1; fi
if ! cmp -s "$out" "$want"; then echo "FAIL: stdout differs from the expected text"; fail=1; fi
if [ "$fail" -ne 0 ]; then
  echo "--- command: $*"; echo "--- expected:"; cat "$want"; echo "--- stdout:"; cat "$out"
  echo "--- stderr:"; cat "$err"
fi
exit "$fail"
