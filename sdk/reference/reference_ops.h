// reference_ops.h — scalar reference kernels for the per-token operations of a decoder layer
// (RMSNorm with the optional fused residual add, SiLU-mul, RoPE, embedding lookup, argmax): the
// oracle the conformance suite compares backends against.
//
// Plain loops accumulating in double, on dense row-major host arrays of float values. They must
// stay obviously correct (no threads, no SIMD, no blocking) and know nothing of the plugin ABI.
// An operand stored as F16 is modelled by rounding the values written to it to f16 (|*_f16|).
#ifndef HWINFER_SDK_REFERENCE_REFERENCE_OPS_H_
#define HWINFER_SDK_REFERENCE_REFERENCE_OPS_H_

#include <cstdint>

namespace hwinfer::reference {

// RMSNorm:
//   x, out: [n_tokens, dim];  residual: [n_tokens, dim] or NULL;  weight: [dim]
//   with residual: residual[t,:] += x[t,:] (rounded to f16 when residual_f16); h = residual[t,:]
//   otherwise h = x[t,:];  out[t,i] = h[i] / sqrt(mean(h^2) + eps) * weight[i]
// out is rounded to f16 when out_f16.
void rms_norm_reference(int64_t n_tokens, int64_t dim, float eps, const float* x, float* residual,
                        bool residual_f16, const float* weight, float* out, bool out_f16);

// Argmax: ids[r] = the smallest index of the largest value of x[r, :], NaN never chosen (0 for a
// row of NaN only).  x: [n_rows, n_cols] dense;  ids: [n_rows]
void argmax_reference(int64_t n_rows, int64_t n_cols, const float* x, int32_t* ids);

// SiLU-mul: out[i] = gate[i] / (1 + exp(-gate[i])) * up[i] over |count| values; out rounded to
// f16 when out_f16.
void silu_mul_reference(int64_t count, const float* gate, const float* up, float* out,
                        bool out_f16);

// RoPE pairing: NORMAL rotates (2i, 2i+1) (Llama/GGUF), NEOX rotates (i, i + rotary_dim/2)
// (GPT-NeoX/Qwen), for i < rotary_dim/2.
enum class RopeMode { kNormal, kNeox };

// Rotates one head in place by |position|: angle_i = position * theta_base^(-2i / rotary_dim);
// (a, b) -> (a cos - b sin, a sin + b cos) for each pair; dimensions past rotary_dim untouched.
//   head: [head_dim] (rotary_dim even, <= head_dim)
// The one rope of the references: reference_llama uses it too.
void rope_head_reference(double* head, int64_t rotary_dim, int64_t position, double theta_base,
                         RopeMode mode);

// RoPE, in place, on every head of every token:
//   x: [n_tokens, n_heads, head_dim] dense;  positions: [n_tokens]
// The rotated values are rounded to f16 when x_f16 (the operand is stored as F16); the tail past
// rotary_dim is left as it is.
void rope_reference(int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t rotary_dim,
                    double theta_base, RopeMode mode, const int32_t* positions, float* x,
                    bool x_f16);

// One row of |dim| values stored as |dtype| (HWINFER_DTYPE_*: F32, F16, BF16 or block-quantized)
// at |row| -> out[dim]. F16/BF16 are raw bits; block types are GGUF blocks (plugin.h's layouts;
// dim a multiple of the block, weight_blocks.h), read byte by byte so |row| needs no alignment.
void dequantize_row_reference(uint32_t dtype, const uint8_t* row, int64_t dim, float* out);

// Embedding lookup: out[t, :] = dequant(table[ids[t], :]).
//   table: [vocab, dim] rows |row_stride_bytes| apart;  ids: [n_tokens];  out: [n_tokens, dim]
// Returns false (writing nothing) when an id is outside [0, vocab).
bool embedding_reference(int64_t n_tokens, int64_t vocab, int64_t dim, uint32_t dtype,
                         const uint8_t* table, int64_t row_stride_bytes, const int32_t* ids,
                         float* out);

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_REFERENCE_OPS_H_
