// weight_formats_avx2.cpp — AVX2/FMA/F16C dot products (decode) and dequantizers (prefill) for the
// weight types of weight_formats.h (compiled with -mavx2 -mfma -mf16c; called only after
// detect_gemm_isa() returned kAvx2Fma).
//
// Same arithmetic as the portable kernels (int32 sums per sub-block, scaled in f32), so the two
// agree to f32 rounding. Quants are widened to unsigned bytes (maddubs needs one unsigned operand)
// and the offset a type subtracts is taken back out with x's block sums:
//   sum (q - o) x = sum q x - o sum x.
// maddubs adds two u8 x s8 products into an int16: at most 2 * 63 * 127 = 16002 for 6-bit quants.
// Every weight block is loaded once for all m rows of x.
#include <immintrin.h>

#include <cstring>

#include "avx2_sums.h"
#include "hwinfer/plugin.h"
#include "weight_formats.h"
#include "x86_weight_blocks.h"

namespace hwinfer::cpu {

namespace {

inline __m256i load32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// int32 x 8: sum over 32 values of u * x, each pair of int16 products weighted by |scales|
// (int16 per lane: one scale per 16 or 32 values).
inline __m256i scaled_dot(__m256i u, __m256i x, __m256i scales) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), scales);
}

// The scales of run t (values 32 t .. 32 t + 31) from |scales16| (sub-block s of 16 values in
// int16 lane s): lanes 0-7 (values 0..15 of the run) get sub-block 2 t, lanes 8-15 get 2 t + 1.
inline __m256i run_scales(__m256i scales16, int t) {
  const __m256i pair = _mm256_permutevar8x32_epi32(scales16, _mm256_set1_epi32(t));
  const __m256i pick = _mm256_setr_m128i(_mm_set1_epi16(0x0100), _mm_set1_epi16(0x0302));
  return _mm256_shuffle_epi8(pair, pick);
}

inline __m256i nibbles_lo(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0f)); }
inline __m256i nibbles_hi(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0f));
}

// 0x10 in every byte whose bit |bit| of |bits| is set, else 0.
inline __m256i fifth_bit(__m256i bits, int bit) {
  const __m256i mask = _mm256_set1_epi8(static_cast<char>(1 << bit));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bits, mask), mask),
                          _mm256_set1_epi8(0x10));
}

// ---- K-quants: one super-block of 256 against Q8_K x --------------------------------------------

// mins[j] * (bsums[2 j] + bsums[2 j + 1]) (the 8 mins as int16 against x's sums over each
// 32-value sub-block), summed in pairs: 4 int32 whose sum is the mins' dot product.
inline __m128i mins_products(__m128i mins16, const XBlockQ8K& x) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bsums));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bsums + 8));
  const __m128i pairs = _mm_hadd_epi16(lo, hi);  // sums of 32 values: at most 4064
  return _mm_madd_epi16(mins16, pairs);
}

// The 256 quants of a Q4_K (kQ5 false) or Q5_K block as unsigned bytes: q[t] holds values
// 32 t .. 32 t + 31 (sub-block t).
template <bool kQ5>
inline void q45_k_quants(const uint8_t* block, __m256i* q) {
  const uint8_t* qs = block + (kQ5 ? 48 : 16);
  const __m256i qh = kQ5 ? load32(block + 16) : _mm256_setzero_si256();
  for (int c = 0; c < 4; ++c) {
    const __m256i v = load32(qs + 32 * c);
    q[2 * c] = nibbles_lo(v);
    q[2 * c + 1] = nibbles_hi(v);
    if (kQ5) {
      q[2 * c] = _mm256_or_si256(q[2 * c], fifth_bit(qh, 2 * c));
      q[2 * c + 1] = _mm256_or_si256(q[2 * c + 1], fifth_bit(qh, 2 * c + 1));
    }
  }
}

