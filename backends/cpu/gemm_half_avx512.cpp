// gemm_half_avx512.cpp — the AVX-512 kernels of gemm_half_kernels.h: 16 f16 (vcvtph2ps) or bf16
// (a 16-bit shift) weights widened to f32 per step and multiplied into f32 rows of a, in the
// register tiles of gemm_half_tiles_512.h (lane l sums k = l mod 16), the k tail through masked
// loads. The driver runs these tiles at every m, decode and prefill.
//
// Compiled with -mavx512f -mavx512bw -mavx512vl (and AVX2, FMA, F16C); reached only after
// use_avx512_vnni() said the CPU has them. Includes no header with inline functions but the
// intrinsics; everything but the table is local.
#include <immintrin.h>

#include <cstdint>

#include "gemm_half_kernels.h"
#include "gemm_half_tiles_512.h"

namespace hwinfer::cpu {

namespace {

// One step: 16 f16 / bf16 weights widened to f32 (exact) against 16 f32 values of a row of a.
template <bool kBf16>
struct WidenedStep {
  using A = float;
  using Weights = __m512;
  using Activations = __m512;
  static constexpr int64_t kWidth = 16;

  static __m512 widen(__m256i h) {
    if constexpr (kBf16) {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    } else {
      return _mm512_cvtph_ps(h);
    }
  }
  static __mmask16 mask(int64_t valid) { return static_cast<__mmask16>((1u << valid) - 1u); }
  static __m512 load_w(const uint16_t* p) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 load_w(const uint16_t* p, int64_t valid) {
    return widen(_mm256_maskz_loadu_epi16(mask(valid), p));
  }
  static __m512 load_a(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 load_a(const float* p, int64_t valid) {
    return _mm512_maskz_loadu_ps(mask(valid), p);
  }
  static __m512 madd(__m512 acc, __m512 x, __m512 w) { return _mm512_fmadd_ps(x, w, acc); }
};

void dot_tiles_avx512(const float* a, int64_t lda, int64_t m, const uint16_t* b, int64_t ldb,
                      int64_t rows, int64_t k, bool bf16, float* out) {
  if (bf16) {
    dot_tiles_512<WidenedStep<true>>(a, lda, m, b, ldb, rows, k, out);
  } else {
    dot_tiles_512<WidenedStep<false>>(a, lda, m, b, ldb, rows, k, out);
  }
}

// dot_rows through the same tiles (one weight row): the sums equal dot_tiles' at any m.
void dot_rows_avx512(const float* a, int64_t lda, int64_t m, const uint16_t* b_row, int64_t k,
                     bool bf16, float* sums) {
  dot_tiles_avx512(a, lda, m, b_row, k, 1, k, bf16, sums);
}

}  // namespace

GemmHalfKernels gemm_half_kernels_avx512() {
  GemmHalfKernels kernels = gemm_half_kernels_avx2();
  kernels.dot_rows = &dot_rows_avx512;
  kernels.dot_tiles = &dot_tiles_avx512;
  kernels.tiles_at_every_m = true;
  return kernels;
}

}  // namespace hwinfer::cpu
