// weight_formats.h — the CPU backend's portable kernels for the GGUF weight types after Q8_0 and
// Q4_0 (Q4_1, Q5_0, Q5_1, IQ4_NL and the K-quants Q2_K .. Q6_K): unpacking a block to integers,
// dequantizing rows, quantizing x to llama.cpp's Q8_K, and the integer dot products of the
// decode path.
//
// Every block is first unpacked to int8 values with one scale and one min per sub-block; the dot
// products then follow llama.cpp's arithmetic (int32 sums per sub-block, scaled in f32) with x in
// the activation format llama.cpp pairs with the type, so logits agree with its to f32 rounding.
// Blocks are read byte by byte (no alignment). Must not allocate.
#ifndef HWINFER_BACKENDS_CPU_WEIGHT_FORMATS_H_
#define HWINFER_BACKENDS_CPU_WEIGHT_FORMATS_H_

#include <cstdint>

#include "gemm_f32.h"
#include "matmul_quantized_kernels.h"

namespace hwinfer::cpu {

// 256 values of x as llama.cpp's Q8_K: value t = d * q[t], d = -max / 127 (the signed value of
// largest magnitude), q rounded half to even; bsums[s] = sum of q[16 s .. 16 s + 15].
struct XBlockQ8K {
  float d;
  int8_t q[256];
  int16_t bsums[16];
};
// out[b] = x[256 b : 256 b + 256] quantized, for b < blocks; x contiguous.
void quantize_x_q8_k(const float* x, int64_t blocks, XBlockQ8K* out);

// One weight block as integers: value t = scale[t / sub_values] * q[t] - min[t / sub_values].
struct UnpackedWeights {
  int8_t q[256];
  float scale[16];
  float min[16];  // all 0 for the types without a min
};

struct WeightFormat {
  uint32_t dtype;
  int64_t block_values;  // 32 or 256
  int64_t block_bytes;
  int64_t sub_values;  // values sharing one scale: 16 or 32
  bool x_q8_k;         // x as XBlockQ8K; else as XBlockQ8 (with s for the types with a min)
  void (*unpack)(const uint8_t* block, UnpackedWeights* out);
};

// The format of |dtype|, or nullptr for Q8_0, Q4_0 (matmul_quantized_kernels.h has theirs) and
// every non-block dtype.
const WeightFormat* weight_format(uint32_t dtype);

// sums[i] = sum_b dot(x_i block b, w_row block b) for i < m; x_i's blocks start at
// xq + i * x_stride (XBlockQ8K or XBlockQ8 units, by the type's format.x_q8_k); |blocks| weight
// blocks.
using WeightDotFn = void (*)(const void* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                             int64_t blocks, float* sums);
// out[0 : block_values * blocks] = dequant(w_row blocks).
using WeightDequantizeFn = void (*)(const uint8_t* w_row, int64_t blocks, float* out);

// The kernels |dtype| (a type weight_format knows) runs with on |isa|: the AVX2/FMA/F16C ones
// (weight_formats_avx2.cpp) where the build has them and |isa| is kAvx2Fma, else the portable.
// On kAvx2Fma, the dot products of the K-quants are the AVX-512 VNNI ones
// (weight_formats_avx512.cpp) where the build and the CPU have them, unless the environment sets
// HWINFER_CPU_AVX512=0 (to measure one against the other).
WeightDotFn weight_dot(uint32_t dtype, GemmIsa isa);
WeightDequantizeFn weight_dequantize(uint32_t dtype, GemmIsa isa);

#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
// The AVX2 kernels of |dtype|, nullptr where it has none (weight_dot / weight_dequantize choose).
WeightDotFn weight_dot_avx2(uint32_t dtype);
WeightDequantizeFn weight_dequantize_avx2(uint32_t dtype);
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
// The AVX-512 VNNI dot products of |dtype|, nullptr where it has none; and whether this CPU runs
// them (AVX-512 F, BW, VL and VNNI) and HWINFER_CPU_AVX512 is not "0".
WeightDotFn weight_dot_avx512(uint32_t dtype);
bool use_avx512_vnni();
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_BF16_KERNEL)
// use_avx512_vnni() and the CPU has AVX512_BF16 (vcvtneps2bf16, vdpbf16ps).
bool use_avx512_bf16();
#endif

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_WEIGHT_FORMATS_H_