// Q4_K (kQ5 false) and Q5_K: d sum_s sc_s sum q x - dmin sum_s mn_s sum x.
template <int R, bool kQ5>
void dot_q45_k(const XBlockQ8K* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
               float* sums) {
  constexpr int64_t kBytes = kQ5 ? HWINFER_Q5_K_BLOCK_BYTES : HWINFER_Q4_K_BLOCK_BYTES;
  __m256 acc[R];
  __m128 mins_acc[R];
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm256_setzero_ps();
    mins_acc[r] = _mm_setzero_ps();
  }
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBytes;
    const float d = half_at(block), dmin = half_at(block + 2);
    const __m128i scales_mins = k4_scales_mins(block + 4);
    const __m128i mins16 = _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8));
    alignas(16) uint8_t sc[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(sc), scales_mins);
    __m256i q[8];  // values 32 t .. 32 t + 31, unsigned
    q45_k_quants<kQ5>(block, q);
    for (int r = 0; r < R; ++r) {
      const XBlockQ8K& x = xq[r * x_stride + b];
      __m256i isum = _mm256_setzero_si256();
      for (int t = 0; t < 8; ++t) {
        isum = _mm256_add_epi32(
            isum, scaled_dot(q[t], load32(reinterpret_cast<const uint8_t*>(x.q + 32 * t)),
                             _mm256_set1_epi16(static_cast<int16_t>(sc[t]))));
      }
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * x.d), _mm256_cvtepi32_ps(isum), acc[r]);
      mins_acc[r] = _mm_fmadd_ps(_mm_set1_ps(dmin * x.d), _mm_cvtepi32_ps(mins_products(mins16, x)),
                                 mins_acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) sums[r] = horizontal_sum(acc[r]) - horizontal_sum(mins_acc[r]);
}

// The 256 six-bit quants of a Q6_K block as unsigned bytes: q[t] holds values 32 t .. 32 t + 31.
inline void q6_k_quants(const uint8_t* block, __m256i* q) {
  const __m256i three = _mm256_set1_epi8(3);
  for (int h = 0; h < 2; ++h) {
    const __m256i ql_a = load32(block + 64 * h), ql_b = load32(block + 64 * h + 32);
    const __m256i qh = load32(block + 128 + 32 * h);
    auto high = [&](int shift) {
      return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, shift), three), 4);
    };
    q[4 * h] = _mm256_or_si256(nibbles_lo(ql_a), high(0));
    q[4 * h + 1] = _mm256_or_si256(nibbles_lo(ql_b), high(2));
    q[4 * h + 2] = _mm256_or_si256(nibbles_hi(ql_a), high(4));
    q[4 * h + 3] = _mm256_or_si256(nibbles_hi(ql_b), high(6));
  }
}

// Q6_K: d sum_s sc_s sum (q - 32) x, q = 4 low bits | 2 high bits << 4.
template <int R>
void dot_q6_k(const XBlockQ8K* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
              float* sums) {
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * HWINFER_Q6_K_BLOCK_BYTES;
    const float d = half_at(block + 208);
    __m256i q[8];  // values 32 t .. 32 t + 31, unsigned 0..63
    q6_k_quants(block, q);
    const __m256i scales16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192)));
    for (int r = 0; r < R; ++r) {
      const XBlockQ8K& x = xq[r * x_stride + b];
      __m256i isum = _mm256_setzero_si256();
      for (int t = 0; t < 8; ++t) {
        const __m256i x_t = load32(reinterpret_cast<const uint8_t*>(x.q + 32 * t));
        isum = _mm256_add_epi32(isum, scaled_dot(q[t], x_t, run_scales(scales16, t)));
      }
      // The -32 every value carries: 32 sum_s sc_s bsums_s, taken out lane by lane.
      isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(bsum_products(x, scales16), 5));
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * x.d), _mm256_cvtepi32_ps(isum), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) sums[r] = horizontal_sum(acc[r]);
}

// The 256 quants of a Q2_K (kQ3 false) or Q3_K block as unsigned bytes: q[t] holds values
// 32 t .. 32 t + 31; Q3_K's are 0..7, the high bit counted as +4.
template <bool kQ3>
inline void q23_k_quants(const uint8_t* block, __m256i* q) {
  const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
  const uint8_t* qs = block + (kQ3 ? 32 : 16);
  const __m256i hmask = kQ3 ? load32(block) : _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    const __m256i v = load32(qs + 32 * h);
    for (int j = 0; j < 4; ++j) {
      __m256i crumbs = _mm256_and_si256(_mm256_srli_epi16(v, 2 * j), three);
      if (kQ3) {  // bit 4 h + j of each hmask byte, moved to bit 2
        const __m256i bit = _mm256_and_si256(_mm256_srli_epi16(hmask, 4 * h + j), one);
        crumbs = _mm256_or_si256(crumbs, _mm256_slli_epi16(bit, 2));
      }
      q[4 * h + j] = crumbs;
    }
  }
}

