// avx2_sums.h — horizontal sums of AVX2 vectors, shared by the kernels compiled with -mavx2
// (gemm_half_avx2.cpp, matmul_quantized_avx2.cpp, weight_formats_avx2.cpp). Include it only from
// such files: the functions have internal linkage, so no AVX2 copy can stand in for a portable one.
#ifndef HWINFER_BACKENDS_CPU_AVX2_SUMS_H_
#define HWINFER_BACKENDS_CPU_AVX2_SUMS_H_

#include <immintrin.h>

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

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_AVX2_SUMS_H_
