// gemm_half.h — the CPU backend's GEMM when an operand is F16 or BF16:
//   c[m,n] = alpha * sum_k a[m,k] * B[k,n] + beta * c[m,n]
//   a: [m, k]  F32 | F16 | BF16        B: [k, n] F32 | F16 | BF16 (b: [n, k] weights transposed)
//   c: [m, n]  F32 | F16 | BF16
// The case the executor runs, a and c F32 with F16/BF16 weights, is direct: small m (decode)
// streams each weight row once through a half -> f32 dot kernel (AVX-512: register tiles at
// every m); otherwise larger m converts B while packing it for the f32 micro-kernel
// (gemm_f32_packed_b). Where the CPU has AVX512_BF16, BF16 weights instead run against a rounded
// to bf16 (bf16 pair dot products, at every m). Half a or c go through f32 copies.
// Accumulation is f32. Must not validate ABI views (kernels.cpp does), create threads, or read c
// when beta == 0.
#ifndef HWINFER_BACKENDS_CPU_GEMM_HALF_H_
#define HWINFER_BACKENDS_CPU_GEMM_HALF_H_

#include <cstdint>

#include "gemm_f32.h"
#include "scratch_buffer.h"
#include "thread_pool.h"

namespace hwinfer::cpu {

// Strides in ELEMENTS of the operand's own dtype (HWINFER_DTYPE_F32, _F16 or _BF16).
struct GemmHalfProblem {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;  // a[i,l] at a_row_stride * i + a_col_stride * l        [m, k]
  uint32_t a_dtype = 0;
  int64_t a_row_stride = 0, a_col_stride = 0;
  const void* b = nullptr;  // B[l,j] at b_row_stride * l + b_col_stride * j        [k, n]
  uint32_t b_dtype = 0;
  int64_t b_row_stride = 0, b_col_stride = 0;
  void* c = nullptr;  // c[i,j] at c_row_stride * i + c_col_stride * j                [m, n]
  uint32_t c_dtype = 0;
  int64_t c_row_stride = 0, c_col_stride = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
};

// Runs the GEMM on |pool|. |scratch| is the calling stream's (see scratch_buffer.h). m, n, k > 0.
// Throws std::bad_alloc when a conversion or packing buffer cannot be allocated.
void gemm_half(const GemmHalfProblem& problem, ThreadPool& pool, GemmIsa isa,
               ScratchBuffer& scratch);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_GEMM_HALF_H_
