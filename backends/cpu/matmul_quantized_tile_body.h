// matmul_quantized_tile_body.h — the register-tiled int8 kernels of matmul_quantized (Q8_0 and
// Q4_0 weights against x quantized to 8-bit blocks), written once for two instruction sets:
// included by matmul_quantized_avx2.cpp with kVnni = false (maddubs + madd) and by
// matmul_quantized_vnni.cpp with kVnni = true (AVX-512 VL VNNI's vpdpbusd on 256-bit vectors: one
// instruction for the two), whose 512-bit kernels keep this arithmetic and take a row's last
// blocks through these steps. Include it only from a file built with at least -mavx2 -mfma
// -mf16c; everything here has internal linkage.
//
// A tile is RM rows of x by RN weight rows: each weight block is loaded once per tile and each x
// block once per RN weight rows, so the int8 work, not the loads, sets the pace. The AVX2 row
// kernels (one weight row, matmul_quantized_avx2.cpp) are these tiles with RN = 1. Per output the
// arithmetic is the same at every tile shape and on both instruction sets: the same int32 block
// sums, scaled by d_w * d_x, even and odd blocks (Q4_0: pairs) into two accumulators added at the
// end, so an output does not depend on the tile, the batch or the instruction set.
#ifndef HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_TILE_BODY_H_
#define HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_TILE_BODY_H_

#include <immintrin.h>

#include <cstdint>

#include "avx2_sums.h"
#include "matmul_quantized_kernels.h"
#include "tile_prefetch.h"

namespace hwinfer::cpu {
namespace {

constexpr int64_t kTileQ8Bytes = 34;  // HWINFER_Q8_0_BLOCK_BYTES
constexpr int64_t kTileQ4Bytes = 18;  // HWINFER_Q4_0_BLOCK_BYTES
// x rows per pass over an item's weight rows: about 256 KiB of quantized x stays in L2.
constexpr int64_t kTileXBytes = 256 << 10;

// Not std::min / std::max: no inline function of a shared header is compiled with these flags.
inline int64_t tile_min(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t tile_max(int64_t a, int64_t b) { return a > b ? a : b; }

// sum over lane groups of 4 of u8 |a| times s8 |b|, added to |acc| (int32 lanes). The products
// of one maddubs pair never saturate here: |a| <= 128 against |b| <= 127 (Q8_0), or a <= 15.
template <bool kVnni>
inline __m256i dot_u8s8(__m256i acc, __m256i a, __m256i b) {
  if constexpr (kVnni) {
    return _mm256_dpbusd_epi32(acc, a, b);
  } else {
    return _mm256_add_epi32(acc,
                            _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)));
  }
}

inline float tile_scale(const uint8_t* block) {
  uint16_t d;
  __builtin_memcpy(&d, block, sizeof(d));
  return _cvtsh_ss(d);
}

// ---- Q8_0 ----------------------------------------------------------------------------------

// acc[r][j] += d_w d_x dot(x row r block b, weight row j block b).
// AVX2: maddubs wants its unsigned operand first, so the weights' signs move onto x (|w| times
// sign(x, w)). VNNI: x + 128 (unsigned) against w as it is, the int32 sums starting from
// -128 sum(w) (one vpdpbusd per weight block, shared by the RM rows): the same integers, two
// instructions fewer per block pair. The scale d_w d_x is the same single product either way.
template <bool kVnni, int RM, int RN>
__attribute__((always_inline)) inline void q8_0_step(const XBlockQ8* xq, int64_t x_stride,
                                                     const uint8_t* w, int64_t w_row_bytes,
                                                     int64_t b, __m256 (&acc)[RM][RN]) {
  const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256i w_signed[RN], w_other[RN];  // w_other: |w| (AVX2), -128 sum(w) per lane (VNNI)
  __m256 d_w[RN];
  for (int j = 0; j < RN; ++j) {
    const uint8_t* block = w + j * w_row_bytes + b * kTileQ8Bytes;
    w_signed[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
    if constexpr (kVnni) {
      w_other[j] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                    _mm256_dpbusd_epi32(_mm256_setzero_si256(), bias, w_signed[j]));
    } else {
      w_other[j] = _mm256_sign_epi8(w_signed[j], w_signed[j]);
    }
    d_w[j] = _mm256_set1_ps(tile_scale(block));
  }
  for (int r = 0; r < RM; ++r) {
    const XBlockQ8& x_block = xq[r * x_stride + b];
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x_block.q));
    const __m256 d_x = _mm256_broadcast_ss(&x_block.d);
    const __m256i x_unsigned = kVnni ? _mm256_xor_si256(x, bias) : x;
    for (int j = 0; j < RN; ++j) {
      __m256i sums;
      if constexpr (kVnni) {
        sums = _mm256_dpbusd_epi32(w_other[j], x_unsigned, w_signed[j]);
      } else {
        sums =
            dot_u8s8<false>(_mm256_setzero_si256(), w_other[j], _mm256_sign_epi8(x, w_signed[j]));
      }
      acc[r][j] = _mm256_fmadd_ps(_mm256_mul_ps(d_w[j], d_x), _mm256_cvtepi32_ps(sums), acc[r][j]);
    }
  }
}

