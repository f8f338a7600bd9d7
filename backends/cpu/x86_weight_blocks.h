// x86_weight_blocks.h — pieces shared by the x86 weight-type kernels (weight_formats_avx2.cpp,
// weight_formats_avx512.cpp; both compiled with at least -mavx2 -mf16c): reading a block's binary16
// scale, Q4_K / Q5_K's and Q3_K's packed scales, x's sub-block sums against scales, and running a
// kernel over up to four rows of x at a time. Include only from such files (internal linkage, as
// avx2_sums.h).
#ifndef HWINFER_BACKENDS_CPU_X86_WEIGHT_BLOCKS_H_
#define HWINFER_BACKENDS_CPU_X86_WEIGHT_BLOCKS_H_

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "weight_formats.h"

namespace hwinfer::cpu {
namespace {

// The binary16 at |p| as a float.
inline float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof(h));
  return _cvtsh_ss(h);
}

// Q4_K / Q5_K's 12 scale bytes -> the 8 six-bit scales (bytes 0-7 of the result) and the 8 mins
// (bytes 8-15), four sub-blocks per 32-bit word: sub-blocks 0-3 keep the low six bits of bytes
// 0-3 (scales) and 4-7 (mins); sub-blocks 4-7 take the nibbles of bytes 8-11 as low bits and the
// top two bits of bytes 0-3 / 4-7 as high bits.
inline __m128i k4_scales_mins(const uint8_t* scales) {
  uint32_t word[3];
  std::memcpy(word, scales, sizeof(word));
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kTop2 = 0x03030303;
  const uint32_t sc_lo = word[0] & kLow6, mn_lo = word[1] & kLow6;
  const uint32_t sc_hi = (word[2] & kLow4) | (((word[0] >> 6) & kTop2) << 4);
  const uint32_t mn_hi = ((word[2] >> 4) & kLow4) | (((word[1] >> 6) & kTop2) << 4);
  return _mm_setr_epi32(static_cast<int>(sc_lo), static_cast<int>(sc_hi), static_cast<int>(mn_lo),
                        static_cast<int>(mn_hi));
}

// scales[s] * bsums[s] over the 16 sub-blocks of 16 (scales as 16 int16), summed in pairs: 8
// int32 whose sum is sum_s scales[s] bsums[s].
inline __m256i bsum_products(const XBlockQ8K& x, __m256i scales16) {
  const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums));
  return _mm256_madd_epi16(bsums, scales16);
}

// Q3_K's 12 scale bytes -> the 16 six-bit scales minus 32, as int16: sub-blocks 4 w .. 4 w + 3
// take their low four bits from the low (w < 2) or high nibbles of bytes 4 (w % 2) .. +3 and their
// high two bits from bits 2 w .. 2 w + 1 of bytes 8-11.
inline __m256i q3_k_scales(const uint8_t* scales) {
  uint32_t word[3];
  std::memcpy(word, scales, sizeof(word));
  constexpr uint32_t kLow4 = 0x0f0f0f0f, kTop2 = 0x03030303;
  uint32_t out[4];
  for (int w = 0; w < 4; ++w) {
    const uint32_t low = (word[w % 2] >> (4 * (w / 2))) & kLow4;
    out[w] = low | (((word[2] >> (2 * w)) & kTop2) << 4);
  }
  // From registers: four 32-bit stores then one 128-bit load would stall store forwarding.
  const __m128i bytes = _mm_setr_epi32(static_cast<int>(out[0]), static_cast<int>(out[1]),
                                       static_cast<int>(out[2]), static_cast<int>(out[3]));
  return _mm256_cvtepi8_epi16(_mm_sub_epi8(bytes, _mm_set1_epi8(32)));
}

// A Q2_K (kQ3 false) or Q3_K block's scales: int16 per sub-block of 16 (Q3_K's minus 32), Q2_K's
// mins (Q3_K: zeros), d and dmin (Q3_K: 0).
struct Q23Scales {
  __m256i sc16, mn16;
  float d, dmin;
};
template <bool kQ3>
inline Q23Scales q23_k_scales(const uint8_t* block) {
  if (kQ3) return {q3_k_scales(block + 96), _mm256_setzero_si256(), half_at(block + 108), 0.0f};
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
  const __m128i low4 = _mm_set1_epi8(15);
  return {_mm256_cvtepu8_epi16(_mm_and_si128(packed, low4)),
          _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4)), half_at(block + 80),
          half_at(block + 82)};
}

// Rows of x in groups of up to 4 against one weight row.
template <typename X, template <int> class Kernel>
void dot_rows(const void* xq, int64_t x_stride, int64_t m, const uint8_t* w_row, int64_t blocks,
              float* sums) {
  const X* x = static_cast<const X*>(xq);
  for (int64_t i = 0; i < m; i += 4) {
    switch (m - i) {
      case 1:
        Kernel<1>::run(x + i * x_stride, x_stride, w_row, blocks, sums + i);
        break;
      case 2:
        Kernel<2>::run(x + i * x_stride, x_stride, w_row, blocks, sums + i);
        break;
      case 3:
        Kernel<3>::run(x + i * x_stride, x_stride, w_row, blocks, sums + i);
        break;
      default:
        Kernel<4>::run(x + i * x_stride, x_stride, w_row, blocks, sums + i);
        break;
    }
  }
}

}  // namespace
}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_X86_WEIGHT_BLOCKS_H_
