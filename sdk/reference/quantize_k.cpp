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

float half_value(float value) { return f16_to_f32(f32_to_f16(value)); }

int nearest(float v, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lround(v)), lo, hi);
}

// Sub-blocks of |size| values with a scale and a min, as Q2_K / Q4_K / Q5_K store them: sub-block s
// spans [-min_s, -min_s + levels scale_s] (min_s >= 0), scale_s and min_s stored as
// |scale_bits|-bit multiples of the binary16 d and dmin. Round to nearest throughout.
struct AffineScales {
  float d = 0, dmin = 0;
  int sc[16] = {}, mn[16] = {};
  // The step and offset of sub-block s: value = step q - offset.
  float step(int s) const { return d * static_cast<float>(sc[s]); }
  float offset(int s) const { return dmin * static_cast<float>(mn[s]); }
  int quantize(float v, int s, int levels) const {
    return step(s) > 0.0f ? nearest((v + offset(s)) / step(s), 0, levels) : 0;
  }
};

AffineScales affine_scales(const float* x, int subs, int size, int levels, int scale_bits) {
  float scale[16], min[16];
  for (int s = 0; s < subs; ++s) {
    const float* v = x + size * s;
    const float lo = std::min(0.0f, *std::min_element(v, v + size));
    scale[s] = (*std::max_element(v, v + size) - lo) / static_cast<float>(levels);
    min[s] = -lo;
  }
  const int top = (1 << scale_bits) - 1;
  AffineScales a;
  a.d = half_value(*std::max_element(scale, scale + subs) / static_cast<float>(top));
  a.dmin = half_value(*std::max_element(min, min + subs) / static_cast<float>(top));
  for (int s = 0; s < subs; ++s) {
    a.sc[s] = a.d > 0.0f ? nearest(scale[s] / a.d, 0, top) : 0;
    a.mn[s] = a.dmin > 0.0f ? nearest(min[s] / a.dmin, 0, top) : 0;
  }
  return a;
}

// Q4_K / Q5_K's d, dmin and 12 scale bytes (plugin.h's packing of eight 6-bit scales and mins).
void put_k_scales(const AffineScales& a, uint8_t* out) {
  put_f16(out, a.d);
  put_f16(out + 2, a.dmin);
  uint8_t* scales = out + 4;
  std::memset(scales, 0, 12);
  for (int s = 0; s < 8; ++s) {
    if (s < 4) {
      scales[s] = static_cast<uint8_t>(a.sc[s]);
      scales[s + 4] = static_cast<uint8_t>(a.mn[s]);
    } else {  // low four bits in byte s + 4, the top two above sub-block s - 4's six bits
      scales[s + 4] = static_cast<uint8_t>((a.sc[s] & 15) | ((a.mn[s] & 15) << 4));
      scales[s - 4] = static_cast<uint8_t>(scales[s - 4] | ((a.sc[s] >> 4) << 6));
      scales[s] = static_cast<uint8_t>(scales[s] | ((a.mn[s] >> 4) << 6));
    }
  }
}

// One Q4_K (|bits| 4) or Q5_K (5) block: 8 sub-blocks of 32. The low nibble of value i sits in
// qs[32 (i / 64) + i % 32] (low half for i % 64 < 32), a fifth bit in bit i / 32 of qh[i % 32].
void quantize_q45_k_block(const float* x, int bits, uint8_t* out) {
  const int levels = (1 << bits) - 1;
  const AffineScales a = affine_scales(x, 8, 32, levels, 6);
  put_k_scales(a, out);
  uint8_t* qh = out + 16;
  uint8_t* qs = out + (bits == 5 ? 48 : 16);
  if (bits == 5) std::memset(qh, 0, 32);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int q0 = a.quantize(x[64 * c + l], 2 * c, levels);
      const int q1 = a.quantize(x[64 * c + 32 + l], 2 * c + 1, levels);
      qs[32 * c + l] = static_cast<uint8_t>((q0 & 15) | ((q1 & 15) << 4));
      if (bits == 5) {
        qh[l] = static_cast<uint8_t>(qh[l] | ((q0 >> 4) << (2 * c)) | ((q1 >> 4) << (2 * c + 1)));
      }
    }
  }
}

// The 2-bit low parts of 256 values into |qs| (64 bytes): value i in bits 2 (i % 128 / 32) .. +1
// of qs[32 (i / 128) + i % 32], as Q2_K and Q3_K store them.
void put_2bit(const int* q, uint8_t* qs) {
  std::memset(qs, 0, 64);
  for (int i = 0; i < 256; ++i) {
    uint8_t& byte = qs[32 * (i / 128) + i % 32];
    byte = static_cast<uint8_t>(byte | ((q[i] & 3) << (2 * (i % 128 / 32))));
  }
}