// out[r][j] = sum_b d_w d_x dot(x row r block b, weight row j block b): even blocks into acc0,
// odd into acc1 (both held in registers: the unrolled pair of steps names them). kAhead: prefetch
// |ahead| (a later tile, tile_prefetch.h), else read ahead along the weight rows.
template <bool kVnni, int RM, int RN, bool kAhead>
void tile_q8_0_block(const XBlockQ8* xq, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                     int64_t blocks, TilePrefetch ahead, float out[RM][RN]) {
  __m256 acc0[RM][RN], acc1[RM][RN];
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) acc0[r][j] = acc1[r][j] = _mm256_setzero_ps();
  }
  PrefetchSpreader spread(ahead, blocks / 2);
  int64_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    if constexpr (kAhead) {
      spread.step();
    } else {
      for (int j = 0; j < RN; ++j) {
        const uint8_t* block = w + j * w_row_bytes + b * kTileQ8Bytes;
        read_ahead(block);
        read_ahead(block + 64);
      }
    }
    q8_0_step<kVnni, RM, RN>(xq, x_stride, w, w_row_bytes, b, acc0);
    q8_0_step<kVnni, RM, RN>(xq, x_stride, w, w_row_bytes, b + 1, acc1);
  }
  if (b < blocks) q8_0_step<kVnni, RM, RN>(xq, x_stride, w, w_row_bytes, b, acc0);
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) {
      out[r][j] = horizontal_sum(_mm256_add_ps(acc0[r][j], acc1[r][j]));
    }
  }
}

// ---- Q4_0: two weight blocks per vector against one half of an XQuadQ4 -----------------------

struct TileQ4Pair {
  __m256i lo, hi;  // unsigned nibbles (w + 8) of blocks A | B, values 0..15 and 16..31
  __m256 d;        // d_A x 4, d_B x 4
};

inline TileQ4Pair tile_load_q4_pair(const uint8_t* block_a, bool has_b) {
  const uint8_t* block_b = block_a + kTileQ4Bytes;
  const __m128i qs_a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block_a + 2));
  const __m128i qs_b =
      has_b ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(block_b + 2)) : _mm_setzero_si128();
  const __m256i qs = _mm256_inserti128_si256(_mm256_castsi128_si256(qs_a), qs_b, 1);
  const __m256i mask = _mm256_set1_epi8(0x0f);
  uint16_t d_a, d_b = 0;
  __builtin_memcpy(&d_a, block_a, 2);
  if (has_b) __builtin_memcpy(&d_b, block_b, 2);
  const __m128 d = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(d_a | (uint32_t{d_b} << 16))));
  TileQ4Pair pair;
  pair.lo = _mm256_and_si256(qs, mask);
  pair.hi = _mm256_and_si256(_mm256_srli_epi16(qs, 4), mask);
  pair.d = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(d),
                                    _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
  return pair;
}

// acc += d_w * (d_x * (sum (w + 8) x - 8 sum x)) for both blocks of the pair: blocks 2 |half|
// and 2 |half| + 1 of quad |x|.
template <bool kVnni>
inline __m256 tile_pair_dot(const TileQ4Pair& w, const XQuadQ4& x, int half, __m256 acc) {
  const __m256i x_lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(x.lo + 32 * half));
  const __m256i x_hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(x.hi + 32 * half));
  const __m256i correction =
      _mm256_load_si256(reinterpret_cast<const __m256i*>(x.correction + 8 * half));
  __m256i sums;
  if constexpr (kVnni) {
    sums = _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(correction, w.lo, x_lo), w.hi, x_hi);
  } else {  // each int16 is at most 2 * 15 * 127 per maddubs, so the sum of the two fits
    const __m256i products =
        _mm256_add_epi16(_mm256_maddubs_epi16(w.lo, x_lo), _mm256_maddubs_epi16(w.hi, x_hi));
    sums = _mm256_add_epi32(_mm256_madd_epi16(products, _mm256_set1_epi16(1)), correction);
  }
  const __m256 scaled = _mm256_mul_ps(_mm256_cvtepi32_ps(sums), _mm256_load_ps(x.d + 8 * half));
  return _mm256_fmadd_ps(w.d, scaled, acc);
}

