#!/usr/bin/env bash
# tests/cli/same_tokens.sh HWINFER CONFIG OUT_DIR DEVICE_A DEVICE_B [--exact] [BENCH_ARGS...] —
# two backends in one process and token-for-token agreement: `hwinfer devices` under CONFIG must
# list both devices, then `hwinfer bench` runs CONFIG's workload on each (BENCH_ARGS, e.g.
# --num-requests 2 --output-len 4, trim it: the sanitizer build's shorter run) and
# tools/compare_tokens.py compares the greedy output tokens (--tokens) request by request:
# identical, except that a request may diverge at a near-tie of its top two candidates in both runs
# (rounding; see compare_tokens.py). At least half of the requests must be identical throughout
# (--min-identical 0.5). With --exact, every token must be equal.
set -euo pipefail
hw="$1"; config="$2"; out="$3"; a="$4"; b="$5"
shift 5
exact=""
if [ "${1:-}" = "--exact" ]; then exact="--exact"; shift; fi
rm -rf "$out"; mkdir -p "$out"
"$hw" --config "$config" devices --no-probe >"$out/devices.txt"
for device in "$a" "$b"; do
  if ! grep -q "\] $device\$" "$out/devices.txt"; then
    echo "same_tokens: '$device' is not in the device list of $config:" >&2
    cat "$out/devices.txt" >&2
    exit 1
  fi
done
for device in "$a" "$b"; do
  "$hw" bench --config "$config" --device "$device" --no-progress --no-probe "$@" \
    --tokens "$out/$device.jsonl" >"$out/$device.txt"
done
min_identical=0.5
[ "$exact" = "--exact" ] && min_identical=1
python3 "$(dirname "$0")/../../tools/compare_tokens.py" "$out/$a.jsonl" "$out/$b.jsonl" $exact \
  --min-identical "$min_identical"
