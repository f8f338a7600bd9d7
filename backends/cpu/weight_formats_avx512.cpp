// weight_formats_avx512.cpp — AVX-512 (F, BW, VL) VNNI dot products of the decode path for the
// K-quants (Q2_K .. Q6_K): 64 weights per instruction instead of AVX2's 32,
// and VNNI's vpdpwssd folding each sub-block's scale into the int32 sums (madd + add in one).
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma -mf16c; reached only through
// weight_dot() after the CPU said it has them. Same integer sums per sub-block as the AVX2 and
// portable kernels (summed in another order in f32).
//
// A super-block of 256 is four chunks of 64 values; chunk c of the weights is matched with bytes
// 64 c .. 64 c + 63 of x's Q8_K block. maddubs (u8 weights x s8 x) gives 32 int16 per chunk,
// lane i covering values 64 c + 2 i, 2 i + 1, and vpdpwssd multiplies each with its sub-block's
// scale (vpermw picks it from the block's scales) into 16 int32.
#include <immintrin.h>

#include <cstring>

#include "avx2_sums.h"
#include "hwinfer/plugin.h"
#include "weight_formats.h"
#include "x86_weight_blocks.h"

namespace hwinfer::cpu {

namespace {

// 64 bytes: |v| (32 bytes) in the low and the high half.
inline __m512i both_halves(const uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Per 16-bit lane: shift |low| in the low 256 bits, |high| in the high 256 bits.
inline __m512i half_shifts(int low, int high) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(low)),
                            _mm256_set1_epi16(static_cast<int16_t>(high)), 1);
}

// The int16 lane indices that give lane i of chunk c the scale of sub-block c * per_chunk +
// i * per_chunk / 32 (per_chunk 2: sub-blocks of 32; 4: of 16).
inline __m512i chunk_scale_index(int c, int per_chunk) {
  alignas(64) int16_t index[32];
  for (int i = 0; i < 32; ++i) index[i] = static_cast<int16_t>(c * per_chunk + i * per_chunk / 32);
  return _mm512_load_si512(index);
}

// sum over the 4 chunks of scale * (q . x) as 16 int32.
inline __m512i chunk_sums(const __m512i* q, const __m512i* scales, const XBlockQ8K& x) {
  __m512i isum = _mm512_setzero_si512();
  for (int c = 0; c < 4; ++c) {
    const __m512i xv = _mm512_loadu_si512(x.q + 64 * c);
    isum = _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(q[c], xv), scales[c]);
  }
  return isum;
}

// Q4_K (kQ5 false) and Q5_K: d sum_s sc_s sum q x - dmin sum_s mn_s sum x.
template <int R, bool kQ5>
void dot_q45_k(const XBlockQ8K* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
               float* sums) {
  constexpr int64_t kBytes = kQ5 ? HWINFER_Q5_K_BLOCK_BYTES : HWINFER_Q4_K_BLOCK_BYTES;
  const __m512i nibble_shift = half_shifts(0, 4), low4 = _mm512_set1_epi8(0x0f);
  __m512i index[4];
  for (int c = 0; c < 4; ++c) index[c] = chunk_scale_index(c, 2);
  __m512 acc[R];
  __m128 mins_acc[R];
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm512_setzero_ps();
    mins_acc[r] = _mm_setzero_ps();
  }
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBytes;
    const float d = half_at(block), dmin = half_at(block + 2);
    const __m128i scales_mins = k4_scales_mins(block + 4);
    const __m512i scales16 = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(scales_mins));
    const __m128i mins16 = _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8));
    const uint8_t* qs = block + (kQ5 ? 48 : 16);
    __m512i q[4], scales[4];  // chunk c: sub-block 2 c (low nibbles), 2 c + 1 (high nibbles)
    for (int c = 0; c < 4; ++c) {
      q[c] = _mm512_and_si512(_mm512_srlv_epi16(both_halves(qs + 32 * c), nibble_shift), low4);
      if (kQ5) {  // the fifth bit of value i is bit i / 32 of qh[i % 32]
        const __m512i bit = _mm512_and_si512(
            _mm512_srlv_epi16(both_halves(block + 16), half_shifts(2 * c, 2 * c + 1)),
            _mm512_set1_epi8(1));
        q[c] = _mm512_or_si512(q[c], _mm512_slli_epi16(bit, 4));
      }
      scales[c] = _mm512_permutexvar_epi16(index[c], scales16);
    }
    for (int r = 0; r < R; ++r) {
      const XBlockQ8K& x = xq[r * x_stride + b];
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * x.d),
                               _mm512_cvtepi32_ps(chunk_sums(q, scales, x)), acc[r]);
      const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bsums));
      const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bsums + 8));
      const __m128i mins = _mm_madd_epi16(mins16, _mm_hadd_epi16(lo, hi));
      mins_acc[r] = _mm_fmadd_ps(_mm_set1_ps(dmin * x.d), _mm_cvtepi32_ps(mins), mins_acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) sums[r] = _mm512_reduce_add_ps(acc[r]) - horizontal_sum(mins_acc[r]);
}

