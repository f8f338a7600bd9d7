// reference_ops.h — scalar reference kernels for the per-token operations of a decoder layer
// (RMSNorm with the optional fused residual add, SiLU-mul): the oracle the conformance suite
// compares backends against.
//
// Plain loops accumulating in double, on dense row-major host arrays of float values. They must
// stay obviously correct (no threads, no SIMD, no blocking) and know nothing of the plugin ABI.
// An operand stored as F16 is modelled by rounding the values written to it to f16 (|*_f16|).
#ifndef HWINFER_BACKENDS_CPU_REFERENCE_REFERENCE_OPS_H_
#define HWINFER_BACKENDS_CPU_REFERENCE_REFERENCE_OPS_H_

#include <cstdint>

namespace hwinfer::reference {

// RMSNorm:
//   x, out: [n_tokens, dim];  residual: [n_tokens, dim] or NULL;  weight: [dim]
//   with residual: residual[t,:] += x[t,:] (rounded to f16 when residual_f16); h = residual[t,:]
//   otherwise h = x[t,:];  out[t,i] = h[i] / sqrt(mean(h^2) + eps) * weight[i]
// out is rounded to f16 when out_f16.
void rms_norm_reference(int64_t n_tokens, int64_t dim, float eps, const float* x, float* residual,
                        bool residual_f16, const float* weight, float* out, bool out_f16);

// SiLU-mul: out[i] = gate[i] / (1 + exp(-gate[i])) * up[i] over |count| values; out rounded to
// f16 when out_f16.
void silu_mul_reference(int64_t count, const float* gate, const float* up, float* out,
                        bool out_f16);

}  // namespace hwinfer::reference

#endif  // HWINFER_BACKENDS_CPU_REFERENCE_REFERENCE_OPS_H_
