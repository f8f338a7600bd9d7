#!/usr/bin/env bash
# tests/cli/over_one_allocation.sh HWINFER SHAPE OUT_DIR BACKEND — a model larger than BACKEND's
# largest single allocation loads there and gives the CPU backend's greedy tokens. Writes an F16
# model of SHAPE (`hwinfer model synth`; F16 has no activation quantization, so the two backends'
# tokens are equal, not just equal up to near-ties), checks that its tensor data is larger than the
# max_allocation_bytes BACKEND's first device reports (so the test proves what it claims on that
# device: on lavapipe 128 MiB), then compares `hwinfer generate` on both backends.
set -euo pipefail
hw="$1"; shape="$2"; out="$3"; backend="$4"
rm -rf "$out"; mkdir -p "$out"
model="$out/model.gguf"
"$hw" model synth --shape "$shape" --type f16 --seed 7 -o "$model" >/dev/null
"$hw" devices --json --no-probe >"$out/devices.json"
python3 - "$out/devices.json" "$model" "$backend" <<'PY'
import json, os, sys
devices, model, backend = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
if isinstance(devices, dict):
    devices = devices.get("devices", [])
found = [d for d in devices if d.get("backend", d.get("plugin")) == backend]
if not found:
    sys.exit(f"over_one_allocation: no {backend} device in `hwinfer devices --json`")
limit = found[0]["max_allocation_bytes"]
size = os.path.getsize(model)
if size <= limit + (1 << 20):
    sys.exit(f"over_one_allocation: the model ({size} bytes) is not larger than {backend}'s "
             f"max allocation ({limit} bytes): the test would not prove anything")
print(f"model {size} bytes, {backend} max allocation {limit} bytes")
PY
for b in cpu "$backend"; do
  "$hw" generate -m "$model" --backend "$b" --prompt-tokens 1,5,9,13,17 -n 6 >"$out/$b.txt"
done
if ! cmp -s "$out/cpu.txt" "$out/$backend.txt"; then
  echo "over_one_allocation: $backend's tokens differ from the CPU backend's:" >&2
  echo "cpu:      $(cat "$out/cpu.txt")" >&2
  echo "$backend: $(cat "$out/$backend.txt")" >&2
  exit 1
fi
echo "same tokens: $(cat "$out/cpu.txt")"
rm -f "$model"  # 142 MiB
