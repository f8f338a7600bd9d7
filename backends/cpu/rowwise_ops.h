// rowwise_ops.h — the CPU backend's per-token kernels: RMSNorm (optionally fused with the residual
// add) and SiLU-mul. Each enqueue slot validates its descriptor with the shared check of
// sdk/kit/kernel_checks.h (the one kernel_query answers with); kernels.cpp puts them in
// the kernel table.
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

hwinfer_error* enqueue_rms_norm(hwinfer_stream* stream, const hwinfer_rms_norm_desc* desc);

hwinfer_error* enqueue_silu_mul(hwinfer_stream* stream, const hwinfer_silu_mul_desc* desc);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_ROWWISE_OPS_H_
