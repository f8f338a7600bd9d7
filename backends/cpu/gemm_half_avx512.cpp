// gemm_half_avx512.cpp — the AVX-512 kernels of gemm_half_kernels.h: 16 f16 (vcvtph2ps) or bf16
// (a 16-bit shift) weights widened per step, register tiles of up to 4 rows of a by 6 weight rows
// (24 accumulators) in the 32 vector registers, the k tail through masked loads. Every output is
// one accumulator of 16 lanes (lane l sums k = l mod 16, then one fixed horizontal sum), whatever
// the tile it is in: a row of a gets bit-identical sums at every m, so a sequence's logits do not
// depend on its batch (the driver runs these tiles at every m, decode and prefill).
//
// Compiled with -mavx512f -mavx512bw -mavx512vl (and AVX2, FMA, F16C); reached only after
// use_avx512_vnni() said the CPU has them. Includes no header with inline functions but the
// intrinsics; everything but the table is local.
#include <immintrin.h>

#include <cstdint>

#include "gemm_half_kernels.h"

namespace hwinfer::cpu {

namespace {

// Software prefetch distance along a weight row (as gemm_half_avx2.cpp).
constexpr int64_t kPrefetchBytes = 4096;

// 16 f16 / bf16 values as f32 (exact).
template <bool kBf16>
inline __m512 widen16(__m256i h) {
  if constexpr (kBf16) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else {
    return _mm512_cvtph_ps(h);
  }
}

// 16 weights at |p| as f32; with |valid| (a mask), lanes past it read nothing and are 0.
template <bool kBf16>
inline __m512 load16(const uint16_t* p) {
  return widen16<kBf16>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
template <bool kBf16>
inline __m512 load16(const uint16_t* p, __mmask16 valid) {
  return widen16<kBf16>(_mm256_maskz_loadu_epi16(valid, p));
}

// out[r * RN + j] = a[r] . b_row j for an RM x RN tile, 16 values of k per step.
template <int RM, int RN, bool kBf16>
void tile_rm_rn(const float* a, int64_t lda, const uint16_t* b, int64_t ldb, int64_t k,
                float* out) {
  __m512 acc[RM][RN];
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  int64_t l = 0;
  for (; l + 16 <= k; l += 16) {
    __m512 w[RN];
    for (int j = 0; j < RN; ++j) {
      _mm_prefetch(reinterpret_cast<const char*>(b + j * ldb + l) + kPrefetchBytes, _MM_HINT_T0);
      w[j] = load16<kBf16>(b + j * ldb + l);
    }
    for (int r = 0; r < RM; ++r) {
      const __m512 x = _mm512_loadu_ps(a + r * lda + l);
      for (int j = 0; j < RN; ++j) acc[r][j] = _mm512_fmadd_ps(x, w[j], acc[r][j]);
    }
  }
  if (l < k) {  // the tail: masked lanes are 0 in x and w, so they add +0 to each lane
    const auto valid = static_cast<__mmask16>((1u << (k - l)) - 1u);
    __m512 w[RN];
    for (int j = 0; j < RN; ++j) w[j] = load16<kBf16>(b + j * ldb + l, valid);
    for (int r = 0; r < RM; ++r) {
      const __m512 x = _mm512_maskz_loadu_ps(valid, a + r * lda + l);
      for (int j = 0; j < RN; ++j) acc[r][j] = _mm512_fmadd_ps(x, w[j], acc[r][j]);
    }
  }
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) out[r * RN + j] = _mm512_reduce_add_ps(acc[r][j]);
  }
}

// The rows i .. i + RM of a against weight rows j .. j + RN, into out [m][rows].
template <int RM, int RN, bool kBf16>
void store_tile(const float* a, int64_t lda, const uint16_t* b_j, int64_t ldb, int64_t k,
                int64_t rows, int64_t i, int64_t j, float* out) {
  float tile[RM * RN];
  tile_rm_rn<RM, RN, kBf16>(a + i * lda, lda, b_j, ldb, k, tile);
  for (int r = 0; r < RM; ++r) {
    for (int c = 0; c < RN; ++c) out[(i + r) * rows + j + c] = tile[r * RN + c];
  }
}

// The last |left| (< R + 1) rows of a from row i, as one tile of exactly that many rows.
template <int R, int RN, bool kBf16>
void store_edge(const float* a, int64_t lda, const uint16_t* b_j, int64_t ldb, int64_t k,
                int64_t rows, int64_t left, int64_t i, int64_t j, float* out) {
  if constexpr (R > 0) {
    if (left == R) {
      store_tile<R, RN, kBf16>(a, lda, b_j, ldb, k, rows, i, j, out);
    } else {
      store_edge<R - 1, RN, kBf16>(a, lda, b_j, ldb, k, rows, left, i, j, out);
    }
  }
}

constexpr int kTileM = 4;  // rows of a per tile
constexpr int kTileN = 6;  // weight rows per tile

// Weight rows j .. j + RN against every row of a: kTileM rows at a time, then one smaller tile.
template <int RN, bool kBf16>
void column_block(const float* a, int64_t lda, int64_t m, const uint16_t* b_j, int64_t ldb,
                  int64_t k, int64_t rows, int64_t j, float* out) {
  int64_t i = 0;
  for (; i + kTileM <= m; i += kTileM) {
    store_tile<kTileM, RN, kBf16>(a, lda, b_j, ldb, k, rows, i, j, out);
  }
  store_edge<kTileM - 1, RN, kBf16>(a, lda, b_j, ldb, k, rows, m - i, i, j, out);
}

// out[i * rows + j] = a[i] . b_row j for i < m, j < rows: kTileM x kTileN tiles, smaller at the
// edges.
template <bool kBf16>
void dot_tiles(const float* a, int64_t lda, int64_t m, const uint16_t* b, int64_t ldb, int64_t rows,
               int64_t k, float* out) {
  int64_t j = 0;
  for (; j + kTileN <= rows; j += kTileN) {
    column_block<kTileN, kBf16>(a, lda, m, b + j * ldb, ldb, k, rows, j, out);
  }
  if (j + 4 <= rows) {
    column_block<4, kBf16>(a, lda, m, b + j * ldb, ldb, k, rows, j, out);
    j += 4;
  }
  for (; j < rows; ++j) column_block<1, kBf16>(a, lda, m, b + j * ldb, ldb, k, rows, j, out);
}

void dot_tiles_avx512(const float* a, int64_t lda, int64_t m, const uint16_t* b, int64_t ldb,
                      int64_t rows, int64_t k, bool bf16, float* out) {
  if (bf16) {
    dot_tiles<true>(a, lda, m, b, ldb, rows, k, out);
  } else {
    dot_tiles<false>(a, lda, m, b, ldb, rows, k, out);
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