// Q2_K (kQ3 false): d sum_s sc_s sum q x - dmin sum_s mn_s sum x, q 2 bits, 4-bit sc and mn.
// Q3_K: d sum_s (sc_s - 32) sum (q - 4 [high bit clear]) x, q = 2 bits | high bit << 2.
template <int R, bool kQ3>
void dot_q23_k(const XBlockQ8K* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
               float* sums) {
  constexpr int64_t kBytes = kQ3 ? HWINFER_Q3_K_BLOCK_BYTES : HWINFER_Q2_K_BLOCK_BYTES;
  __m256 acc[R], mins[R];  // sum d x.d (q . x), sum dmin x.d (mn . bsums)
  for (int r = 0; r < R; ++r) acc[r] = mins[r] = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBytes;
    const auto [sc16, mn16, d, dmin] = q23_k_scales<kQ3>(block);
    __m256i q[8];  // values 32 t .. 32 t + 31, unsigned (Q3_K: 0..7 with the high bit as +4)
    q23_k_quants<kQ3>(block, q);
    for (int r = 0; r < R; ++r) {
      const XBlockQ8K& x = xq[r * x_stride + b];
      __m256i isum = _mm256_setzero_si256();
      for (int t = 0; t < 8; ++t) {
        const __m256i x_t = load32(reinterpret_cast<const uint8_t*>(x.q + 32 * t));
        isum = _mm256_add_epi32(isum, scaled_dot(q[t], x_t, run_scales(sc16, t)));
      }
      if (kQ3) {  // every value carries the +4 the type subtracts
        isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(bsum_products(x, sc16), 2));
      } else {
        mins[r] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * x.d),
                                  _mm256_cvtepi32_ps(bsum_products(x, mn16)), mins[r]);
      }
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * x.d), _mm256_cvtepi32_ps(isum), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) sums[r] = horizontal_sum(_mm256_sub_ps(acc[r], mins[r]));
}

// ---- 32-value blocks against XBlockQ8 -----------------------------------------------------------

// The block's 32 quants as bytes: Q4_1, Q5_1 and (kRaw) Q5_0 unsigned; Q5_0 (minus 16) and
// IQ4_NL (the table's values) signed.
template <uint32_t kDtype, bool kRaw = false>
inline __m256i block_quants(const uint8_t* block) {
  if constexpr (kDtype == HWINFER_DTYPE_Q4_1) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 4));
    return nibbles_lo(_mm256_setr_m128i(packed, _mm_srli_epi16(packed, 4)));
  } else if constexpr (kDtype == HWINFER_DTYPE_IQ4_NL) {
    static constexpr int8_t kValues[16] = HWINFER_IQ4_NL_VALUES;
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kValues));
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(packed, mask));
    const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(packed, 4), mask));
    return _mm256_setr_m128i(lo, hi);
  } else {  // Q5_0, Q5_1: nibbles | bit t of the uint32 qh << 4
    constexpr int kQh = kDtype == HWINFER_DTYPE_Q5_1 ? 4 : 2;
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + kQh + 4));
    const __m256i nibbles = nibbles_lo(_mm256_setr_m128i(packed, _mm_srli_epi16(packed, 4)));
    uint32_t qh;
    std::memcpy(&qh, block + kQh, sizeof(qh));
    // Byte t gets byte t / 8 of qh, then keeps bit t % 8 of it.
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(static_cast<int>(qh)),
        _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
    const __m256i bit_of_byte = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit_of_byte), bit_of_byte);
    const __m256i q = _mm256_or_si256(nibbles, _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
    if constexpr (kDtype == HWINFER_DTYPE_Q5_0 && !kRaw) {
      return _mm256_sub_epi8(q, _mm256_set1_epi8(16));
    }
    return q;
  }
}

template <uint32_t kDtype>
constexpr bool kUnsigned = kDtype == HWINFER_DTYPE_Q4_1 || kDtype == HWINFER_DTYPE_Q5_1;

