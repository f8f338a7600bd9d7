// quantize_blocks.cpp — the out-of-line quantizers of quantize_blocks.h: the 32-value types with a
// min (Q4_1, Q5_1, as llama.cpp's quantize_row_q4_1_ref / _q5_1_ref) and the non-linear IQ4_NL
// (round to the nearest table entry; llama.cpp searches scales further, this does one refit).
#include "reference/quantize_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace hwinfer::reference {

namespace {

// One block of 32 with a min: d and m in the first four bytes, the fifth bits (|bits| = 5) in the
// next four, then the nibbles (value j low, value j + 16 high).
void quantize_with_min(const float* v, int bits, uint8_t* block) {
  const int top = (1 << bits) - 1;
  const float lo = *std::min_element(v, v + 32);
  const float hi = *std::max_element(v, v + 32);
  const float d = (hi - lo) / static_cast<float>(top);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  put_f16(block, d);
  put_f16(block + 2, lo);
  uint8_t* qs = block + (bits == 5 ? 8 : 4);
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int q0 = std::min(top, static_cast<int>((v[j] - lo) * id + 0.5f));
    const int q1 = std::min(top, static_cast<int>((v[j + 16] - lo) * id + 0.5f));
    qs[j] = static_cast<uint8_t>((q0 & 15) | ((q1 & 15) << 4));
    qh |= static_cast<uint32_t>(q0 >> 4) << j;
    qh |= static_cast<uint32_t>(q1 >> 4) << (j + 16);
  }
  if (bits == 5) std::memcpy(block + 4, &qh, sizeof(qh));
}

constexpr int8_t kIq4NlValues[16] = HWINFER_IQ4_NL_VALUES;

int nearest_iq4_nl(float v) {
  int best = 0;
  float best_error = std::numeric_limits<float>::infinity();
  for (int q = 0; q < 16; ++q) {
    const float error = std::fabs(v - static_cast<float>(kIq4NlValues[q]));
    if (error < best_error) best = q, best_error = error;
  }
  return best;
}

}  // namespace

void quantize_q4_1(const float* x, uint8_t* out, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b) {
    quantize_with_min(x + 32 * b, 4, out + b * HWINFER_Q4_1_BLOCK_BYTES);
  }
}

void quantize_q5_1(const float* x, uint8_t* out, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b) {
    quantize_with_min(x + 32 * b, 5, out + b * HWINFER_Q5_1_BLOCK_BYTES);
  }
}

void quantize_iq4_nl(const float* x, uint8_t* out, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* v = x + 32 * b;
    uint8_t* block = out + b * HWINFER_IQ4_NL_BLOCK_BYTES;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; ++j) {
      if (std::fabs(v[j]) > amax) amax = std::fabs(v[j]), max = v[j];
    }
    const float d0 = max / static_cast<float>(kIq4NlValues[0]);
    const float id = d0 != 0.0f ? 1.0f / d0 : 0.0f;
    int q[32];
    double qx = 0, qq = 0;
    for (int j = 0; j < 32; ++j) {
      q[j] = nearest_iq4_nl(v[j] * id);
      qx += static_cast<double>(kIq4NlValues[q[j]]) * v[j];
      qq += static_cast<double>(kIq4NlValues[q[j]]) * kIq4NlValues[q[j]];
    }
    put_f16(block, qq > 0 ? static_cast<float>(qx / qq) : 0.0f);  // least squares for those q
    for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
  }
}

}  // namespace hwinfer::reference
