// matmul_quantized.h — the CPU backend's matmul with GGUF block-quantized weights:
//   y[m,n] = sum_k x[m,k] * dequant(w)[n,k]
//   x: [m, k] F32      w: [n, k] GGUF blocks of any type along k (k % block == 0)      y: [m, n]
//   F32
//
// Q8_0 and Q4_0, every m: x is quantized once per call to llama.cpp's 8-bit blocks (into the
// stream's scratch) and the weights are streamed through int8 dot products, the threads splitting
// n: one x row through the row kernels (decode), more in register tiles of x rows by weight rows
// (batched decode, prefill; matmul_quantized_tile_body.h), with the same sums per output either
// way, so a sequence's logits do not depend on its batch. The other types, m <= 64 (decode,
// batched decode): the same with the activation format llama.cpp pairs with the type (Q8_0,
// Q8_1 or Q8_K). Larger m: their panels are dequantized to f32 while they are packed for the
// f32 GEMM micro-kernel (gemm_f32_packed_b); x stays exact. Must not validate ABI views
// (kernels.cpp does), create threads, or read y.
#ifndef HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_H_
#define HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_H_

#include <cstdint>

#include "gemm_f32.h"
#include "scratch_buffer.h"
#include "thread_pool.h"

namespace hwinfer::cpu {

struct MatmulQuantizedProblem {
  int64_t m = 0, n = 0, k = 0;
  const float* x = nullptr;  // x[i,l] = x[i * x_row_stride + l * x_col_stride]  (elements)
  int64_t x_row_stride = 0, x_col_stride = 0;
  const uint8_t* w = nullptr;  // row j of blocks at w + j * w_row_bytes
  uint32_t w_dtype = 0;        // any block-quantized HWINFER_DTYPE_*
  int64_t w_row_bytes = 0;
  float* y = nullptr;  // y[i,j] = y[i * y_row_stride + j * y_col_stride]       (elements)
  int64_t y_row_stride = 0, y_col_stride = 0;
};

// The largest m at which the types other than Q8_0 / Q4_0 take the int8 path.
inline constexpr int64_t kMatmulQuantizedGemvMaxM = 64;

// Runs the matmul on |pool|. |scratch| is the calling stream's. m, n > 0, k > 0 and k a multiple
// of the weight type's block.
// Throws std::bad_alloc when scratch or packing buffers cannot be allocated.
void matmul_quantized(const MatmulQuantizedProblem& problem, ThreadPool& pool, GemmIsa isa,
                      ScratchBuffer& scratch);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_H_
