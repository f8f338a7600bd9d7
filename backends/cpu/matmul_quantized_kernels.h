// matmul_quantized_kernels.h — the per-instruction-set inner loops of matmul_quantized: quantizing
// x to 8-bit blocks, int8 dot products of those blocks with Q8_0 / Q4_0 weight rows, and
// dequantizing weight blocks to f32 (for packing the prefill GEMM).
//
// The AVX2 set lives in matmul_quantized_avx2.cpp (-mavx2 -mfma -mf16c) and may be called only
// when detect_gemm_isa() returned kAvx2Fma; the portable set (matmul_quantized.cpp) runs anywhere.
// Both quantize x bit-exactly like reference::quantize_block_q8_f32_scale. They must not allocate.
#ifndef HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_KERNELS_H_
#define HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_KERNELS_H_

#include <cstdint>

namespace hwinfer::cpu {

// 32 values of x: value t = d * q[t]. The scale stays f32 (llama.cpp rounds it to f16; keeping it
// exact costs nothing here since the blocks never leave the call).
struct XBlockQ8 {
  float d;
  int8_t q[32];
};

struct MatmulQuantizedKernels {
  // out[b] = x[32 b : 32 b + 32] quantized, for b < blocks; x contiguous.
  void (*quantize_x)(const float* x, int64_t blocks, XBlockQ8* out) = nullptr;
  // sums[i] = sum_b dot(xq[i * x_stride + b], w_row block b) for i < m (any m >= 1), b < blocks;
  // one function per weight format (w_row: |blocks| packed GGUF blocks).
  void (*dot_q8_0)(const XBlockQ8* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                   int64_t blocks, float* sums) = nullptr;
  void (*dot_q4_0)(const XBlockQ8* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                   int64_t blocks, float* sums) = nullptr;
  // out[0 : 32 * blocks] = dequant(w_row blocks), exactly.
  void (*dequantize_q8_0)(const uint8_t* w_row, int64_t blocks, float* out) = nullptr;
  void (*dequantize_q4_0)(const uint8_t* w_row, int64_t blocks, float* out) = nullptr;
};

MatmulQuantizedKernels matmul_quantized_kernels_portable();
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
MatmulQuantizedKernels matmul_quantized_kernels_avx2();
#endif

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_KERNELS_H_