// One Q2_K block: 16 sub-blocks of 16, q in 0..3, 4-bit scales and mins.
void quantize_q2_k_block(const float* x, uint8_t* out) {
  const AffineScales a = affine_scales(x, 16, 16, 3, 4);
  int q[256];
  for (int i = 0; i < 256; ++i) q[i] = a.quantize(x[i], i / 16, 3);
  for (int s = 0; s < 16; ++s) out[s] = static_cast<uint8_t>(a.sc[s] | (a.mn[s] << 4));
  put_2bit(q, out + 16);
  put_f16(out + 80, a.d);
  put_f16(out + 82, a.dmin);
}

// Symmetric sub-blocks of 16 (Q3_K, Q6_K): scale[s] maps sub-block s's value of largest magnitude
// to -|bottom|; returns the scale of largest magnitude, with its sign.
float symmetric_scales(const float* x, float bottom, float* scale) {
  float largest = 0.0f, largest_signed = 0.0f;
  for (int s = 0; s < 16; ++s) {
    float amax = 0.0f, max = 0.0f;
    for (int t = 0; t < 16; ++t) {
      if (std::fabs(x[16 * s + t]) > amax) amax = std::fabs(x[16 * s + t]), max = x[16 * s + t];
    }
    scale[s] = max / -bottom;
    if (std::fabs(scale[s]) > largest) largest = std::fabs(scale[s]), largest_signed = scale[s];
  }
  return largest_signed;
}

// One Q3_K block: 16 sub-blocks of 16, each mapping its value of largest magnitude to -4
// (q - 4 in -4..3), its scale a signed 6-bit multiple of d (stored + 32).
void quantize_q3_k_block(const float* x, uint8_t* out) {
  float scale[16];
  const float largest_signed = symmetric_scales(x, 4.0f, scale);
  const float d = half_value(largest_signed / -32.0f);
  int q[256];
  uint8_t* hmask = out;
  uint8_t* scales = out + 96;
  std::memset(hmask, 0, 32);
  std::memset(scales, 0, 12);
  for (int s = 0; s < 16; ++s) {
    const int sc = d != 0.0f ? nearest(scale[s] / d, -32, 31) : 0;
    const int stored = sc + 32;
    scales[s % 8] = static_cast<uint8_t>(scales[s % 8] | ((stored & 15) << (s < 8 ? 0 : 4)));
    scales[8 + s % 4] = static_cast<uint8_t>(scales[8 + s % 4] | ((stored >> 4) << (2 * (s / 4))));
    const float step = d * static_cast<float>(sc);
    for (int t = 0; t < 16; ++t) {
      q[16 * s + t] = (step != 0.0f ? nearest(x[16 * s + t] / step, -4, 3) : 0) + 4;
    }
  }
  for (int i = 0; i < 256; ++i) {
    hmask[i % 32] = static_cast<uint8_t>(hmask[i % 32] | ((q[i] >> 2) << (i / 32)));
  }
  put_2bit(q, out + 32);
  put_f16(out + 108, d);
}

// One Q6_K block: sub-block s of 16 maps its value of largest magnitude to -32 (q - 32 in
// -32..31), its scale stored as an int8 multiple of d, the largest scale as -128 (as llama.cpp
// stores it: a largest of +-127 would cancel the 127 of the Q8_K activations' scale and make
// exact rounding ties of x * iscale common, where any change of arithmetic order flips a value).
void quantize_q6_k_block(const float* x, uint8_t* out) {
  float scale[16];
  const float largest_signed = symmetric_scales(x, 32.0f, scale);
  const float d = half_value(largest_signed / -128.0f);
  put_f16(out + 208, d);
  auto* scales = reinterpret_cast<int8_t*>(out + 192);
  int q[256];
  for (int s = 0; s < 16; ++s) {
    const int sc = d != 0.0f ? nearest(scale[s] / d, -128, 127) : 0;
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

void quantize_q2_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / 256; ++b) {
    quantize_q2_k_block(x + 256 * b, out + HWINFER_Q2_K_BLOCK_BYTES * b);
  }
}

void quantize_q3_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / 256; ++b) {
    quantize_q3_k_block(x + 256 * b, out + HWINFER_Q3_K_BLOCK_BYTES * b);
  }
}

void quantize_q4_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / 256; ++b) {
    quantize_q45_k_block(x + 256 * b, 4, out + HWINFER_Q4_K_BLOCK_BYTES * b);
  }
}

void quantize_q5_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / 256; ++b) {
    quantize_q45_k_block(x + 256 * b, 5, out + HWINFER_Q5_K_BLOCK_BYTES * b);
  }
}

void quantize_q6_k(const float* x, int64_t n, uint8_t* out) {
  for (int64_t b = 0; b < n / 256; ++b) {
    quantize_q6_k_block(x + 256 * b, out + HWINFER_Q6_K_BLOCK_BYTES * b);
  }
}

}  // namespace hwinfer::reference