// acc[r][j] += the pair of blocks at |b| (b + 1 absent when |has_b| is false).
template <bool kVnni, int RM, int RN>
__attribute__((always_inline)) inline void q4_0_step(const XQuadQ4* xq, int64_t x_stride,
                                                     const uint8_t* w, int64_t w_row_bytes,
                                                     int64_t b, bool has_b, __m256 (&acc)[RM][RN]) {
  TileQ4Pair pairs[RN];
  for (int j = 0; j < RN; ++j) {
    pairs[j] = tile_load_q4_pair(w + j * w_row_bytes + b * kTileQ4Bytes, has_b);
  }
  for (int r = 0; r < RM; ++r) {
    const XQuadQ4& x_quad = xq[r * x_stride + b / 4];
    const int half = static_cast<int>(b % 4) / 2;
    for (int j = 0; j < RN; ++j) {
      acc[r][j] = tile_pair_dot<kVnni>(pairs[j], x_quad, half, acc[r][j]);
    }
  }
}

// dot_q4_r's order: four blocks per step, pairs into accumulators 0 and 1, the rest into 0; a
// lone last block takes a pair of its own with an all-zero B.
template <bool kVnni, int RM, int RN>
void tile_q4_0_block(const XQuadQ4* xq, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                     int64_t blocks, TilePrefetch /*ahead: run_tiles passes none for Q4_0*/,
                     float out[RM][RN]) {
  __m256 acc0[RM][RN], acc1[RM][RN];
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) acc0[r][j] = acc1[r][j] = _mm256_setzero_ps();
  }
  int64_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    for (int j = 0; j < RN; ++j) {
      const uint8_t* block = w + j * w_row_bytes + b * kTileQ4Bytes;
      read_ahead(block);
      read_ahead(block + 64);
    }
    q4_0_step<kVnni, RM, RN>(xq, x_stride, w, w_row_bytes, b, true, acc0);
    q4_0_step<kVnni, RM, RN>(xq, x_stride, w, w_row_bytes, b + 2, true, acc1);
  }
  for (; b < blocks; b += 2) {
    q4_0_step<kVnni, RM, RN>(xq, x_stride, w, w_row_bytes, b, b + 1 < blocks, acc0);
  }
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) {
      out[r][j] = horizontal_sum(_mm256_add_ps(acc0[r][j], acc1[r][j]));
    }
  }
}

// ---- the tile loops ----------------------------------------------------------------------------

