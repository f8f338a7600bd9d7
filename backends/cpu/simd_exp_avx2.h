// simd_exp_avx2.h — exp(x) for eight non-positive floats with AVX2/FMA, shared by the AVX2 builds
// of the attention kernels (attention_decode_avx2.cpp through attention_decode_body.h, and
// attention_prefill_avx2.cpp). Include it only from those translation units, and call it only
// after cpu_can_use_avx2_kernels() said yes: the function carries a target attribute (not
// whole-file -mavx2) and is static, so it is emitted only in the files that call it, never into
// portable code.
#ifndef HWINFER_BACKENDS_CPU_SIMD_EXP_AVX2_H_
#define HWINFER_BACKENDS_CPU_SIMD_EXP_AVX2_H_

#include <immintrin.h>

namespace hwinfer::cpu {

// exp(x) for x <= 0 (or -inf), per lane: Cephes-style range reduction x = n ln2 + r with
// |r| <= ln2 / 2 (ln2 split in two for the reduction), a degree-7 polynomial for e^r (max relative
// error ~1.2e-7 over [-87, 0]) and 2^n through the exponent bits. Exactly 0 below -87, for -inf
// (masked keys, padding lanes) and for NaN; exp(0) = 1 exactly. Positive inputs are not handled.
__attribute__((target("avx2,fma"))) static inline __m256 exp_nonpositive_avx2(__m256 x) {
  const __m256 lowest = _mm256_set1_ps(-87.0f);
  const __m256 keep = _mm256_cmp_ps(x, lowest, _CMP_GE_OQ);
  x = _mm256_max_ps(x, lowest);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  const __m256 pow2n = _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23));
  return _mm256_and_ps(_mm256_mul_ps(y, pow2n), keep);
}

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_SIMD_EXP_AVX2_H_
