// weight_blocks.cpp — see weight_blocks.h. Each dequantizer computes value i of a block from the
// index formulas of plugin.h's layout comments.
#include "reference/weight_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "hwinfer/plugin.h"
#include "reference/half.h"

namespace hwinfer::reference {

namespace {

double half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof(h));
  return f16_to_f32(h);
}

// The 4-bit value i (0..31) of a 32-value block whose nibbles start at |qs|: low nibbles hold
// values 0..15, high nibbles 16..31.
int nibble32(const uint8_t* qs, int i) { return i < 16 ? qs[i] & 15 : qs[i - 16] >> 4; }

double value_32(uint32_t dtype, const uint8_t* b, int i) {
  static constexpr int8_t kIq4nl[16] = HWINFER_IQ4_NL_VALUES;
  switch (dtype) {
    case HWINFER_DTYPE_Q4_0:
      return half_at(b) * (nibble32(b + 2, i) - 8);
    case HWINFER_DTYPE_Q4_1:
      return half_at(b) * nibble32(b + 4, i) + half_at(b + 2);
    case HWINFER_DTYPE_Q5_0:
    case HWINFER_DTYPE_Q5_1: {
      const bool q5_1 = dtype == HWINFER_DTYPE_Q5_1;
      const uint8_t* qh = b + (q5_1 ? 4 : 2);
      const int high = (qh[i / 8] >> (i % 8)) & 1;  // bit i of the little-endian uint32
      const int q = nibble32(qh + 4, i) | (high << 4);
      return q5_1 ? half_at(b) * q + half_at(b + 2) : half_at(b) * (q - 16);
    }
    case HWINFER_DTYPE_Q8_0:
      return half_at(b) * static_cast<int8_t>(b[2 + i]);
    case HWINFER_DTYPE_IQ4_NL:
      return half_at(b) * kIq4nl[nibble32(b + 2, i)];
    default:
      return 0.0;
  }
}

// The 2-bit value of i (0..255) in Q2_K / Q3_K's qs layout.
int crumb256(const uint8_t* qs, int i) {
  const int h = i / 128, r = i % 128;
  return (qs[32 * h + r % 32] >> (2 * (r / 32))) & 3;
}

// Q4_K / Q5_K's 6-bit scale and min of sub-block s (0..7).
void scale_min_k4(const uint8_t* scales, int s, int* scale, int* min) {
  if (s < 4) {
    *scale = scales[s] & 63;
    *min = scales[s + 4] & 63;
  } else {
    *scale = (scales[s + 4] & 15) | ((scales[s - 4] >> 6) << 4);
    *min = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
  }
}

double value_256(uint32_t dtype, const uint8_t* b, int i) {
  switch (dtype) {
    case HWINFER_DTYPE_Q2_K: {
      const uint8_t sc = b[i / 16];
      return half_at(b + 80) * (sc & 15) * crumb256(b + 16, i) - half_at(b + 82) * (sc >> 4);
    }
    case HWINFER_DTYPE_Q3_K: {
      const uint8_t* scales = b + 96;
      const int s = i / 16;
      const int low = s < 8 ? scales[s] & 15 : scales[s - 8] >> 4;
      const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
      const int bit = (b[i % 32] >> (i / 32)) & 1;
      return half_at(b + 108) * ((low | (high << 4)) - 32) * (crumb256(b + 32, i) - (bit ? 0 : 4));
    }
    case HWINFER_DTYPE_Q4_K:
    case HWINFER_DTYPE_Q5_K: {
      const bool q5 = dtype == HWINFER_DTYPE_Q5_K;
      const uint8_t* qs = b + (q5 ? 48 : 16);
      const uint8_t byte = qs[32 * (i / 64) + i % 32];
      int q = i % 64 < 32 ? byte & 15 : byte >> 4;
      if (q5) q += ((b[16 + i % 32] >> (i / 32)) & 1) * 16;
      int scale = 0, min = 0;
      scale_min_k4(b + 4, i / 32, &scale, &min);
      return half_at(b) * scale * q - half_at(b + 2) * min;
    }
    case HWINFER_DTYPE_Q6_K: {
      const int h = i / 128, r = i % 128, l = r % 32, t = r / 32;
      const uint8_t low_byte = b[64 * h + l + 32 * (t & 1)];
      const int low = t < 2 ? low_byte & 15 : low_byte >> 4;
      const int high = (b[128 + 32 * h + l] >> (2 * t)) & 3;
      const auto scale = static_cast<int8_t>(b[192 + i / 16]);
      return half_at(b + 208) * scale * ((low | (high << 4)) - 32);
    }
    default:
      return 0.0;
  }
}

}  // namespace

