// avx2_sums.h — horizontal sums of AVX2 vectors, shared by the kernels compiled with -mavx2
// (gemm_half_avx2.cpp, matmul_quantized_avx2.cpp, weight_formats_avx2.cpp). Include it only from
// such files: the functions have internal linkage, so no AVX2 copy can stand in for a portable one.
#ifndef HWINFER_BACKENDS_CPU_AVX2_SUMS_H_
#define HWINFER_BACKENDS_CPU_AVX2_SUMS_H_

#include <immintrin.h>

#include <cstdint>

namespace hwinfer::cpu {

// The sum of the 4 floats of |v|.
static inline float horizontal_sum(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

// The sum of the 8 floats of |v|.
static inline float horizontal_sum(__m256 v) {
  return horizontal_sum(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

// The sum of the 8 int32 of |v| (wrapping).
static inline int32_t horizontal_sum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_AVX2_SUMS_H_