// Runs Block<RM', RN'> over y[0:m, 0:rows] in RM x RN tiles (edges with smaller ones) and stores.
// x rows are taken in chunks that stay in L2 while the item's weight rows stream through L1.
// kPrefetchNext: the later tiles over the same weight rows prefetch the next RN rows
// (tile_prefetch.h). Q8_0 gains from it (BM_DecodeBatch m = 8: -25% time); Q4_0 does not (its
// 1152-byte rows at k = 2048 put the 4 KiB read-ahead along a row into the next rows already).
template <bool kPrefetchNext, typename XBlock, int RM, int RN, template <int, int> class Block>
void run_tiles(const QuantizedTileArgs& a, int64_t x_row_bytes) {
  const auto* xq = static_cast<const XBlock*>(a.xq);
  const int64_t chunk = tile_max(RM, kTileXBytes / tile_max(1, x_row_bytes));
  for (int64_t i0 = 0; i0 < a.m; i0 += chunk) {
    const int64_t i_end = tile_min(a.m, i0 + chunk);
    const int64_t tiles = (i_end - i0 + RM - 1) / RM;  // over the same RN weight rows
    for (int64_t j = 0; j < a.rows; j += RN) {
      const uint8_t* w = a.w + j * a.w_row_bytes;
      const bool full_n = j + RN <= a.rows;
      for (int64_t i = i0; i < i_end; i += RM) {
        const XBlock* x = xq + i * a.x_stride;
        float out[RM][RN];
        const int64_t rows_m = tile_min(RM, i_end - i);
        const int64_t cols = tile_min(RN, a.rows - j);
        if (rows_m == RM && full_n) {
          const TilePrefetch ahead =
              kPrefetchNext ? later_tile_prefetch(w + RN * a.w_row_bytes, RN * a.w_row_bytes,
                                                  (i - i0) / RM, tiles)
                            : TilePrefetch{};
          Block<RM, RN>::run(x, a.x_stride, w, a.w_row_bytes, a.blocks, ahead, out);
        } else if (full_n) {  // edges: one x row at a time (the same arithmetic per output)
          for (int64_t r = 0; r < rows_m; ++r) {
            float one[1][RN];
            Block<1, RN>::run(x + r * a.x_stride, a.x_stride, w, a.w_row_bytes, a.blocks, {}, one);
            for (int c = 0; c < RN; ++c) out[r][c] = one[0][c];
          }
        } else {  // the last weight rows: one output at a time
          for (int64_t r = 0; r < rows_m; ++r) {
            for (int64_t c = 0; c < cols; ++c) {
              float one[1][1];
              Block<1, 1>::run(x + r * a.x_stride, a.x_stride, w + c * a.w_row_bytes, a.w_row_bytes,
                               a.blocks, {}, one);
              out[r][c] = one[0][0];
            }
          }
        }
        for (int64_t r = 0; r < rows_m; ++r) {
          for (int64_t c = 0; c < cols; ++c) {
            a.y[(i + r) * a.y_row_stride + (j + c) * a.y_col_stride] = out[r][c];
          }
        }
      }
    }
  }
}

template <bool kVnni>
struct TileFamily {
  template <int RM, int RN>
  struct Q8 {
    static void run(const XBlockQ8* x, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                    int64_t blocks, TilePrefetch ahead, float out[RM][RN]) {
      if (ahead.begin != nullptr) {
        tile_q8_0_block<kVnni, RM, RN, true>(x, x_stride, w, w_row_bytes, blocks, ahead, out);
      } else {
        tile_q8_0_block<kVnni, RM, RN, false>(x, x_stride, w, w_row_bytes, blocks, ahead, out);
      }
    }
  };
  template <int RM, int RN>
  struct Q4 {
    static void run(const XQuadQ4* x, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                    int64_t blocks, TilePrefetch ahead, float out[RM][RN]) {
      tile_q4_0_block<kVnni, RM, RN>(x, x_stride, w, w_row_bytes, blocks, ahead, out);
    }
  };
};

// The row kernels (dot_q8_0 / dot_q4_0 of matmul_quantized_kernels.h) through a tile family:
// four rows of x at a time against one weight row, the last 1..3 through smaller tiles.
template <typename XBlock, template <int, int> class Block>
void rows_through_tiles(const XBlock* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                        int64_t blocks, float* sums) {
  for (int64_t i = 0; i < m; i += 4) {
    float out[4][1];
    const XBlock* x_i = xq + i * x_stride;
    const int64_t rows = tile_min(4, m - i);
    switch (rows) {
      case 1:
        Block<1, 1>::run(x_i, x_stride, w_row, 0, blocks, {}, out);
        break;
      case 2:
        Block<2, 1>::run(x_i, x_stride, w_row, 0, blocks, {}, out);
        break;
      case 3:
        Block<3, 1>::run(x_i, x_stride, w_row, 0, blocks, {}, out);
        break;
      default:
        Block<4, 1>::run(x_i, x_stride, w_row, 0, blocks, {}, out);
        break;
    }
    for (int64_t r = 0; r < rows; ++r) sums[i + r] = out[r][0];
  }
}

template <bool kVnni, int RM, int RN>
void tiles_q8_0(const QuantizedTileArgs& a) {
  run_tiles<true, XBlockQ8, RM, RN, TileFamily<kVnni>::template Q8>(
      a, a.blocks * static_cast<int64_t>(sizeof(XBlockQ8)));
}

template <bool kVnni, int RM, int RN>
void tiles_q4_0(const QuantizedTileArgs& a) {
  run_tiles<false, XQuadQ4, RM, RN, TileFamily<kVnni>::template Q4>(
      a, (a.blocks + 3) / 4 * static_cast<int64_t>(sizeof(XQuadQ4)));
}

}  // namespace
}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_MATMUL_QUANTIZED_TILE_BODY_H_
