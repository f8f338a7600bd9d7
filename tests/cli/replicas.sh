#!/usr/bin/env bash
# tests/cli/replicas.sh HWINFER CONFIG OUT_DIR DEVICE_A DEVICE_B [BENCH_ARGS...] — one bench
# over two devices as replicas (docs/multi-device.md): `--devices A,B` must give every request
# exactly the tokens the one-device run on A gives it (CONFIG's weights are F16: no activation
# quantization, so the backends agree exactly), route requests to both devices, print the
# per-device table and write each device's summary in the result JSON, whose pooled counts are
# the devices' sums.
set -euo pipefail
hw="$1"; config="$2"; out="$3"; a="$4"; b="$5"
shift 5
rm -rf "$out"; mkdir -p "$out"
"$hw" bench --config "$config" --device "$a" --no-progress --no-probe "$@" \
  --tokens "$out/one.jsonl" >"$out/one.txt"
"$hw" bench --config "$config" --devices "$a,$b" --no-progress --no-probe "$@" \
  --tokens "$out/two.jsonl" --json "$out/two.json" >"$out/two.txt"
grep -q "Per device" "$out/two.txt" || { echo "replicas: no per-device table:"; cat "$out/two.txt"; exit 1; }
python3 "$(dirname "$0")/../../tools/compare_tokens.py" "$out/one.jsonl" "$out/two.jsonl" --exact \
  --min-identical 1
python3 - "$out/two.json" "$a" "$b" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
devices = result["devices"]
ids = [d["env"]["device_id"] for d in devices]
assert ids == sys.argv[2:4], f"devices {ids}, expected {sys.argv[2:4]}"
routed = result["request_devices"]
for index, device in enumerate(devices):
    count = routed.count(index)
    assert count > 0, f"{ids[index]} got no request: {routed}"
    assert device["requests"] == count, (device["requests"], count)
    assert device["summary"]["completed"] == count, (device["summary"]["completed"], count)
assert result["failed"] == 0, result["failed"]
assert result["completed"] == len(routed), (result["completed"], len(routed))
total = sum(d["summary"]["total_output_tokens"] for d in devices)
assert result["total_output_tokens"] == total, (result["total_output_tokens"], total)
print(f"replicas: {len(routed)} requests over {ids}: {[routed.count(i) for i in range(len(ids))]}")
PY
