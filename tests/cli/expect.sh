#!/usr/bin/env bash
# tests/cli/expect.sh EXIT REGEX [--one-line-error] -- COMMAND [ARGS...]
# Runs COMMAND and checks its exit code equals EXIT and its combined output matches the extended
# regex REGEX, and no raw control character is in it. With --one-line-error, stderr must be exactly
# one line starting "hwinfer: error:".
# Used by the CLI tests so each bad input is pinned to its message, its exit code and no crash.
set -uo pipefail
want_exit="$1"; regex="$2"; shift 2
one_line=0
if [ "${1:-}" = "--one-line-error" ]; then one_line=1; shift; fi
[ "${1:-}" = "--" ] && shift
out="$(mktemp)"; err="$(mktemp)"
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
code=$?
fail=0
if [ "$code" -ne "$want_exit" ]; then
  echo "FAIL: exit code $code, expected $want_exit"; fail=1
fi
# grep reads the files itself: with pipefail, `cat | grep -q` fails when grep stops reading early
# and cat dies of SIGPIPE (long outputs).
if ! grep -Eqh -- "$regex" "$out" "$err"; then
  echo "FAIL: output does not match /$regex/"; fail=1
fi
# No command may print a raw control character (other than tab and newline) that a file or a
# plugin put there: they are escaped (hwinfer/text_escape.h).
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$out" "$err"; then
  echo "FAIL: the output holds a raw control character"; fail=1
fi
if [ "$one_line" -eq 1 ]; then
  lines=$(grep -c '' "$err")
  if [ "$lines" -ne 1 ] || ! grep -q '^hwinfer: error: ' "$err"; then
    echo "FAIL: stderr should be one line 'hwinfer: error: ...', got $lines line(s)"; fail=1
  fi
fi
if [ "$fail" -ne 0 ]; then
  echo "--- command: $*"; echo "--- stdout:"; cat "$out"; echo "--- stderr:"; cat "$err"
fi
exit "$fail"
