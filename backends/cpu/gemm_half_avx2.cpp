// gemm_half_avx2.cpp — the AVX2 kernels of gemm_half_kernels.h: F16C for f16, a 16-bit shift for
// bf16, FMA dot products over 1..4 rows of a at a time sharing each converted weight vector.
//
// Built with -mavx2 -mfma -mf16c (see CMakeLists.txt): reach it only after detect_gemm_isa() said
// kAvx2Fma. Includes no header with inline functions but the intrinsics and internal-linkage ones
// (an AVX2 copy of an inline function could replace the portable one at link time); everything
// but the table is local.
#include <immintrin.h>

#include <cstdint>

#include "avx2_sums.h"
#include "gemm_half_kernels.h"
#include "tile_prefetch.h"

namespace hwinfer::cpu {

namespace {

template <bool kBf16>
inline __m256 load8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (kBf16) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    return _mm256_cvtph_ps(h);
  }
}

template <bool kBf16>
inline float load1(const uint16_t* p) {
  if constexpr (kBf16) {
    const uint32_t bits = static_cast<uint32_t>(*p) << 16;
    float value;
    __builtin_memcpy(&value, &bits, sizeof(value));
    return value;
  } else {
    return _cvtsh_ss(*p);
  }
}

template <bool kBf16>
void to_f32(const uint16_t* src, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, load8<kBf16>(src + i));
  for (; i < n; ++i) out[i] = load1<kBf16>(src + i);
}

// sums[r] = a[r] . b_row for R rows of a: each 32 weights converted once, used R times, into
// four accumulators per row so the FMA latency chains overlap.
template <int R, bool kBf16>
void dot_rows_r(const float* a, int64_t lda, const uint16_t* b_row, int64_t k, float* sums) {
  __m256 acc[R][4];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  int64_t l = 0;
  for (; l + 32 <= k; l += 32) {
    read_ahead(b_row + l);
    __m256 b[4];
    for (int v = 0; v < 4; ++v) b[v] = load8<kBf16>(b_row + l + 8 * v);
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < 4; ++v) {
        acc[r][v] = _mm256_fmadd_ps(_mm256_loadu_ps(a + r * lda + l + 8 * v), b[v], acc[r][v]);
      }
    }
  }
  for (; l + 8 <= k; l += 8) {
    const __m256 b = load8<kBf16>(b_row + l);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + r * lda + l), b, acc[r][0]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m256 sum4 =
        _mm256_add_ps(_mm256_add_ps(acc[r][0], acc[r][1]), _mm256_add_ps(acc[r][2], acc[r][3]));
    float sum = horizontal_sum(sum4);
    for (int64_t t = l; t < k; ++t) sum += a[r * lda + t] * load1<kBf16>(b_row + t);
    sums[r] = sum;
  }
}

template <bool kBf16>
void dot_rows(const float* a, int64_t lda, int64_t m, const uint16_t* b_row, int64_t k,
              float* sums) {
  for (int64_t i = 0; i < m; i += 4) {
    const float* a_i = a + i * lda;
    switch (m - i) {
      case 1:
        dot_rows_r<1, kBf16>(a_i, lda, b_row, k, sums + i);
        break;
      case 2:
        dot_rows_r<2, kBf16>(a_i, lda, b_row, k, sums + i);
        break;
      case 3:
        dot_rows_r<3, kBf16>(a_i, lda, b_row, k, sums + i);
        break;
      default:
        dot_rows_r<4, kBf16>(a_i, lda, b_row, k, sums + i);
        break;
    }
  }
}

// out[r * RN + j] = a[r] . b_row j for an RM x RN tile: 8 values of k per step, each converted
// weight vector used RM times and each x vector RN times, one accumulator per output.
template <int RM, int RN, bool kBf16>
void tile_rm_rn(const float* a, int64_t lda, const uint16_t* b, int64_t ldb, int64_t k,
                float* out) {
  __m256 acc[RM][RN];
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) acc[r][j] = _mm256_setzero_ps();
  }
  int64_t l = 0;
  for (; l + 8 <= k; l += 8) {
    __m256 w[RN];
    for (int j = 0; j < RN; ++j) w[j] = load8<kBf16>(b + j * ldb + l);
    for (int r = 0; r < RM; ++r) {
      const __m256 x = _mm256_loadu_ps(a + r * lda + l);
      for (int j = 0; j < RN; ++j) acc[r][j] = _mm256_fmadd_ps(x, w[j], acc[r][j]);
    }
  }
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) {
      float sum = horizontal_sum(acc[r][j]);
      for (int64_t t = l; t < k; ++t) sum += a[r * lda + t] * load1<kBf16>(b + j * ldb + t);
      out[r * RN + j] = sum;
    }
  }
}

// out[i * rows + j] = a[i] . b_row j for i < m, j < rows: 4 x 2 register tiles, smaller at the
// edges.
template <bool kBf16>
void dot_tiles(const float* a, int64_t lda, int64_t m, const uint16_t* b, int64_t ldb, int64_t rows,
               int64_t k, float* out) {
  constexpr int RM = 4, RN = 2;
  for (int64_t j = 0; j < rows; j += RN) {
    const uint16_t* b_j = b + j * ldb;
    for (int64_t i = 0; i < m; i += RM) {
      const float* a_i = a + i * lda;
      float tile[RM * RN];
      const bool full_n = j + RN <= rows;
      const int64_t rows_m = m - i < RM ? m - i : RM;
      if (rows_m == RM && full_n) {
        tile_rm_rn<RM, RN, kBf16>(a_i, lda, b_j, ldb, k, tile);
        for (int r = 0; r < RM; ++r) {
          for (int c = 0; c < RN; ++c) out[(i + r) * rows + j + c] = tile[r * RN + c];
        }
        continue;
      }
      for (int64_t r = 0; r < rows_m; ++r) {  // edges: one row of a at a time
        if (full_n) {
          tile_rm_rn<1, RN, kBf16>(a_i + r * lda, lda, b_j, ldb, k, tile);
          for (int c = 0; c < RN; ++c) out[(i + r) * rows + j + c] = tile[c];
        } else {
          tile_rm_rn<1, 1, kBf16>(a_i + r * lda, lda, b_j, ldb, k, tile);
          out[(i + r) * rows + j] = tile[0];
        }
      }
    }
  }
}

void dot_tiles_avx2(const float* a, int64_t lda, int64_t m, const uint16_t* b, int64_t ldb,
                    int64_t rows, int64_t k, bool bf16, float* out) {
  if (bf16) {
    dot_tiles<true>(a, lda, m, b, ldb, rows, k, out);
  } else {
    dot_tiles<false>(a, lda, m, b, ldb, rows, k, out);
  }
}

void to_f32_avx2(const uint16_t* src, int64_t n, bool bf16, float* out) {
  if (bf16) {
    to_f32<true>(src, n, out);
  } else {
    to_f32<false>(src, n, out);
  }
}

void dot_rows_avx2(const float* a, int64_t lda, int64_t m, const uint16_t* b_row, int64_t k,
                   bool bf16, float* sums) {
  if (bf16) {
    dot_rows<true>(a, lda, m, b_row, k, sums);
  } else {
    dot_rows<false>(a, lda, m, b_row, k, sums);
  }
}

}  // namespace

GemmHalfKernels gemm_half_kernels_avx2() { return {&to_f32_avx2, &dot_rows_avx2, &dot_tiles_avx2}; }

}  // namespace hwinfer::cpu