template <int R, uint32_t kDtype, int64_t kBytes>
void dot_32(const XBlockQ8* xq, int64_t x_stride, const uint8_t* w_row, int64_t blocks,
            float* sums) {
  __m256 acc[R];
  float mins[R];
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm256_setzero_ps();
    mins[r] = 0.0f;
  }
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBytes;
    const __m256i w = block_quants<kDtype>(block);
    const __m256i w_abs = kUnsigned<kDtype> ? w : _mm256_sign_epi8(w, w);
    const float d = half_at(block);
    const float m = kUnsigned<kDtype> ? half_at(block + 2) : 0.0f;
    for (int r = 0; r < R; ++r) {
      const XBlockQ8& x_block = xq[r * x_stride + b];
      __m256i x = load32(reinterpret_cast<const uint8_t*>(x_block.q));
      if (!kUnsigned<kDtype>) x = _mm256_sign_epi8(x, w);
      const __m256i isum = _mm256_madd_epi16(_mm256_maddubs_epi16(w_abs, x), ones);
      acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(d * x_block.d), _mm256_cvtepi32_ps(isum), acc[r]);
      if (kUnsigned<kDtype>) mins[r] += m * x_block.s;
    }
  }
  for (int r = 0; r < R; ++r) sums[r] = horizontal_sum(acc[r]) + mins[r];
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
template <int R>
struct Q41 {
  static constexpr auto run = &dot_32<R, HWINFER_DTYPE_Q4_1, HWINFER_Q4_1_BLOCK_BYTES>;
};
template <int R>
struct Q50 {
  static constexpr auto run = &dot_32<R, HWINFER_DTYPE_Q5_0, HWINFER_Q5_0_BLOCK_BYTES>;
};
template <int R>
struct Q51 {
  static constexpr auto run = &dot_32<R, HWINFER_DTYPE_Q5_1, HWINFER_Q5_1_BLOCK_BYTES>;
};
template <int R>
struct IQ4NL {
  static constexpr auto run = &dot_32<R, HWINFER_DTYPE_IQ4_NL, HWINFER_IQ4_NL_BLOCK_BYTES>;
};

// ---- dequantization (the prefill path packs f32 weight panels) --------------------------------

// out[0:32] = scale * q - min for the 32 unsigned (kSigned: signed) bytes of |q|, values 0-15 with
// |lo|, 16-31 with |hi| (one sub-block of 32, or two of 16).
struct ScaleMin {
  float scale, min;
};
template <bool kSigned = false>
inline void store_run(__m256i q, ScaleMin lo, ScaleMin hi, float* out) {
  const __m128i bytes[2] = {_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1)};
  for (int half = 0; half < 2; ++half) {
    const ScaleMin sm = half == 0 ? lo : hi;
    const __m256 s = _mm256_set1_ps(sm.scale), m = _mm256_set1_ps(sm.min);
    for (int p = 0; p < 2; ++p) {
      const __m128i part = p == 0 ? bytes[half] : _mm_srli_si128(bytes[half], 8);
      const __m256 values =
          _mm256_cvtepi32_ps(kSigned ? _mm256_cvtepi8_epi32(part) : _mm256_cvtepu8_epi32(part));
      _mm256_storeu_ps(out + 16 * half + 8 * p, _mm256_fmsub_ps(s, values, m));
    }
  }
}

// Q4_K / Q5_K: d sc q - dmin mn, sub-block t of 32 = run t.
template <bool kQ5>
void dequantize_q45_k(const uint8_t* w_row, int64_t blocks, float* out) {
  constexpr int64_t kBytes = kQ5 ? HWINFER_Q5_K_BLOCK_BYTES : HWINFER_Q4_K_BLOCK_BYTES;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBytes;
    const float d = half_at(block), dmin = half_at(block + 2);
    alignas(16) uint8_t scales_mins[16];  // scales 0-7, mins 8-15
    _mm_store_si128(reinterpret_cast<__m128i*>(scales_mins), k4_scales_mins(block + 4));
    __m256i q[8];
    q45_k_quants<kQ5>(block, q);
    for (int t = 0; t < 8; ++t) {
      const ScaleMin sm{d * scales_mins[t], dmin * scales_mins[8 + t]};
      store_run(q[t], sm, sm, out + 256 * b + 32 * t);
    }
  }
}

