// reference_matmul.h — scalar references for the matmuls whose operands are not all f32: gemm
// with f16/bf16 operands, and the quantized matmul (every GGUF block type). The oracle of the
// conformance suite and of the CPU plugin's optimised kernels.
//
// Plain loops, every operand converted exactly to double, sums in double: obviously correct, not
// fast. Host pointers, element strides (weights: row strides in bytes), no knowledge of the ABI.
#ifndef HWINFER_SDK_REFERENCE_REFERENCE_MATMUL_H_
#define HWINFER_SDK_REFERENCE_REFERENCE_MATMUL_H_

#include <cstdint>

namespace hwinfer::reference {

// Element |index| of an F32, F16 or BF16 array (HWINFER_DTYPE_*), exactly as a double.
double load_real(const void* base, int64_t index, uint32_t dtype);
// Stores |value| rounded to |dtype| (F32, F16 or BF16; round to nearest even).
void store_real(void* base, int64_t index, uint32_t dtype, double value);

// c[m,n] = alpha * sum_k a[m,k] * B[k,n] + beta * c[m,n], every operand F32, F16 or BF16
// (|*_dtype|), the sum in double, the result rounded once to c's dtype.
//   a: [m, k], row stride |lda| elements            b: [k, n] (B[l,j] = b[l * ldb + j]), or
//   c: [m, n], row stride |ldc|                         [n, k] when |b_transposed| (b[j * ldb + l])
// beta == 0 makes c write-only (its old contents, even NaN, are ignored).
void gemm_reference(int64_t m, int64_t n, int64_t k, const void* a, uint32_t a_dtype, int64_t lda,
                    const void* b, uint32_t b_dtype, int64_t ldb, bool b_transposed, void* c,
                    uint32_t c_dtype, int64_t ldc, float alpha, float beta);

// The quantized matmul as plugin.h states it:  y[m,n] = sum_k x[m,k] * dequant(w)[n,k]
//   x: [m, k] F32, row stride |ldx| elements
//   w: [n, k] any block-quantized dtype (|w_dtype|) in GGUF blocks along k (k a multiple of the
//      block); row j starts at byte j * |w_row_bytes|
//   y: [m, n] F32, row stride |ldy|; write-only
// x in full precision times the dequantized w, summed in double.
void matmul_quantized_reference(int64_t m, int64_t n, int64_t k, const float* x, int64_t ldx,
                                const void* w, uint32_t w_dtype, int64_t w_row_bytes, float* y,
                                int64_t ldy);

// The same product with x first quantized the way llama.cpp (and the CPU plugin) do for |w_dtype|
// (weight_blocks.h: Q8_0, Q8_1 or Q8_K blocks), then summed in double: what an x-quantizing
// kernel should produce up to f32 rounding; a tighter oracle than the exact product for such
// kernels, and the one llama.cpp's logits follow.
// |binary16_scales| false keeps the Q8_0 / Q8_1 scales in f32 (quantize_activation_block).
void matmul_quantized_reference_q8_x(int64_t m, int64_t n, int64_t k, const float* x, int64_t ldx,
                                     const void* w, uint32_t w_dtype, int64_t w_row_bytes, float* y,
                                     int64_t ldy, bool binary16_scales = true);

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_REFERENCE_MATMUL_H_