void dequantize_blocks(uint32_t dtype, const uint8_t* blocks, int64_t n, float* out) {
  const int64_t values = hwinfer_dtype_block_values(dtype);
  const int64_t bytes = hwinfer_dtype_block_bytes(dtype);
  if (values == 0) return;
  for (int64_t block = 0; block < n / values; ++block) {
    const uint8_t* b = blocks + block * bytes;
    for (int i = 0; i < values; ++i) {
      const double v = values == 32 ? value_32(dtype, b, i) : value_256(dtype, b, i);
      out[block * values + i] = static_cast<float>(v);
    }
  }
}

ActivationFormat activation_format_for(uint32_t weight_dtype) {
  switch (weight_dtype) {
    case HWINFER_DTYPE_Q4_1:
    case HWINFER_DTYPE_Q5_1:
      return ActivationFormat::kQ8_1;
    case HWINFER_DTYPE_Q2_K:
    case HWINFER_DTYPE_Q3_K:
    case HWINFER_DTYPE_Q4_K:
    case HWINFER_DTYPE_Q5_K:
    case HWINFER_DTYPE_Q6_K:
      return ActivationFormat::kQ8_K;
    default:
      return ActivationFormat::kQ8_0;
  }
}

int64_t activation_block_values(ActivationFormat format) {
  return format == ActivationFormat::kQ8_K ? 256 : 32;
}

ActivationBlock quantize_activation_block(ActivationFormat format, const float* x,
                                          bool binary16_scale) {
  ActivationBlock block;
  if (format == ActivationFormat::kQ8_K) {
    float amax = 0.0f, max = 0.0f;  // the value of largest magnitude, with its sign
    for (int t = 0; t < 256; ++t) {
      if (std::fabs(x[t]) > amax) {
        amax = std::fabs(x[t]);
        max = x[t];
      }
    }
    if (amax == 0.0f) return block;
    const float iscale = -127.0f / max;
    for (int t = 0; t < 256; ++t) {
      block.q[t] = static_cast<int8_t>(std::min(127L, std::lrint(iscale * x[t])));
    }
    block.d = 1.0f / iscale;
    return block;
  }
  float amax = 0.0f;
  for (int t = 0; t < 32; ++t) amax = std::max(amax, std::fabs(x[t]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int sum = 0;
  for (int t = 0; t < 32; ++t) {
    block.q[t] = static_cast<int8_t>(std::lround(x[t] * id));
    sum += block.q[t];
  }
  auto stored = [binary16_scale](float v) {
    return binary16_scale ? f16_to_f32(f32_to_f16(v)) : v;
  };
  block.d = stored(d);
  if (format == ActivationFormat::kQ8_1) block.s = stored(static_cast<float>(sum) * d);
  return block;
}

void fill_random_blocks(uint32_t dtype, int64_t n_blocks, uint64_t seed, uint8_t* out) {
  const int64_t bytes = hwinfer_dtype_block_bytes(dtype);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < n_blocks * bytes; ++i) out[i] = static_cast<uint8_t>(byte(rng));
  // Byte offsets of the binary16 fields of each layout (plugin.h).
  std::vector<int> fields = {0};
  switch (dtype) {
    case HWINFER_DTYPE_Q4_1:
    case HWINFER_DTYPE_Q5_1:
    case HWINFER_DTYPE_Q4_K:
    case HWINFER_DTYPE_Q5_K:
      fields = {0, 2};
      break;
    case HWINFER_DTYPE_Q2_K:
      fields = {80, 82};
      break;
    case HWINFER_DTYPE_Q3_K:
      fields = {108};
      break;
    case HWINFER_DTYPE_Q6_K:
      fields = {208};
      break;
    default:
      break;
  }
  const float scale = hwinfer_dtype_block_values(dtype) == 256 ? 1.0f / 2048 : 1.0f / 16;
  for (int64_t b = 0; b < n_blocks; ++b) {
    for (int field : fields) {
      const uint16_t h = f32_to_f16(uniform(rng) * scale);
      std::memcpy(out + b * bytes + field, &h, sizeof(h));
    }
  }
}

}  // namespace hwinfer::reference
