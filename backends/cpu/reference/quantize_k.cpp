// quantize_k.cpp — see quantize_k.h. Each writer fills the bytes plugin.h's layout comments
// describe (and reference/weight_blocks.cpp reads back).
#include "reference/quantize_k.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hwinfer/plugin.h"
#include "reference/half.h"

namespace hwinfer::reference {

namespace {

void put_half(uint8_t* at, float value) {
  const uint16_t h = f32_to_f16(value);
  std::memcpy(at, &h, sizeof(h));
}

float half_value(float value) { return f16_to_f32(f32_to_f16(value)); }

int nearest(float v, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lround(v)), lo, hi);
}

// One Q4_K block: sub-block s of 32 spans [-min_s, -min_s + 15 scale_s] (min_s >= 0), its scale
// and min stored as 6-bit multiples of d and dmin.
void quantize_q4_k_block(const float* x, uint8_t* out) {
  float scale[8], min[8];
  for (int s = 0; s < 8; ++s) {
    const float* v = x + 32 * s;
    const float lo = std::min(0.0f, *std::min_element(v, v + 32));
    const float hi = *std::max_element(v, v + 32);
    scale[s] = (hi - lo) / 15.0f;
    min[s] = -lo;
  }
  const float d = half_value(*std::max_element(scale, scale + 8) / 63.0f);
  const float dmin = half_value(*std::max_element(min, min + 8) / 63.0f);
  put_half(out, d);
  put_half(out + 2, dmin);
  uint8_t* scales = out + 4;
  std::memset(scales, 0, 12);
  int sc[8], mn[8];
  for (int s = 0; s < 8; ++s) {
    sc[s] = d > 0.0f ? nearest(scale[s] / d, 0, 63) : 0;
    mn[s] = dmin > 0.0f ? nearest(min[s] / dmin, 0, 63) : 0;
    if (s < 4) {
      scales[s] = static_cast<uint8_t>(sc[s]);
      scales[s + 4] = static_cast<uint8_t>(mn[s]);
    } else {  // low four bits in byte s + 4, the top two above sub-block s - 4's six bits
      scales[s + 4] = static_cast<uint8_t>((sc[s] & 15) | ((mn[s] & 15) << 4));
      scales[s - 4] = static_cast<uint8_t>(scales[s - 4] | ((sc[s] >> 4) << 6));
      scales[s] = static_cast<uint8_t>(scales[s] | ((mn[s] >> 4) << 6));
    }
  }
  uint8_t* qs = out + 16;
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      int q[2];
      for (int half = 0; half < 2; ++half) {
        const int s = 2 * c + half;
        const float step = d * static_cast<float>(sc[s]);
        const float offset = dmin * static_cast<float>(mn[s]);
        q[half] = step > 0.0f ? nearest((x[64 * c + 32 * half + l] + offset) / step, 0, 15) : 0;
      }
      qs[32 * c + l] = static_cast<uint8_t>(q[0] | (q[1] << 4));
    }
  }
}

// One Q6_K block: sub-block s of 16 maps its value of largest magnitude to -32 (q - 32 in
// -32..31), its scale stored as an int8 multiple of d.
void quantize_q6_k_block(const float* x, uint8_t* out) {
  float scale[16];
  for (int s = 0; s < 16; ++s) {
    float amax = 0.0f, max = 0.0f;
    for (int t = 0; t < 16; ++t) {
      if (std::fabs(x[16 * s + t]) > amax) {
        amax = std::fabs(x[16 * s + t]);
        max = x[16 * s + t];
      }
    }
    scale[s] = max / -32.0f;
  }
  float largest = 0.0f;
  for (float v : scale) largest = std::max(largest, std::fabs(v));
  const float d = half_value(largest / 127.0f);
  put_half(out + 208, d);
  auto* scales = reinterpret_cast<int8_t*>(out + 192);
  int q[256];
  for (int s = 0; s < 16; ++s) {
    const int sc = d > 0.0f ? nearest(scale[s] / d, -127, 127) : 0;
    scales[s] = static_cast<int8_t>(sc);
    const float step = d * static_cast<float>(sc);
    for (int t = 0; t < 16; ++t) {
      q[16 * s + t] = step != 0.0f ? nearest(x[16 * s + t] / step, -32, 31) + 32 : 32;
    }
  }
  uint8_t* ql = out;
  uint8_t* qh = out + 128;
  std::memset(ql, 0, 128 + 64);
  for (int i = 0; i < 256; ++i) {  // plugin.h's Q6_K value layout
    const int h = i / 128, r = i % 128, l = r % 32, t = r / 32;
    uint8_t& low = ql[64 * h + l + 32 * (t & 1)];
    low = static_cast<uint8_t>(t < 2 ? (low & 0xf0) | (q[i] & 15)
                                     : (low & 0x0f) | ((q[i] & 15) << 4));
    qh[32 * h + l] = static_cast<uint8_t>(qh[32 * h + l] | ((q[i] >> 4) << (2 * t)));
  }
}

}  // namespace

void quantize_q4_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / 256; ++b) {
    quantize_q4_k_block(x + 256 * b, out + HWINFER_Q4_K_BLOCK_BYTES * b);
  }
}

void quantize_q6_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / 256; ++b) {
    quantize_q6_k_block(x + 256 * b, out + HWINFER_Q6_K_BLOCK_BYTES * b);
  }
}

}  // namespace hwinfer::reference
