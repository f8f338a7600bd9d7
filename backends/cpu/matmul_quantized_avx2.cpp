// matmul_quantized_avx2.cpp — the AVX2 kernels of matmul_quantized_kernels.h.
//
// Q8_0 dot products follow the int8 scheme of llama.cpp's AVX2 q8_0 x q8_0 dot (written afresh
// here): _mm256_maddubs_epi16 multiplies unsigned by signed bytes, so the weight bytes are made
// non-negative with _mm256_sign_epi8(w, w) and their signs moved onto x with
// _mm256_sign_epi8(x, w); pairs of int16 products are summed to int32 by _mm256_madd_epi16 with
// ones, converted to f32 and scaled by d_x * d_w with an FMA. Q4_0 takes two blocks per vector
// and multiplies the unsigned nibbles (w + 8) directly against x laid out to match (XPairQ4),
// removing the +8 in int32 with the per-block x sums: about 1.7x the sign-trick kernel per core.
// Weight rows are prefetched 4 KiB ahead. One x row (decode) is one weight row at a time on
// purpose: reading four rows per pass was faster from L2 but much slower from DRAM (the
// prefetchers lose track); more x rows go through the register tiles of
// matmul_quantized_tile_body.h, which this file shares its Q4_0 pair arithmetic with.
// Built with -mavx2 -mfma -mf16c: reach it only after detect_gemm_isa() said kAvx2Fma. Includes
// nothing with inline functions of external linkage but the intrinsics; everything but the table
// is local.
#include <immintrin.h>

#include <cstdint>

#include "avx2_sums.h"
#include "matmul_quantized_kernels.h"
#include "matmul_quantized_tile_body.h"

namespace hwinfer::cpu {

namespace {

constexpr int64_t kQ8Bytes = 34;  // HWINFER_Q8_0_BLOCK_BYTES
constexpr int64_t kQ4Bytes = 18;  // HWINFER_Q4_0_BLOCK_BYTES
// Software prefetch distance along a weight row (see gemm_half_avx2.cpp); prefetching past the
// row's end reaches the next row or nothing, and never faults.
constexpr int64_t kPrefetchBytes = 4096;

inline void prefetch(const uint8_t* p) {
  _mm_prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes, _MM_HINT_T0);
}

inline float block_scale(const uint8_t* block) {
  uint16_t d;
  __builtin_memcpy(&d, block, sizeof(d));
  return _cvtsh_ss(d);
}

// |v| rounded to the nearest binary16 value (ties to even), back as f32.
inline float round_to_half(float v) {
  return _cvtsh_ss(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

inline float horizontal_max(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// round(v) half away from zero, as std::lround, exactly: trunc, then step away from zero when the
// dropped fraction (exact in f32) is at least one half.
inline __m256i round_half_away(__m256 v) {
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  const __m256 truncated = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 fraction = _mm256_andnot_ps(sign_mask, _mm256_sub_ps(v, truncated));
  const __m256 step = _mm256_or_ps(_mm256_and_ps(v, sign_mask), _mm256_set1_ps(1.0f));
  const __m256 away =
      _mm256_and_ps(_mm256_cmp_ps(fraction, _mm256_set1_ps(0.5f), _CMP_GE_OQ), step);
  return _mm256_cvttps_epi32(_mm256_add_ps(truncated, away));
}

void quantize_x_avx2(const float* x, int64_t blocks, XBlockQ8* out) {
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    const float* v = x + b * 32;
    __m256 values[4];
    __m256 amax = _mm256_setzero_ps();
    for (int t = 0; t < 4; ++t) {
      values[t] = _mm256_loadu_ps(v + 8 * t);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, values[t]));
    }
    const float d = horizontal_max(amax) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m256 scale = _mm256_set1_ps(id);
    __m256i q[4];
    for (int t = 0; t < 4; ++t) q[t] = round_half_away(_mm256_mul_ps(values[t], scale));
    // int32 -> int8: the two packs interleave 128-bit lanes; the permute restores value order.
    const __m256i q16_lo = _mm256_packs_epi32(q[0], q[1]);
    const __m256i q16_hi = _mm256_packs_epi32(q[2], q[3]);
    const __m256i q8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(q16_lo, q16_hi),
                                                   _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    const __m256i q_sum =
        _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
    __m128i sum4 = _mm_add_epi32(_mm256_castsi256_si128(q_sum), _mm256_extracti128_si256(q_sum, 1));
    sum4 = _mm_add_epi32(sum4, _mm_shuffle_epi32(sum4, 0x4e));
    sum4 = _mm_add_epi32(sum4, _mm_shuffle_epi32(sum4, 0xb1));
    out[b].d = round_to_half(d);
    out[b].s = round_to_half(static_cast<float>(_mm_cvtsi128_si32(sum4)) * d);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[b].q), q8);
  }
}

