// matmul_quantized_kernels.h — the per-instruction-set inner loops of matmul_quantized: quantizing
// x to 8-bit blocks, int8 dot products of those blocks with Q8_0 / Q4_0 weight rows, and
// dequantizing weight blocks to f32 (for packing the prefill GEMM).
//
// The AVX2 set lives in matmul_quantized_avx2.cpp (-mavx2 -mfma -mf16c) and may be called only
// when detect_gemm_isa() returned kAvx2Fma; the portable set (matmul_quantized.cpp) runs anywhere.
// Both quantize x bit-exactly like reference::quantize_activation_block. They must not allocate.
#ifndef HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_KERNELS_H_
#define HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_KERNELS_H_

#include <cstdint>

namespace hwinfer::cpu {

// 32 values of x as llama.cpp's Q8_0 / Q8_1: value t = d * q[t], q = round(x / (max|x| / 127))
// half away from zero, d that scale rounded to binary16 (as llama.cpp stores it), s = the
// unrounded scale times sum(q), rounded to binary16 (Q8_1's, for the weight types with a min).
struct XBlockQ8 {
  float d;
  float s;
  int8_t q[32];
};

// Four consecutive x blocks 4p + s (s = 0..3) laid out for Q4_0 weights, whose qs bytes hold
// values t (low nibble) and t + 16 (high nibble): block s's values 0..15 are lo[16 s : 16 s + 16]
// and 16..31 are hi[16 s : 16 s + 16], so that weight blocks' qs side by side in one vector line
// up with |lo| by their low nibbles and with |hi| by their high nibbles. The 256-bit kernels read
// one half of the quad (a pair of blocks: s = 0, 1 or 2, 3), the 512-bit ones all of it. The
// unsigned nibbles (w + 8) are multiplied as they are; |correction| (-2 S per lane, S the sum of
// the block's q, so -8 S over the block's 4 lanes) removes the +8 exactly in int32. Blocks past
// the row's last are all zero.
struct alignas(64) XQuadQ4 {
  int8_t lo[64];           // block s: q[0:16] at 16 s
  int8_t hi[64];           // block s: q[16:32] at 16 s
  float d[16];             // block s: d x 4 at 4 s
  int32_t correction[16];  // block s: -2 S x 4 at 4 s
};
// |count| quantized blocks -> (count + 3) / 4 quads.
void make_x_quads_q4(const XBlockQ8* blocks, int64_t count, XQuadQ4* out);

// y[i, j] = sum over the row's blocks of dot(x row i, weight row j) for i < m, j < rows: x rows of
// XBlockQ8 (Q8_0) or XQuadQ4 (Q4_0) at xq + i * x_stride (in those units); weight row j at
// w + j * w_row_bytes with |blocks| GGUF blocks; y[i * y_row_stride + j * y_col_stride].
struct QuantizedTileArgs {
  const void* xq = nullptr;
  int64_t x_stride = 0, m = 0;
  const uint8_t* w = nullptr;
  int64_t w_row_bytes = 0, rows = 0, blocks = 0;
  float* y = nullptr;
  int64_t y_row_stride = 0, y_col_stride = 0;
};

struct MatmulQuantizedKernels {
  // out[b] = x[32 b : 32 b + 32] quantized, for b < blocks; x contiguous.
  void (*quantize_x)(const float* x, int64_t blocks, XBlockQ8* out) = nullptr;
  // sums[i] = sum_b dot(xq[i * x_stride + b], w_row block b) for i < m (any m >= 1), b < blocks;
  // one function per weight format (w_row: |blocks| packed GGUF blocks).
  void (*dot_q8_0)(const XBlockQ8* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                   int64_t blocks, float* sums) = nullptr;
  // Q4_0 takes x as quads (x_stride in quads; |blocks| is still the weight row's block count).
  void (*dot_q4_0)(const XQuadQ4* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                   int64_t blocks, float* sums) = nullptr;
  // The same sums as dot_q8_0 / dot_q4_0, bit for bit, over a block of weight rows at once
  // (register tiles of x rows by weight rows): for many rows of x.
  void (*tiles_q8_0)(const QuantizedTileArgs& args) = nullptr;
  void (*tiles_q4_0)(const QuantizedTileArgs& args) = nullptr;
  // out[0 : 32 * blocks] = dequant(w_row blocks), exactly.
  void (*dequantize_q8_0)(const uint8_t* w_row, int64_t blocks, float* out) = nullptr;
  void (*dequantize_q4_0)(const uint8_t* w_row, int64_t blocks, float* out) = nullptr;
};

MatmulQuantizedKernels matmul_quantized_kernels_portable();
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
MatmulQuantizedKernels matmul_quantized_kernels_avx2();
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
// The AVX2 set with its dot products and tiles on 512-bit AVX-512 VNNI (matmul_quantized_vnni.cpp);
// only where use_avx512_vnni() (weight_formats.h) said yes.
MatmulQuantizedKernels matmul_quantized_kernels_vnni();
#endif

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_KERNELS_H_
