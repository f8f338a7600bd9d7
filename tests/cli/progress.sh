#!/usr/bin/env bash
# tests/cli/progress.sh HWINFER SOURCE_DIR — `bench` draws its progress bar on a terminal (run
# under script(1), which gives it one) ending at "4/4 done", and prints no progress at all to a
# pipe for a run shorter than the plain lines' 10-second period.
set -uo pipefail
hw="$1"; src="$2"
config="$src/tests/cli/data/bench-text.yaml"
run=("$hw" bench --config "$config" --num-requests 4 --no-probe)
tty_out="$(script -qec "${run[*]}" /dev/null | tr '\r' '\n')" || { echo "FAIL: bench failed on a terminal"; exit 1; }
if ! grep -Eq '^\[#{24}\] 4/4 done, 0 running, 0 waiting, [0-9]+ s, [0-9.]+ req/s, [0-9.]+ tok/s' <<<"$tty_out"; then
  echo "FAIL: no finished progress bar on a terminal:"; echo "$tty_out" | head -5; exit 1
fi
pipe_err="$("${run[@]}" 2>&1 >/dev/null)" || { echo "FAIL: bench failed on a pipe"; exit 1; }
if grep -q "done," <<<"$pipe_err"; then
  echo "FAIL: progress on a pipe within 10 s:"; echo "$pipe_err"; exit 1
fi
echo "ok"