// 32 signed weight bytes of one block.
inline __m256i weights_q8_0(const uint8_t* block) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
}
inline __m256i weights_q4_0(const uint8_t* block) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
  const __m256i nibbles =
      _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0f));
  return _mm256_sub_epi8(nibbles, _mm256_set1_epi8(8));
}

// d_w * d_x * sum(w * x) over one block, added to |acc|.
inline __m256 block_dot(__m256i w, __m256i w_abs, float d_w, const XBlockQ8& x_block, __m256 acc) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x_block.q));
  const __m256i products = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(x, w));
  const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(products, _mm256_set1_epi16(1)));
  return _mm256_fmadd_ps(_mm256_set1_ps(d_w * x_block.d), dot, acc);
}

// Q8_0: R rows of x against one weight row: each weight block is loaded once. Two blocks per step
// into two accumulators per row, so the FMA latency chains overlap.
template <int R, __m256i (*kWeights)(const uint8_t*), int64_t kBlockBytes>
void dot_r(const XBlockQ8* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
           float* sums) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    const uint8_t* block0 = w_row + b * kBlockBytes;
    prefetch(block0);
    prefetch(block0 + 64);
    const uint8_t* block1 = block0 + kBlockBytes;
    const __m256i w0 = kWeights(block0);
    const __m256i w1 = kWeights(block1);
    const __m256i w0_abs = _mm256_sign_epi8(w0, w0);
    const __m256i w1_abs = _mm256_sign_epi8(w1, w1);
    const float d0 = block_scale(block0);
    const float d1 = block_scale(block1);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = block_dot(w0, w0_abs, d0, xq[r * x_stride + b], acc[r][0]);
      acc[r][1] = block_dot(w1, w1_abs, d1, xq[r * x_stride + b + 1], acc[r][1]);
    }
  }
  if (b < blocks) {
    const uint8_t* block = w_row + b * kBlockBytes;
    const __m256i w = kWeights(block);
    const __m256i w_abs = _mm256_sign_epi8(w, w);
    const float d = block_scale(block);
    for (int r = 0; r < R; ++r) acc[r][0] = block_dot(w, w_abs, d, xq[r * x_stride + b], acc[r][0]);
  }
  for (int r = 0; r < R; ++r) sums[r] = horizontal_sum(_mm256_add_ps(acc[r][0], acc[r][1]));
}

// ---- Q4_0: two weight blocks per 32-byte vector against XPairQ4 -------------------------------

