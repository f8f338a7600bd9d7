// x86_weight_blocks.h — pieces shared by the x86 weight-type kernels (weight_formats_avx2.cpp,
// weight_formats_avx512.cpp; both compiled with at least -mavx2 -mf16c): reading a block's binary16
// scale, Q4_K / Q5_K's packed scales, and running a kernel over up to four rows of x at a time.
// Include only from such files (internal linkage, as avx2_sums.h).
#ifndef HWINFER_BACKENDS_CPU_X86_WEIGHT_BLOCKS_H_
#define HWINFER_BACKENDS_CPU_X86_WEIGHT_BLOCKS_H_

#include <immintrin.h>

#include <cstdint>
#include <cstring>

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
