// launch.h — the kernel launchers of backends/gpu-common: plain host functions, defined in the
// .cu files (compiled by nvcc or hipcc), called by the kernels_*.cpp enqueue functions (compiled
// by the host compiler). Arguments are device addresses, element counts and strides; shapes in the
// comments. Each launcher only launches (no allocation, no synchronisation) and returns the
// runtime's launch error.
#ifndef HWINFER_BACKENDS_GPU_COMMON_LAUNCH_H_
#define HWINFER_BACKENDS_GPU_COMMON_LAUNCH_H_

#include <cstdint>

#include "gpu_runtime.h"
#include "paged_kv.h"

namespace hwinfer::gpu {

// probe.cu — the bandwidth probe (plugin.h's HWINFER_PROBE_*): every byte of |size_bytes| is
// touched each iteration with 16-byte accesses where the addresses allow.
//   READ: src [size_bytes] -> sink [>= 64 bytes];  COPY: src -> dst;  WRITE: dst.
gpuError_t launch_bandwidth_probe(uint32_t mode, uint32_t iterations, uint64_t size_bytes,
                                  const uint8_t* src, uint8_t* dst, uint8_t* sink,
                                  uint32_t compute_units, gpuStream_t stream);

// attention_decode.cu and attention_prefill.cu — the attention launchers; their arguments (the
// paged pools, the block table, the query/output layouts) are the structs of paged_kv.h.
//   decode:  validation, then per batch of sequences the partition kernel and the reduce kernel;
//            |scratch| holds DecodeArgs::scratch_floats() floats.
//   prefill: validation, then the flash-attention kernel.
gpuError_t launch_attention_decode_paged(const DecodeArgs& args, float* scratch,
                                         gpuStream_t stream);
gpuError_t launch_attention_prefill(const PrefillArgs& args, gpuStream_t stream);

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_GPU_COMMON_LAUNCH_H_
