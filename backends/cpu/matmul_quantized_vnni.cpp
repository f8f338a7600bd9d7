// matmul_quantized_vnni.cpp — the int8 kernels of matmul_quantized_kernels.h on AVX-512 VNNI:
// vpdpbusd on 512-bit vectors, Q8_0 two blocks and Q4_0 four blocks per vector, row kernels and
// 4 x 4 tiles. Bit for bit the AVX2 kernels' sums (matmul_quantized_tile_body.h says why): the low
// half of a 512-bit accumulator is the 256-bit kernels' first accumulator, the high half their
// second, and a row's last blocks that fill no whole vector go through the 256-bit VNNI step.
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni (and AVX2, FMA, F16C); reached only
// after use_avx512_vnni() said the CPU has them.
#include <immintrin.h>

#include "matmul_quantized_kernels.h"
#include "matmul_quantized_tile_body.h"

namespace hwinfer::cpu {

namespace {

inline __m256 upper_half(__m512 v) {
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

// ---- Q8_0: two weight blocks per 512-bit vector ----------------------------------------------

struct Q8Pair {
  __m512i w;          // the signed qs of blocks b | b + 1
  __m512i bias_sums;  // -128 sum(w) per lane (x goes in as x + 128)
  __m512 d;           // d of block b in lanes 0..7, of b + 1 in lanes 8..15
};

// Blocks b and b + 1 of a row (both present; scales at bytes 0 and 34: words 0 and 17).
inline Q8Pair load_q8_pair(const uint8_t* block) {
  const auto qs_at = [block](int s) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + s * kTileQ8Bytes + 2));
  };
  Q8Pair pair;
  pair.w = _mm512_inserti64x4(_mm512_castsi256_si512(qs_at(0)), qs_at(1), 1);
  pair.bias_sums =
      _mm512_sub_epi32(_mm512_setzero_si512(),
                       _mm512_dpbusd_epi32(_mm512_setzero_si512(),
                                           _mm512_set1_epi8(static_cast<char>(0x80)), pair.w));
  const __m512i scale_words =
      _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                       17, 17, 17, 17, 17, 17, 17, 17, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i words = _mm512_permutexvar_epi16(scale_words, _mm512_loadu_si512(block));
  pair.d = _mm512_cvtph_ps(_mm512_castsi512_si256(words));
  return pair;
}

// q8_0_step on blocks b and b + 1 at once: acc's low half is tile_q8_0_block's acc0 (even
// blocks), its high half acc1 (odd blocks); a lone last block goes into the low half through the
// 256-bit step, as there. kAhead as there too.
template <int RM, int RN, bool kAhead>
void pair_q8_0_block(const XBlockQ8* xq, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                     int64_t blocks, TilePrefetch ahead, float out[RM][RN]) {
  __m512 acc[RM][RN];
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  PrefetchSpreader spread(ahead, blocks / 2);
  int64_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    if constexpr (kAhead) spread.step();
    Q8Pair pairs[RN];
    for (int j = 0; j < RN; ++j) {
      const uint8_t* block = w + j * w_row_bytes + b * kTileQ8Bytes;
      if constexpr (!kAhead) {
        read_ahead(block);
        read_ahead(block + 64);
      }
      pairs[j] = load_q8_pair(block);
    }
    for (int r = 0; r < RM; ++r) {
      const XBlockQ8* x = xq + r * x_stride + b;
      const __m512i x_pair = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[0].q))),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[1].q)), 1);
      const __m512i x_unsigned = _mm512_xor_si512(x_pair, bias);
      const __m512 d_x =
          _mm512_mask_broadcastss_ps(_mm512_set1_ps(x[0].d), 0xff00, _mm_set_ss(x[1].d));
      for (int j = 0; j < RN; ++j) {
        const __m512i sums = _mm512_dpbusd_epi32(pairs[j].bias_sums, x_unsigned, pairs[j].w);
        acc[r][j] =
            _mm512_fmadd_ps(_mm512_mul_ps(pairs[j].d, d_x), _mm512_cvtepi32_ps(sums), acc[r][j]);
      }
    }
  }
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) {
      __m256 acc0[1][1] = {{_mm512_castps512_ps256(acc[r][j])}};
      const __m256 acc1 = upper_half(acc[r][j]);
      if (b < blocks) {
        q8_0_step<true, 1, 1>(xq + r * x_stride, x_stride, w + j * w_row_bytes, w_row_bytes, b,
                              acc0);
      }
      out[r][j] = horizontal_sum(_mm256_add_ps(acc0[0][0], acc1));
    }
  }
}

template <int RM, int RN>
struct Q8Pairs {
  static void run(const XBlockQ8* x, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                  int64_t blocks, TilePrefetch ahead, float out[RM][RN]) {
    if (ahead.begin != nullptr) {
      pair_q8_0_block<RM, RN, true>(x, x_stride, w, w_row_bytes, blocks, ahead, out);
    } else {
      pair_q8_0_block<RM, RN, false>(x, x_stride, w, w_row_bytes, blocks, ahead, out);
    }
  }
};

// ---- Q4_0: four weight blocks (one quad) per 512-bit vector ------------------------------------

struct Q4Quad {
  __m512i lo, hi;  // unsigned nibbles (w + 8) of blocks 0..3: values 0..15 | 16..31, 16 per block
  __m512 d;        // d of block s in lanes 4 s .. 4 s + 3
};

