// kernel_util.h — what the GPU plugins' kernel families share on the host side (kernels.cpp and
// kernels_*.cpp): view addressing, the launch check, and each family's limits. Internal to the
// plugin.
//
// A family's GpuBackend::enqueue runs after the plugin kit's slot has checked NULLs and run the
// kind's shared check (which ends in this backend's limits, GpuBackend::limits); it calls
// use_device(), launches the kernels (launch.h) on stream.stream and returns check_launch().
#ifndef HWINFER_BACKENDS_CUDA_KERNEL_UTIL_H_
#define HWINFER_BACKENDS_CUDA_KERNEL_UTIL_H_

#include <cstdint>

#include "gpu_internal.h"
#include "hwinfer/kit/check_context.h"

namespace hwinfer::gpu {

// The device address of a view's first byte (its buffer's device pointer + offset_bytes).
inline uint8_t* view_data(const hwinfer_tensor_view& view) {
  return view.buffer->device_ptr + view.offset_bytes;
}

// True for an optional operand that is not given (NULL buffer and, at query time, rank 0).
inline bool view_absent(const hwinfer_tensor_view& view) {
  return view.buffer == nullptr && view.rank == 0;
}

// The runtime's error for the last launch on this thread ("<plugin> <kernel>: launch failed: ..."),
// or NULL.
hwinfer_error* check_launch(const char* kernel);

// UNSUPPORTED "<plugin> <kernel>: operand <operand> ..." unless |view|'s offset and strides are
// whole elements of its dtype and its strides are not negative (what the kernels index); absent
// optional operands pass.
hwinfer_error* require_whole_elements(const hwinfer_tensor_view& view, const char* kernel,
                                      const char* operand);

// The limits of each kernel family (the kernels are GpuBackend::enqueue overloads, gpu_internal.h).
// kernels_rows.cpp: the per-token kernels (rows.cu) and their limits (UNSUPPORTED with the reason
// for what the shared checks admit but the kernels cannot run).

// kernels_kv.cpp: kv_append (kv_append.cu) and its limits; rope_kv_append (ABI 1.1: one fused
// launch, limited as its two halves).

// kernels_gemm.cpp

// kernels_quant.cpp

// kernels_attention.cpp

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_KERNEL_UTIL_H_
