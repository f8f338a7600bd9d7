// gemm_half_tiles_512.h — the AVX-512 register tiles of gemm_half's dot_tiles, written once for
// two kinds of step: f32 FMAs on weights widened to f32 (gemm_half_avx512.cpp) and bf16 pair dot
// products on bf16 a and weights (gemm_half_bf16dot.cpp). Include it only from a file built with
// at least -mavx512f -mavx512bw -mavx512vl; everything here has internal linkage.
//
// A tile is RM rows of a by RN weight rows, up to 4 x 6 (24 accumulators in the 32 vector
// registers); each weight vector is loaded once per tile and each a vector once per RN weight
// rows. Every output is one accumulator of 16 f32 lanes (lane l sums the step's elements that
// land in it, in k order), then one fixed horizontal sum, whatever the tile it is in: a row of a
// gets bit-identical sums at every m, so a sequence's logits do not depend on its batch.
// Memory and multiplies overlap: the first tile of a column block reads its weights from memory,
// the later ones (m > 4) find them in L1 and prefetch the next block's meanwhile.
//
// A Step provides: `A` (a's element type), `kWidth` (k per step), `Weights`/`Activations` (the
// vector types), `load_w(p)`, `load_w(p, valid)`, `load_a(p)`, `load_a(p, valid)` (the masked
// loads read only |valid| < kWidth elements and give 0 past them) and `madd(acc, a, w)`.
#ifndef HWINFER_BACKENDS_CPU_GEMM_HALF_TILES_512_H_
#define HWINFER_BACKENDS_CPU_GEMM_HALF_TILES_512_H_

#include <immintrin.h>

#include <cstdint>

#include "tile_prefetch.h"

namespace hwinfer::cpu {
namespace {

constexpr int kTileM = 4;  // rows of a per tile
constexpr int kTileN = 6;  // weight rows per tile

// out[r * RN + j] = a[r] . b_row j for an RM x RN tile, Step::kWidth values of k per step.
template <class Step, int RM, int RN>
void tile_rm_rn(const typename Step::A* a, int64_t lda, const uint16_t* b, int64_t ldb, int64_t k,
                TilePrefetch ahead, float* out) {
  __m512 acc[RM][RN];
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  PrefetchSpreader spread(ahead, k / Step::kWidth);
  int64_t l = 0;
  for (; l + Step::kWidth <= k; l += Step::kWidth) {
    typename Step::Weights w[RN];
    if (spread.active()) {
      spread.step();
    } else {
      for (int j = 0; j < RN; ++j) read_ahead(b + j * ldb + l);
    }
    for (int j = 0; j < RN; ++j) w[j] = Step::load_w(b + j * ldb + l);
    for (int r = 0; r < RM; ++r) {
      const typename Step::Activations x = Step::load_a(a + r * lda + l);
      for (int j = 0; j < RN; ++j) acc[r][j] = Step::madd(acc[r][j], x, w[j]);
    }
  }
  if (l < k) {  // the tail: masked lanes are 0 in a and w, so they add +0 to each lane
    const int64_t valid = k - l;
    typename Step::Weights w[RN];
    for (int j = 0; j < RN; ++j) w[j] = Step::load_w(b + j * ldb + l, valid);
    for (int r = 0; r < RM; ++r) {
      const typename Step::Activations x = Step::load_a(a + r * lda + l, valid);
      for (int j = 0; j < RN; ++j) acc[r][j] = Step::madd(acc[r][j], x, w[j]);
    }
  }
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) out[r * RN + j] = _mm512_reduce_add_ps(acc[r][j]);
  }
}

// Where a tile's outputs go: rows i.. of a against weight rows j.., into out [m][rows].
template <class Step>
struct TileTarget {
  const typename Step::A* a;
  int64_t lda;
  const uint16_t* b_j;  // weight row j
  int64_t ldb, k, rows;
  float* out;
};

template <class Step, int RM, int RN>
void store_tile(const TileTarget<Step>& t, int64_t i, int64_t j, TilePrefetch ahead) {
  float tile[RM * RN];
  tile_rm_rn<Step, RM, RN>(t.a + i * t.lda, t.lda, t.b_j, t.ldb, t.k, ahead, tile);
  for (int r = 0; r < RM; ++r) {
    for (int c = 0; c < RN; ++c) t.out[(i + r) * t.rows + j + c] = tile[r * RN + c];
  }
}

// The last |left| (< R + 1) rows of a from row i, as one tile of exactly that many rows.
template <class Step, int R, int RN>
void store_edge(const TileTarget<Step>& t, int64_t left, int64_t i, int64_t j, TilePrefetch ahead) {
  if constexpr (R > 0) {
    if (left == R) {
      store_tile<Step, R, RN>(t, i, j, ahead);
    } else {
      store_edge<Step, R - 1, RN>(t, left, i, j, ahead);
    }
  }
}

// Weight rows j .. j + RN against every row of a: kTileM rows at a time, then one smaller tile.
// The first tile reads the weights from memory (reading ahead along them); the others find them
// in L1 and meanwhile prefetch the next RN weight rows, so that memory works while they compute.
template <class Step, int RN>
void column_block(const TileTarget<Step>& t, int64_t m, int64_t j) {
  const int64_t tiles = (m + kTileM - 1) / kTileM;
  const int64_t next_bytes = RN * t.ldb * static_cast<int64_t>(sizeof(uint16_t));
  auto ahead = [&](int64_t tile) {
    return later_tile_prefetch(t.b_j + RN * t.ldb, next_bytes, tile, tiles);
  };
  int64_t i = 0;
  for (; i + kTileM <= m; i += kTileM) store_tile<Step, kTileM, RN>(t, i, j, ahead(i / kTileM));
  store_edge<Step, kTileM - 1, RN>(t, m - i, i, j, ahead(i / kTileM));
}

// The last |left| (< RN + 1) weight rows from row j, as one column block of exactly that many.
template <class Step, int RN>
void column_edge(const TileTarget<Step>& t, int64_t m, int64_t left, int64_t j) {
  if constexpr (RN > 0) {
    if (left == RN) {
      column_block<Step, RN>(t, m, j);
    } else {
      column_edge<Step, RN - 1>(t, m, left, j);
    }
  }
}

// out[i * rows + j] = a[i] . b_row j for i < m, j < rows: kTileM x kTileN tiles, smaller at the
// edges.
template <class Step>
void dot_tiles_512(const typename Step::A* a, int64_t lda, int64_t m, const uint16_t* b,
                   int64_t ldb, int64_t rows, int64_t k, float* out) {
  TileTarget<Step> t{a, lda, b, ldb, k, rows, out};
  int64_t j = 0;
  for (; j + kTileN <= rows; j += kTileN) {
    t.b_j = b + j * ldb;
    column_block<Step, kTileN>(t, m, j);
  }
  t.b_j = b + j * ldb;
  column_edge<Step, kTileN - 1>(t, m, rows - j, j);
}

}  // namespace
}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_GEMM_HALF_TILES_512_H_