// Blocks b .. b + 3 of a row (all four present): their 16 qs bytes side by side, and their four
// scales (bytes 0, 18, 36, 54 of the 72: words 0, 9, 18, 27) spread over four lanes each.
inline Q4Quad load_q4_quad(const uint8_t* block) {
  const auto qs_at = [block](int s) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + s * kTileQ4Bytes + 2));
  };
  __m512i qs = _mm512_castsi128_si512(qs_at(0));
  qs = _mm512_inserti32x4(qs, qs_at(1), 1);
  qs = _mm512_inserti32x4(qs, qs_at(2), 2);
  qs = _mm512_inserti32x4(qs, qs_at(3), 3);
  const __m512i scale_words =
      _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                       27, 27, 27, 27, 18, 18, 18, 18, 9, 9, 9, 9, 0, 0, 0, 0);
  const __m512i words = _mm512_permutexvar_epi16(scale_words, _mm512_loadu_si512(block));
  const __m512i mask = _mm512_set1_epi8(0x0f);
  Q4Quad quad;
  quad.lo = _mm512_and_si512(qs, mask);
  quad.hi = _mm512_and_si512(_mm512_srli_epi16(qs, 4), mask);
  quad.d = _mm512_cvtph_ps(_mm512_castsi512_si256(words));
  return quad;
}

// tile_pair_dot on both pairs of the quad at once.
inline __m512 quad_dot(const Q4Quad& w, const XQuadQ4& x, __m512 acc) {
  __m512i sums =
      _mm512_dpbusd_epi32(_mm512_load_si512(x.correction), w.lo, _mm512_load_si512(x.lo));
  sums = _mm512_dpbusd_epi32(sums, w.hi, _mm512_load_si512(x.hi));
  const __m512 scaled = _mm512_mul_ps(_mm512_cvtepi32_ps(sums), _mm512_load_ps(x.d));
  return _mm512_fmadd_ps(w.d, scaled, acc);
}

// tile_q4_0_block's sums with a quad per step: acc's low half takes the pairs at b % 4 == 0 (the
// 256-bit kernels' acc0), its high half those at b % 4 == 2 (acc1); the last 1..3 blocks go into
// the low half a pair at a time through the 256-bit step, as there.
template <int RM, int RN>
void quad_q4_0_block(const XQuadQ4* xq, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                     int64_t blocks, TilePrefetch /*ahead: run_tiles passes none for Q4_0*/,
                     float out[RM][RN]) {
  __m512 acc[RM][RN];
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  int64_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    Q4Quad quads[RN];
    for (int j = 0; j < RN; ++j) {
      const uint8_t* block = w + j * w_row_bytes + b * kTileQ4Bytes;
      read_ahead(block);
      read_ahead(block + 64);
      quads[j] = load_q4_quad(block);
    }
    for (int r = 0; r < RM; ++r) {
      const XQuadQ4& x_quad = xq[r * x_stride + b / 4];
      for (int j = 0; j < RN; ++j) acc[r][j] = quad_dot(quads[j], x_quad, acc[r][j]);
    }
  }
  for (int r = 0; r < RM; ++r) {
    for (int j = 0; j < RN; ++j) {
      __m256 acc0[1][1] = {{_mm512_castps512_ps256(acc[r][j])}};
      const __m256 acc1 = upper_half(acc[r][j]);
      for (int64_t tail = b; tail < blocks; tail += 2) {
        q4_0_step<true, 1, 1>(xq + r * x_stride, x_stride, w + j * w_row_bytes, w_row_bytes, tail,
                              tail + 1 < blocks, acc0);
      }
      out[r][j] = horizontal_sum(_mm256_add_ps(acc0[0][0], acc1));
    }
  }
}

template <int RM, int RN>
struct Q4Quads {
  static void run(const XQuadQ4* x, int64_t x_stride, const uint8_t* w, int64_t w_row_bytes,
                  int64_t blocks, TilePrefetch ahead, float out[RM][RN]) {
    quad_q4_0_block<RM, RN>(x, x_stride, w, w_row_bytes, blocks, ahead, out);
  }
};

template <int RM, int RN>
void tiles_q8_0_pairs(const QuantizedTileArgs& a) {
  run_tiles<true, XBlockQ8, RM, RN, Q8Pairs>(a, a.blocks * static_cast<int64_t>(sizeof(XBlockQ8)));
}

template <int RM, int RN>
void tiles_q4_0_quads(const QuantizedTileArgs& a) {
  run_tiles<false, XQuadQ4, RM, RN, Q4Quads>(
      a, (a.blocks + 3) / 4 * static_cast<int64_t>(sizeof(XQuadQ4)));
}

}  // namespace

MatmulQuantizedKernels matmul_quantized_kernels_vnni() {
  MatmulQuantizedKernels kernels = matmul_quantized_kernels_avx2();
  kernels.dot_q8_0 = &rows_through_tiles<XBlockQ8, Q8Pairs>;
  kernels.dot_q4_0 = &rows_through_tiles<XQuadQ4, Q4Quads>;
  kernels.tiles_q8_0 = &tiles_q8_0_pairs<4, 4>;
  kernels.tiles_q4_0 = &tiles_q4_0_quads<4, 4>;
  return kernels;
}

}  // namespace hwinfer::cpu
