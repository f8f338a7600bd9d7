#!/usr/bin/env bash
# tools/gpu-check.sh [BUNDLE_DIR] — the one scripted check of a lent NVIDIA GPU machine (issue 6;
# docs/gpu-backends.md). Runs from the repository root there, with BUNDLE_DIR (default
# gpu-bundle/, made here by tools/gpu-bundle.sh and named in the device tool's `carry`):
#   1. the devices hwinfer sees (cuda and vulkan on the same card) and the bandwidth probe;
#   2. the conformance suite on cuda, then on vulkan (the NVIDIA Vulkan driver);
#   3. the decode GEMVs at the llama2-7b shapes (BM_GemvLlama2_7b: F16, Q8_0, Q4_0) on cuda and
#      vulkan, against the measured copy bandwidth;
#   4. end to end: `hwinfer sweep` of llama2-7b in f16 and q4_0 (weights: dummy, nothing to load)
#      at batch 1, 8, 32 on cuda: output tok/s, TTFT, TPOT, decode MBU against the spec peak
#      (configs/hardware/h200.yaml, matched by the device name);
# then prints one table. Logs and results go to $OUT (the device tool brings back 8 files: log.txt,
# probe.json, conformance-{cuda,vulkan}.txt, gemv-{cuda,vulkan}.json, sweep-{f16,q4_0}.json), or to
# gpu-check-out/ when OUT is unset. Budget: under 10 minutes on an H200; a step that fails is
# reported in the table and the script goes on.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="$(cd "${1:-$repo/gpu-bundle}" && pwd)"
out="${OUT:-$repo/gpu-check-out}"
mkdir -p "$out"
log="$out/log.txt"
: > "$log"
say() { echo "== $*" | tee -a "$log"; }

# The programs run on the machine's own C library when they can, else through the bundled one.
launch=()
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$bundle/bin/hwinfer" --help > /dev/null 2>&1; then
  launch=("$bundle/glibc/ld-linux-x86-64.so.2" --library-path "$bundle/glibc:$LD_LIBRARY_PATH")
  say "using the bundled C library ($bundle/glibc)"
fi
hw() { "${launch[@]}" "$bundle/bin/hwinfer" "$@"; }
bench() { "${launch[@]}" "$bundle/bin/$1" "${@:2}"; }
# The NVIDIA Vulkan driver's manifest, where the machine keeps it outside the loader's defaults.
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
           /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"; break; fi
done
work="$(mktemp -d)"  # configs (the device tool brings back at most 8 files from $OUT)
config="$work/gpu-check.yaml"  # cuda and vulkan on one card: keep both devices
cat > "$config" <<YAML
plugin_paths: ["$bundle/lib/hwinfer/plugins"]
allow_duplicate_devices: true
backends:
  - {name: cuda, priority: 1}
  - {name: vulkan}
YAML

say "machine"
(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv || true) 2>&1 | tee -a "$log"
say "devices"
hw --config "$config" devices 2>&1 | tee -a "$log"
say "probe (cuda)"
hw --config "$config" probe --json --size-mib 1024 > "$out/probe.json" 2>> "$log"; cat "$out/probe.json" >> "$log"

for backend in cuda vulkan; do
  say "conformance ($backend)"
  timeout 240 "${launch[@]}" "$bundle/bin/hwinfer" conformance \
    --plugin "$bundle/lib/hwinfer/plugins/hwinfer-$backend.so" > "$out/conformance-$backend.txt" 2>&1
  echo "exit $?" >> "$out/conformance-$backend.txt"
  # The counts, every failing case, and the exit status.
  grep -E "^\[  (PASSED|SKIPPED) *\] [0-9]+ test|^\[  FAILED  \]|^exit " \
    "$out/conformance-$backend.txt" | tee -a "$log"
done

say "decode GEMVs at the llama2-7b shapes"
for backend in cuda vulkan; do
  timeout 150 "${launch[@]}" "$bundle/bin/hwinfer_matmul_bench" --backend="$backend" \
    --benchmark_filter='BM_GemvLlama2_7b' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true --benchmark_out="$out/gemv-$backend.json" \
    --benchmark_out_format=json 2>&1 | tee -a "$log"
done

say "end to end: llama2-7b sweeps on cuda"
for type in f16 q4_0; do
  sweep_config="$work/llama2-7b-$type.yaml"
  cat > "$sweep_config" <<YAML
plugin_paths: ["$bundle/lib/hwinfer/plugins"]
backends: [{name: cuda}]
model: {shape: "$repo/configs/models/llama2-7b.yaml", type: $type, weights: dummy}
workload: {arrivals: offline, input: 128, output: 64, seed: 0}
scheduler: {mode: continuous, max_batch_tokens: 4096, kv_block_size: 16, kv_dtype: f16,
            kv_cache_tokens: 32768}
YAML
  timeout 200 "${launch[@]}" "$bundle/bin/hwinfer" sweep --config "$sweep_config" --batch 1,8,32 \
    --requests-per-batch 1 --json "$out/sweep-$type.json" --no-progress 2>&1 | tee -a "$log"
done

say "summary"
python3 "$repo/tools/gpu_check_table.py" "$out" | tee -a "$log"
