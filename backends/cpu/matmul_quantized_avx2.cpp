// matmul_quantized_avx2.cpp — the AVX2 kernels of matmul_quantized_kernels.h.
//
// Q8_0 dot products follow the int8 scheme of llama.cpp's AVX2 q8_0 x q8_0 dot (written afresh
// here): _mm256_maddubs_epi16 multiplies unsigned by signed bytes, so the weight bytes are made
// non-negative with _mm256_sign_epi8(w, w) and their signs moved onto x with
// _mm256_sign_epi8(x, w); pairs of int16 products are summed to int32 by _mm256_madd_epi16 with
// ones, converted to f32 and scaled by d_x * d_w with an FMA. Q4_0 takes two blocks per vector
// and multiplies the unsigned nibbles (w + 8) directly against x laid out to match (XQuadQ4),
// removing the +8 in int32 with the per-block x sums: about 1.7x the sign-trick kernel per core.
// The dot products are the register tiles of matmul_quantized_tile_body.h (written there once):
// the row kernels here are its tiles at one weight row, up to four rows of x. Weight rows are
// prefetched 4 KiB ahead. One x row (decode) is one weight row at a time on purpose: reading four
// rows per pass was faster from L2 but much slower from DRAM (the prefetchers lose track).
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

template <__m256i (*kWeights)(const uint8_t*), int64_t kBlockBytes>
void dequantize(const uint8_t* w_row, int64_t blocks, float* out) {
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBlockBytes;
    const __m256i w = kWeights(block);
    const __m256 d = _mm256_set1_ps(tile_scale(block));
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
  kernels.dot_q8_0 = &rows_through_tiles<XBlockQ8, TileFamily<false>::Q8>;
  kernels.dot_q4_0 = &rows_through_tiles<XQuadQ4, TileFamily<false>::Q4>;
  // 16 registers: 2 x 2 tiles (8 accumulators).
  kernels.tiles_q8_0 = &tiles_q8_0<false, 2, 2>;
  kernels.tiles_q4_0 = &tiles_q4_0<false, 2, 2>;
  kernels.dequantize_q8_0 = &dequantize<&weights_q8_0, kTileQ8Bytes>;
  kernels.dequantize_q4_0 = &dequantize<&weights_q4_0, kTileQ4Bytes>;
  return kernels;
}

}  // namespace hwinfer::cpu
