// gemm_half_bf16dot.cpp — bf16 weights in their own precision (AVX512_BF16): a is rounded to
// bf16 once per matmul (vcvtneps2bf16, round to nearest even), then vdpbf16ps multiplies 32
// bf16 pairs per step into 16 f32 lanes (lane l sums k = 2l, 2l + 1 mod 32; each product is exact
// in f32), in the register tiles of gemm_half_tiles_512.h: twice the multiplies of an f32 FMA per
// instruction and no widening of the weights. The driver runs these tiles at every m, so a row's
// sums do not depend on its batch.
//
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512bf16; reached only after
// use_avx512_bf16() said the CPU has them. Includes no header with inline functions but the
// intrinsics; everything but the table is local.
#include <immintrin.h>

#include <cstdint>

#include "gemm_half_kernels.h"
#include "gemm_half_tiles_512.h"

namespace hwinfer::cpu {

namespace {

struct Bf16PairStep {
  using A = uint16_t;
  using Weights = __m512bh;
  using Activations = __m512bh;
  static constexpr int64_t kWidth = 32;

  static __mmask32 mask(int64_t valid) { return static_cast<__mmask32>((1ull << valid) - 1u); }
  static __m512bh load(const uint16_t* p) {
    return reinterpret_cast<__m512bh>(_mm512_loadu_si512(p));
  }
  static __m512bh load(const uint16_t* p, int64_t valid) {
    return reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi16(mask(valid), p));
  }
  static __m512bh load_w(const uint16_t* p) { return load(p); }
  static __m512bh load_w(const uint16_t* p, int64_t valid) { return load(p, valid); }
  static __m512bh load_a(const uint16_t* p) { return load(p); }
  static __m512bh load_a(const uint16_t* p, int64_t valid) { return load(p, valid); }
  static __m512 madd(__m512 acc, __m512bh x, __m512bh w) { return _mm512_dpbf16_ps(acc, x, w); }
};

// out[0:n] = bf16(src[0:n]), rounded to nearest even (NaN stays NaN).
void to_bf16_avx512(const float* src, int64_t n, uint16_t* out) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), reinterpret_cast<__m256i>(h));
  }
  if (i < n) {
    const auto valid = static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(valid, src + i));
    _mm256_mask_storeu_epi16(out + i, valid, reinterpret_cast<__m256i>(h));
  }
}

void dot_tiles_bf16(const uint16_t* a, int64_t lda, int64_t m, const uint16_t* b, int64_t ldb,
                    int64_t rows, int64_t k, float* out) {
  dot_tiles_512<Bf16PairStep>(a, lda, m, b, ldb, rows, k, out);
}

}  // namespace

GemmHalfKernels gemm_half_kernels_avx512_bf16() {
  GemmHalfKernels kernels = gemm_half_kernels_avx512();
  kernels.to_bf16 = &to_bf16_avx512;
  kernels.dot_tiles_bf16 = &dot_tiles_bf16;
  return kernels;
}

}  // namespace hwinfer::cpu
