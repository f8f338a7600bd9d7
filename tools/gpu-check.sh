#!/usr/bin/env bash
# tools/gpu-check.sh [BUNDLE_DIR] — the one scripted check of a lent NVIDIA GPU machine (issue 6;
# docs/gpu-backends.md). Runs from the repository root there, with BUNDLE_DIR (default
# gpu-bundle/, made here by tools/gpu-bundle.sh and named in the device tool's `carry`):
#   0. finds the machine's libcuBLAS and libnccl (not bundled; the cuda plugin dlopens them) under
#      /usr/local/cuda*/ or python3's site-packages (nvidia/cublas/lib, nvidia/cu13/lib,
#      nvidia/nccl/lib) and puts their folders on LD_LIBRARY_PATH;
#   1. the devices hwinfer sees (cuda and vulkan on the same card) and the bandwidth probe;
#   2. the conformance suite on cuda (option gemm=auto: cuBLAS when found; the collective cases
#      through NCCL, one rank; then the gemm cases
#      again with gemm=builtin), then on vulkan (the NVIDIA Vulkan driver);
#   3. the decode GEMVs at the llama2-7b shapes (BM_GemvLlama2_7b: F16, Q8_0, Q4_0) on cuda and
#      vulkan, against the measured copy bandwidth; the prefill GEMMs (BM_PrefillTinyLlama, and
#      BM_Matmul F32 at m = 128) on cuda with gemm=builtin and with gemm=cublas;
#   4. end to end: `hwinfer sweep` of llama2-7b in f16 and q4_0 (weights: dummy, nothing to load)
#      at batch 1, 8, 32 on cuda: output tok/s, TTFT, TPOT, decode MBU against the spec peak
#      (configs/hardware/h200.yaml, matched by the device name);
#      and batch 1 in f16 again with decode graphs off (scheduler.decode_graphs: false);
# then prints one table. Logs and results go to $OUT (the device tool brings back 8 files; this
# writes 8: log.txt, probe.json, conformance-{cuda,vulkan}.txt, bench.json (every Google Benchmark
# run, keyed gemv-cuda, gemv-vulkan, prefill-builtin, prefill-cublas),
# sweep-{f16,q4_0,f16-nographs}.json), or
# to gpu-check-out/ when OUT is unset. Budget: under 10 minutes on an H200; a step that fails is
# reported in the table and the script goes on.
set -uo pipefail
# GPU_CHECK_QUICK=1: a second call in one lease (about 3 minutes): the devices, both conformance
# runs, the Vulkan GEMVs, the prefill GEMMs with cuBLAS only (one repetition), and the sweeps at
# fewer points (f16 at 1, 8, 32; q4_0 at 32).
quick="${GPU_CHECK_QUICK:-}"
repetitions=3
[ -n "$quick" ] && repetitions=1
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
# libcublas.so.13 (else .12) and libnccl.so.2 from the machine: the CUDA toolkit, or pip's
# nvidia-cublas / nvidia-nccl wheels. Neither is bundled (0.5 GB, 0.2 GB); the cuda plugin dlopens
# both (vendor_blas.cpp, vendor_comm.cpp).
library_dirs=(/usr/local/cuda*/lib64 /usr/local/cuda*/lib /usr/local/cuda*/targets/*/lib)
for site in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
  library_dirs+=("$site/nvidia/cublas/lib" "$site/nvidia/cu13/lib" "$site/nvidia/nccl/lib")
done
# find_vendor_library LABEL WHAT-FAILS NAME...: the first NAME found, its folder put on
# LD_LIBRARY_PATH.
find_vendor_library() {
  local label="$1" fails="$2" found="" name
  shift 2
  for name in "$@"; do
    found="$(find -H "${library_dirs[@]}" -maxdepth 1 -name "$name" 2>/dev/null | head -n 1)"
    [ -n "$found" ] && break
  done
  if [ -n "$found" ]; then
    export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$found")"
    say "$label: $found"
  else
    say "$label: not found (searched ${library_dirs[*]}); $fails"
  fi
}
find_vendor_library cuBLAS "gemm=cublas steps will fail" libcublas.so.13 libcublas.so.12
find_vendor_library NCCL "the conformance collective tests will fail" libnccl.so.2
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
# The driver's libraries (libGLX_nvidia.so.0, which the manifest names without a folder).
for dir in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"
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
say "devices (Vulkan driver manifest: ${VK_DRIVER_FILES:-none found})"
hw --config "$config" devices 2>&1 | tee -a "$log" | grep -c "vulkan:0" > /dev/null || {
  say "no vulkan device: the Vulkan loader's account"
  VK_LOADER_DEBUG=error,warn,driver hw --config "$config" devices 2>&1 | grep -iv "^ " | head -n 40 |
    tee -a "$log"
}
say "probe (cuda)"
hw --config "$config" probe --json --size-mib 1024 > "$out/probe.json" 2>> "$log"; cat "$out/probe.json" >> "$log"

for backend in cuda vulkan; do
  say "conformance ($backend)"
  timeout 240 "${launch[@]}" "$bundle/bin/hwinfer" --log-level info conformance \
    --plugin "$bundle/lib/hwinfer/plugins/hwinfer-$backend.so" > "$out/conformance-$backend.txt" 2>&1
  echo "exit $?" >> "$out/conformance-$backend.txt"
  # The gemm path, the counts, every failing case, and the exit status.
  grep -E "gemm uses|^\[  (PASSED|SKIPPED) *\] [0-9]+ test|^\[  FAILED  \]|^exit " \
    "$out/conformance-$backend.txt" | tee -a "$log"
  # The device collectives (NCCL on cuda: one rank; two ranks skip, NCCL refusing one GPU twice).
  grep -E "^\[ +(OK|SKIPPED|FAILED) +\] Collectives/" "$out/conformance-$backend.txt" \
    | tee -a "$log"
done
say "conformance (cuda, gemm=builtin, gemm cases only)"
{
  echo "== gemm=builtin"
  timeout 60 "${launch[@]}" "$bundle/bin/hwinfer" conformance --option gemm=builtin \
    --plugin "$bundle/lib/hwinfer/plugins/hwinfer-cuda.so" --gtest_filter='*Gemm*' 2>&1
  echo "builtin exit $?"
} | grep -E "^\[  (PASSED|SKIPPED) *\] [0-9]+ test|^\[  FAILED  \]|exit [0-9]" \
  | tee -a "$log" >> "$out/conformance-cuda.txt"

say "decode GEMVs at the llama2-7b shapes; prefill GEMMs on cuda, built-in kernel vs cuBLAS"
matmul_bench() {  # NAME FILTER ARGS...: one Google Benchmark run into $work/NAME.json
  local name="$1" filter="$2"
  shift 2
  timeout 150 "${launch[@]}" "$bundle/bin/hwinfer_matmul_bench" "$@" \
    --benchmark_filter="$filter" --benchmark_repetitions="$repetitions" \
    --benchmark_report_aggregates_only=true --benchmark_out="$work/$name.json" \
    --benchmark_out_format=json 2>&1 | tee -a "$log"
}
if [ -n "$quick" ]; then
  backends=(vulkan)  # the cuda GEMVs did not change; the Vulkan ones have never run there
  gemms=(cublas)
else
  backends=(cuda vulkan)
  gemms=(builtin cublas)
fi
for backend in "${backends[@]}"; do
  matmul_bench "gemv-$backend" 'BM_GemvLlama2_7b' --backend="$backend"
done
for gemm in "${gemms[@]}"; do
  matmul_bench "prefill-$gemm" 'BM_PrefillTinyLlama|BM_Matmul/dtype:0/' --backend=cuda \
    --plugin-option=gemm="$gemm"
done
python3 - "$work" "$out/bench.json" <<'PY'
import json, os, sys
runs = {}
for name in ("gemv-cuda", "gemv-vulkan", "prefill-builtin", "prefill-cublas"):
    try:
        runs[name] = json.load(open(os.path.join(sys.argv[1], name + ".json")))
    except (OSError, ValueError) as e:
        runs[name] = {"error": str(e)}
json.dump(runs, open(sys.argv[2], "w"))
PY

say "end to end: llama2-7b sweeps on cuda"
# NAME TYPE GRAPHS BATCHES: one sweep into $out/sweep-NAME.json.
sweep() {
  local name="$1" type="$2" graphs="$3" batches="$4" sweep_config="$work/llama2-7b-$1.yaml"
  cat > "$sweep_config" <<YAML
plugin_paths: ["$bundle/lib/hwinfer/plugins"]
backends: [{name: cuda}]
model: {shape: "$repo/configs/models/llama2-7b.yaml", type: $type, weights: dummy}
workload: {arrivals: offline, input: 128, output: 64, seed: 0}
scheduler: {mode: continuous, max_batch_tokens: 4096, kv_block_size: 16, kv_dtype: f16,
            kv_cache_tokens: 32768, decode_graphs: $graphs}
YAML
  timeout 200 "${launch[@]}" "$bundle/bin/hwinfer" sweep --config "$sweep_config" \
    --batch "$batches" --requests-per-batch 1 --json "$out/sweep-$name.json" --no-progress 2>&1 |
    tee -a "$log"
}
sweep f16 f16 true 1,8,32
if [ -n "$quick" ]; then
  sweep q4_0 q4_0 true 32
else
  sweep q4_0 q4_0 true 1,8,32
  # What the decode graphs are worth: batch 1 again with every kernel launched one by one.
  sweep f16-nographs f16 false 1
fi

say "summary"
python3 "$repo/tools/gpu_check_table.py" "$out" | tee -a "$log"