// Q6_K: d sum_s sc_s sum (q - 32) x, q = 4 low bits | 2 high bits << 4. Chunks 2 h and 2 h + 1
// come from ql[64 h .. 64 h + 63] (low nibbles, then high) and qh[32 h ..] (bits 0-3, then 4-7).
template <int R>
void dot_q6_k(const XBlockQ8K* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
              float* sums) {
  const __m512i low4 = _mm512_set1_epi8(0x0f), three = _mm512_set1_epi8(3);
  const __m512i shift_a = half_shifts(0, 2), shift_b = half_shifts(4, 6);
  __m512i index[4];
  for (int c = 0; c < 4; ++c) index[c] = chunk_scale_index(c, 4);
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * HWINFER_Q6_K_BLOCK_BYTES;
    const float d = half_at(block + 208);
    const __m256i scales16_256 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192)));
    const __m512i scales16 = _mm512_castsi256_si512(scales16_256);
    __m512i q[4], scales[4];
    for (int h = 0; h < 2; ++h) {
      const __m512i ql = _mm512_loadu_si512(block + 64 * h);
      const __m512i qh = both_halves(block + 128 + 32 * h);
      auto high = [&](__m512i shift) {
        return _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift), three), 4);
      };
      q[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, low4), high(shift_a));
      q[2 * h + 1] =
          _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4), high(shift_b));
    }
    for (int c = 0; c < 4; ++c) scales[c] = _mm512_permutexvar_epi16(index[c], scales16);
    for (int r = 0; r < R; ++r) {
      const XBlockQ8K& x = xq[r * x_stride + b];
      // The -32 every value carries: 32 sum_s sc_s bsums_s.
      const __m256i offset = _mm256_slli_epi32(bsum_products(x, scales16_256), 5);
      const __m512i isum =
          _mm512_sub_epi32(chunk_sums(q, scales, x), _mm512_zextsi256_si512(offset));
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * x.d), _mm512_cvtepi32_ps(isum), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) sums[r] = _mm512_reduce_add_ps(acc[r]);
}

// Q2_K (kQ3 false): d sum_s sc_s sum q x - dmin sum_s mn_s sum x, 2-bit q, 4-bit sc and mn.
// Q3_K: d sum_s (sc_s - 32) sum (q - 4 [high bit clear]) x. Chunks 2 h and 2 h + 1 take the
// 2-bit fields 0, 1 and 2, 3 of qs[32 h ..] (and bits 4 h .. 4 h + 3 of hmask).
template <int R, bool kQ3>
void dot_q23_k(const XBlockQ8K* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
               float* sums) {
  constexpr int64_t kBytes = kQ3 ? HWINFER_Q3_K_BLOCK_BYTES : HWINFER_Q2_K_BLOCK_BYTES;
  const __m512i three = _mm512_set1_epi8(3), one = _mm512_set1_epi8(1);
  __m512i index[4];
  for (int c = 0; c < 4; ++c) index[c] = chunk_scale_index(c, 4);
  __m512 acc[R];
  __m256 mins[R];
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm512_setzero_ps();
    mins[r] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBytes;
    const auto [sc16, mn16, d, dmin] = q23_k_scales<kQ3>(block);
    const uint8_t* qs = block + (kQ3 ? 32 : 16);
    __m512i q[4], scales[4];
    for (int c = 0; c < 4; ++c) {
      const int h = c / 2, j = 2 * (c % 2);  // fields j (low half) and j + 1 (high half)
      q[c] = _mm512_and_si512(
          _mm512_srlv_epi16(both_halves(qs + 32 * h), half_shifts(2 * j, 2 * j + 2)), three);
      if (kQ3) {
        const __m512i bit = _mm512_and_si512(
            _mm512_srlv_epi16(both_halves(block), half_shifts(4 * h + j, 4 * h + j + 1)), one);
        q[c] = _mm512_or_si512(q[c], _mm512_slli_epi16(bit, 2));
      }
      scales[c] = _mm512_permutexvar_epi16(index[c], _mm512_castsi256_si512(sc16));
    }
    for (int r = 0; r < R; ++r) {
      const XBlockQ8K& x = xq[r * x_stride + b];
      __m512i isum = chunk_sums(q, scales, x);
      if (kQ3) {  // every value carries the +4 the type subtracts
        isum = _mm512_sub_epi32(
            isum, _mm512_zextsi256_si512(_mm256_slli_epi32(bsum_products(x, sc16), 2)));
      } else {
        mins[r] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * x.d),
                                  _mm256_cvtepi32_ps(bsum_products(x, mn16)), mins[r]);
      }
      acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(d * x.d), _mm512_cvtepi32_ps(isum), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) sums[r] = _mm512_reduce_add_ps(acc[r]) - horizontal_sum(mins[r]);
}

template <int R>
struct Q4K {
  static constexpr auto run = &dot_q45_k<R, false>;
};
template <int R>
struct Q5K {
  static constexpr auto run = &dot_q45_k<R, true>;
};
template <int R>
struct Q6K {
  static constexpr auto run = &dot_q6_k<R>;
};
template <int R>
struct Q2K {
  static constexpr auto run = &dot_q23_k<R, false>;
};
template <int R>
struct Q3K {
  static constexpr auto run = &dot_q23_k<R, true>;
};

}  // namespace

WeightDotFn weight_dot_avx512(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_Q4_K:
      return &dot_rows<XBlockQ8K, Q4K>;
    case HWINFER_DTYPE_Q5_K:
      return &dot_rows<XBlockQ8K, Q5K>;
    case HWINFER_DTYPE_Q6_K:
      return &dot_rows<XBlockQ8K, Q6K>;
    case HWINFER_DTYPE_Q2_K:
      return &dot_rows<XBlockQ8K, Q2K>;
    case HWINFER_DTYPE_Q3_K:
      return &dot_rows<XBlockQ8K, Q3K>;
    default:
      return nullptr;
  }
}

}  // namespace hwinfer::cpu
