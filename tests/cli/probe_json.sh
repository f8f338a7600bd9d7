#!/usr/bin/env bash
# tests/cli/probe_json.sh HWINFER — `hwinfer probe --json` on cpu:0 reports the matmul peak of every
# default weight dtype under "matmul": each measured with a positive FLOP/s (and as many samples as
# repetitions), through the kernel the executor issues for it (gemm for f32/f16/bf16,
# matmul_quantized for the block types), at m = n = --gemm-size and k in whole blocks; plus both
# bandwidths and the working set they used.
set -euo pipefail
hw="$1"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$hw" probe --device cpu:0 --json --size-mib 8 --gemm-size 64 --repetitions 2 >"$out"
python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
(device,) = doc["devices"]
assert device["id"] == "cpu:0", device["id"]
for key in ["read_bandwidth", "copy_bandwidth"]:
    assert device[key]["measured"] and device[key]["bytes_per_s"] > 0, (key, device[key])
assert device["bandwidth_working_set_bytes"] == 8 << 20, device["bandwidth_working_set_bytes"]
matmul = device["matmul"]
kernels = {"f32": "gemm", "f16": "gemm", "bf16": "gemm",
           "q8_0": "matmul_quantized", "q4_0": "matmul_quantized", "q4_k": "matmul_quantized"}
assert sorted(matmul) == sorted(kernels), sorted(matmul)
for dtype, kernel in kernels.items():
    entry = matmul[dtype]
    assert entry["measured"], (dtype, entry)
    assert entry["flops_per_s"] > 0 and len(entry["samples"]) == 2, (dtype, entry)
    assert entry["kernel"] == kernel, (dtype, entry["kernel"])
    assert entry["m"] == entry["n"] == 64, (dtype, entry)
    assert entry["k"] == (256 if dtype == "q4_k" else 64), (dtype, entry["k"])
    assert entry["spec_flops_dtype"] == ("int8" if kernel == "matmul_quantized" else dtype) or \
        entry["spec_flops_per_s"] == 0, (dtype, entry)
print("probe JSON: matmul peaks of", ", ".join(kernels))
PY