// Q2_K: d sc q - dmin mn; Q3_K: d (sc - 32) (q - 4) as s q - 4 s, s = d (sc - 32) (exact: the
// product has at most 20 significant bits). Run t = sub-blocks 2 t and 2 t + 1.
template <bool kQ3>
void dequantize_q23_k(const uint8_t* w_row, int64_t blocks, float* out) {
  constexpr int64_t kBytes = kQ3 ? HWINFER_Q3_K_BLOCK_BYTES : HWINFER_Q2_K_BLOCK_BYTES;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBytes;
    alignas(32) int16_t sc[16], mn[16];
    float d = 0.0f, dmin = 0.0f;
    if (kQ3) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(sc), q3_k_scales(block + 96));
      d = half_at(block + 108);
    } else {
      for (int s = 0; s < 16; ++s) sc[s] = block[s] & 15, mn[s] = block[s] >> 4;
      d = half_at(block + 80);
      dmin = half_at(block + 82);
    }
    __m256i q[8];
    q23_k_quants<kQ3>(block, q);
    auto scale_min = [&](int s) {
      const float scale = d * static_cast<float>(sc[s]);
      return kQ3 ? ScaleMin{scale, 4 * scale} : ScaleMin{scale, dmin * static_cast<float>(mn[s])};
    };
    for (int t = 0; t < 8; ++t) {
      store_run(q[t], scale_min(2 * t), scale_min(2 * t + 1), out + 256 * b + 32 * t);
    }
  }
}

// Q4_1 / Q5_1: d q + m; Q5_0: d q - 16 d (exact); IQ4_NL: d table[q].
template <uint32_t kDtype, int64_t kBytes>
void dequantize_32(const uint8_t* w_row, int64_t blocks, float* out) {
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBytes;
    const float d = half_at(block);
    const __m256i q = block_quants<kDtype, true>(block);
    if constexpr (kDtype == HWINFER_DTYPE_IQ4_NL) {
      store_run<true>(q, {d, 0.0f}, {d, 0.0f}, out + 32 * b);
    } else {
      const float min = kDtype == HWINFER_DTYPE_Q5_0 ? 16 * d : -half_at(block + 2);
      store_run(q, {d, min}, {d, min}, out + 32 * b);
    }
  }
}

void dequantize_q6_k(const uint8_t* w_row, int64_t blocks, float* out) {
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * HWINFER_Q6_K_BLOCK_BYTES;
    const auto* sc = reinterpret_cast<const int8_t*>(block + 192);
    const float d = half_at(block + 208);
    __m256i q[8];
    q6_k_quants(block, q);
    for (int t = 0; t < 8; ++t) {  // values 32 t ..: sub-blocks 2 t and 2 t + 1
      // d sc (q - 32) as d sc q - 32 d sc: the same float, 32 d sc being exact.
      const float lo = d * sc[2 * t], hi = d * sc[2 * t + 1];
      store_run(q[t], {lo, 32 * lo}, {hi, 32 * hi}, out + 256 * b + 32 * t);
    }
  }
}

}  // namespace

WeightDequantizeFn weight_dequantize_avx2(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_Q4_K:
      return &dequantize_q45_k<false>;
    case HWINFER_DTYPE_Q5_K:
      return &dequantize_q45_k<true>;
    case HWINFER_DTYPE_Q6_K:
      return &dequantize_q6_k;
    case HWINFER_DTYPE_Q2_K:
      return &dequantize_q23_k<false>;
    case HWINFER_DTYPE_Q3_K:
      return &dequantize_q23_k<true>;
    case HWINFER_DTYPE_Q4_1:
      return &dequantize_32<HWINFER_DTYPE_Q4_1, HWINFER_Q4_1_BLOCK_BYTES>;
    case HWINFER_DTYPE_Q5_0:
      return &dequantize_32<HWINFER_DTYPE_Q5_0, HWINFER_Q5_0_BLOCK_BYTES>;
    case HWINFER_DTYPE_Q5_1:
      return &dequantize_32<HWINFER_DTYPE_Q5_1, HWINFER_Q5_1_BLOCK_BYTES>;
    case HWINFER_DTYPE_IQ4_NL:
      return &dequantize_32<HWINFER_DTYPE_IQ4_NL, HWINFER_IQ4_NL_BLOCK_BYTES>;
    default:
      return nullptr;
  }
}

WeightDotFn weight_dot_avx2(uint32_t dtype) {
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
    case HWINFER_DTYPE_Q4_1:
      return &dot_rows<XBlockQ8, Q41>;
    case HWINFER_DTYPE_Q5_0:
      return &dot_rows<XBlockQ8, Q50>;
    case HWINFER_DTYPE_Q5_1:
      return &dot_rows<XBlockQ8, Q51>;
    case HWINFER_DTYPE_IQ4_NL:
      return &dot_rows<XBlockQ8, IQ4NL>;
    default:
      return nullptr;
  }
}

}  // namespace hwinfer::cpu
