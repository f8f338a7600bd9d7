// rowwise_ops.h — the CPU backend's per-token kernels: RMSNorm (optionally fused with the residual
// add) and SiLU-mul. One check_* per kernel, shared by kernel_query (views without buffers) and the
// enqueue slot (buffers required), so the two never disagree; kernels.cpp puts the enqueue_*
// functions in the kernel table and routes kernel_query here.
//
//   rms_norm:  x, out, residual: [n_tokens, dim] F32 | F16 (innermost contiguous);  weight: [dim]
//              F32.  residual (optional) is updated in place.
//   silu_mul:  gate, up, out: [n_tokens, dim] F32 | F16 (innermost contiguous)
//
// Must not run kernels on the enqueueing thread, and must not accept outputs that overlap inputs
// (except residual, which is in/out by definition).
#ifndef HWINFER_BACKENDS_CPU_ROWWISE_OPS_H_
#define HWINFER_BACKENDS_CPU_ROWWISE_OPS_H_

#include "cpu_internal.h"

namespace hwinfer::cpu {

// NULL when |d| is well-formed and runnable; INVALID_ARGUMENT when malformed; UNSUPPORTED with a
// reason when well-formed but not runnable here. Buffers are required only when |require_buffers|.
hwinfer_error* check_rms_norm(const hwinfer_device* device, const hwinfer_rms_norm_desc& d,
                              bool require_buffers);
hwinfer_error* enqueue_rms_norm(hwinfer_stream* stream, const hwinfer_rms_norm_desc* desc);

hwinfer_error* check_silu_mul(const hwinfer_device* device, const hwinfer_silu_mul_desc& d,
                              bool require_buffers);
hwinfer_error* enqueue_silu_mul(hwinfer_stream* stream, const hwinfer_silu_mul_desc* desc);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_ROWWISE_OPS_H_