template <int R>
void dot_q4_r(const XPairQ4* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
              float* sums) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  int64_t b = 0;  // two pairs (four blocks) per step, into two accumulators per row
  for (; b + 4 <= blocks; b += 4) {
    const uint8_t* block = w_row + b * kQ4Bytes;
    prefetch(block);
    prefetch(block + 64);
    const TileQ4Pair w0 = tile_load_q4_pair(block, true);
    const TileQ4Pair w1 = tile_load_q4_pair(block + 2 * kQ4Bytes, true);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = tile_pair_dot<false>(w0, xq[r * x_stride + b / 2], acc[r][0]);
      acc[r][1] = tile_pair_dot<false>(w1, xq[r * x_stride + b / 2 + 1], acc[r][1]);
    }
  }
  for (; b < blocks; b += 2) {
    const uint8_t* block = w_row + b * kQ4Bytes;
    const TileQ4Pair w = tile_load_q4_pair(block, b + 1 < blocks);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = tile_pair_dot<false>(w, xq[r * x_stride + b / 2], acc[r][0]);
    }
  }
  for (int r = 0; r < R; ++r) sums[r] = horizontal_sum(_mm256_add_ps(acc[r][0], acc[r][1]));
}

void dot_q4_0_avx2(const XPairQ4* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                   int64_t blocks, float* sums) {
  for (int64_t i = 0; i < m; i += 4) {
    const XPairQ4* x_i = xq + i * x_stride;
    switch (m - i) {
      case 1:
        dot_q4_r<1>(x_i, x_stride, w_row, blocks, sums + i);
        break;
      case 2:
        dot_q4_r<2>(x_i, x_stride, w_row, blocks, sums + i);
        break;
      case 3:
        dot_q4_r<3>(x_i, x_stride, w_row, blocks, sums + i);
        break;
      default:
        dot_q4_r<4>(x_i, x_stride, w_row, blocks, sums + i);
        break;
    }
  }
}

// ---- Q8_0 (and the shared block helpers) -------------------------------------------------------

template <__m256i (*kWeights)(const uint8_t*), int64_t kBlockBytes>
void dot(const XBlockQ8* xq, int64_t x_stride, int64_t m, const uint8_t* w_row, int64_t blocks,
         float* sums) {
  for (int64_t i = 0; i < m; i += 4) {
    const XBlockQ8* x_i = xq + i * x_stride;
    switch (m - i) {
      case 1:
        dot_r<1, kWeights, kBlockBytes>(x_i, x_stride, w_row, blocks, sums + i);
        break;
      case 2:
        dot_r<2, kWeights, kBlockBytes>(x_i, x_stride, w_row, blocks, sums + i);
        break;
      case 3:
        dot_r<3, kWeights, kBlockBytes>(x_i, x_stride, w_row, blocks, sums + i);
        break;
      default:
        dot_r<4, kWeights, kBlockBytes>(x_i, x_stride, w_row, blocks, sums + i);
        break;
    }
  }
}

template <__m256i (*kWeights)(const uint8_t*), int64_t kBlockBytes>
void dequantize(const uint8_t* w_row, int64_t blocks, float* out) {
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBlockBytes;
    const __m256i w = kWeights(block);
    const __m256 d = _mm256_set1_ps(block_scale(block));
    const __m128i lo = _mm256_castsi256_si128(w);
    const __m128i hi = _mm256_extracti128_si256(w, 1);
    const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
    for (int t = 0; t < 4; ++t) {
      const __m256 values = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(parts[t]));
      _mm256_storeu_ps(out + b * 32 + 8 * t, _mm256_mul_ps(d, values));
    }
  }
}

}  // namespace

MatmulQuantizedKernels matmul_quantized_kernels_avx2() {
  MatmulQuantizedKernels kernels;
  kernels.quantize_x = &quantize_x_avx2;
  kernels.dot_q8_0 = &dot<&weights_q8_0, kQ8Bytes>;
  kernels.dot_q4_0 = &dot_q4_0_avx2;
  // 16 registers: 2 x 2 tiles (8 accumulators).
  kernels.tiles_q8_0 = &tiles_q8_0<false, 2, 2>;
  kernels.tiles_q4_0 = &tiles_q4_0<false, 2, 2>;
  kernels.dequantize_q8_0 = &dequantize<&weights_q8_0, kQ8Bytes>;
  kernels.dequantize_q4_0 = &dequantize<&weights_q4_0, kQ4Bytes>;
  return kernels;
}

}  // namespace hwinfer::cpu
