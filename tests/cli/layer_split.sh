#!/usr/bin/env bash
# tests/cli/layer_split.sh HWINFER MODEL CONFIG OUT_DIR DEVICE_A DEVICE_B [BENCH_ARGS...] — one
# model's layers split over two devices (docs/multi-device.md): `generate --devices A,B --split
# layers` (default split, and B first with an explicit --layer-split) must print exactly the
# one-device tokens on A, and `bench --devices A,B --split layers` on CONFIG (F16 weights: the
# backends agree exactly) must give every request A's tokens and describe the split in its JSON.
set -euo pipefail
hw="$1"; model="$2"; config="$3"; out="$4"; a="$5"; b="$6"
shift 6
rm -rf "$out"; mkdir -p "$out"
prompt=1,450,73,310,344,338
one="$("$hw" generate -m "$model" --prompt-tokens "$prompt" -n 16 --device "$a" 2>/dev/null)"
for devices in "$a,$b" "$b,$a --layer-split 1,1"; do
  # shellcheck disable=SC2086  # the layer-split flag rides in $devices on purpose
  split="$("$hw" generate -m "$model" --prompt-tokens "$prompt" -n 16 --devices $devices \
    --split layers 2>/dev/null)"
  if [ "$split" != "$one" ]; then
    echo "layer_split: generate over $devices gave '$split', on $a alone '$one'"; exit 1
  fi
done
"$hw" bench --config "$config" --device "$a" --no-progress --no-probe "$@" \
  --tokens "$out/one.jsonl" >"$out/one.txt"
"$hw" bench --config "$config" --devices "$a,$b" --split layers --no-progress --no-probe "$@" \
  --tokens "$out/split.jsonl" --json "$out/split.json" >"$out/split.txt"
python3 "$(dirname "$0")/../../tools/compare_tokens.py" "$out/one.jsonl" "$out/split.jsonl" --exact \
  --min-identical 1
python3 - "$out/split.json" "$a" "$b" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
assert result["scheduler"]["split"] == "layers", result["scheduler"]
devices = result["devices"]
assert len(devices) == 1 and devices[0]["failure"] == "", devices
parts = devices[0]["layer_split"]
assert [p["device_id"] for p in parts] == sys.argv[2:4], parts
assert parts[0]["first_layer"] == 0 and parts[0]["end_layer"] == parts[1]["first_layer"], parts
assert parts[1]["end_layer"] == result["model"]["n_layers"], parts
assert all(p["seconds"] > 0 for p in parts), parts
assert result["failed"] == 0 and result["completed"] == len(result["request_devices"])
print(f"layer_split: layers {[(p['first_layer'], p['end_layer']) for p in parts]} on "
      f"{[p['device_id'] for p in parts]}, {result['completed']} requests")
PY
