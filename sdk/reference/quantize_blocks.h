// quantize_blocks.h — GGUF block quantization of the 32-value types (Q8_0, Q4_0, Q5_0 inline, as
// llama.cpp's reference quantize_row_*_ref; Q4_1, Q5_1, IQ4_NL in quantize_blocks.cpp) and
// dequantization of Q8_0 / Q4_0, in plugin.h's layouts. Scalar and exact; used to write models
// (`hwinfer model synth` / `model quantize`), to make test inputs and as the oracle of the
// quantized kernels. Must not change rounding: files written here must read the same in llama.cpp.
#ifndef HWINFER_SDK_REFERENCE_QUANTIZE_BLOCKS_H_
#define HWINFER_SDK_REFERENCE_QUANTIZE_BLOCKS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "hwinfer/plugin.h"
#include "reference/half.h"

namespace hwinfer::reference {

// |n| values (a multiple of 32) -> n / 32 blocks. d = max|x| / 127, q = round(x / d).
inline void quantize_q8_0(const float* x, hwinfer_block_q8_0* out, int64_t n) {
  for (int64_t b = 0; b < n / HWINFER_QK8_0; ++b) {
    const float* v = x + b * HWINFER_QK8_0;
    float amax = 0.0f;
    for (int j = 0; j < HWINFER_QK8_0; ++j) amax = std::max(amax, std::fabs(v[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[b].d = f32_to_f16(d);
    for (int j = 0; j < HWINFER_QK8_0; ++j) {
      out[b].qs[j] = static_cast<int8_t>(std::lround(v[j] * id));
    }
  }
}

// |n| values (a multiple of 32) -> n / 32 blocks. The value of largest magnitude m maps to -8:
// d = m / -8, q = min(15, trunc(x / d + 8.5)); value j in the low nibble of qs[j], value j + 16 in
// the high nibble.
inline void quantize_q4_0(const float* x, hwinfer_block_q4_0* out, int64_t n) {
  for (int64_t b = 0; b < n / HWINFER_QK4_0; ++b) {
    const float* v = x + b * HWINFER_QK4_0;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < HWINFER_QK4_0; ++j) {
      if (std::fabs(v[j]) > amax) {
        amax = std::fabs(v[j]);
        max = v[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out[b].d = f32_to_f16(d);
    for (int j = 0; j < HWINFER_QK4_0 / 2; ++j) {
      const auto lo = static_cast<uint8_t>(std::min(15, static_cast<int>(v[j] * id + 8.5f)));
      const auto hi = static_cast<uint8_t>(
          std::min(15, static_cast<int>(v[j + HWINFER_QK4_0 / 2] * id + 8.5f)));
      out[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

// |n| values (a multiple of 32) -> n / 32 Q5_0 blocks (22 bytes each, plugin.h's layout), as Q4_0
// with five bits: the value of largest magnitude m maps to -16, d = m / -16,
// q = min(31, trunc(x / d + 16.5)); the fifth bit of value j is bit j of qh.
inline void quantize_q5_0(const float* x, uint8_t* out, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* v = x + b * 32;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; ++j) {
      if (std::fabs(v[j]) > amax) {
        amax = std::fabs(v[j]);
        max = v[j];
      }
    }
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t* block = out + b * HWINFER_Q5_0_BLOCK_BYTES;
    put_f16(block, d);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
      const int lo = std::min(31, static_cast<int>(v[j] * id + 16.5f));
      const int hi = std::min(31, static_cast<int>(v[j + 16] * id + 16.5f));
      block[6 + j] = static_cast<uint8_t>((lo & 15) | ((hi & 15) << 4));
      qh |= static_cast<uint32_t>(lo >> 4) << j;
      qh |= static_cast<uint32_t>(hi >> 4) << (j + 16);
    }
    std::memcpy(block + 2, &qh, sizeof(qh));
  }
}

// |n| values (a multiple of 32) -> n / 32 Q4_1 blocks (20 bytes): d = (max - min) / 15, m = min,
// q = min(15, trunc((x - min) / d + 0.5)), nibbles as Q4_0's.
void quantize_q4_1(const float* x, uint8_t* out, int64_t n);

// |n| values -> n / 32 Q5_1 blocks (24 bytes): as Q4_1 with q in 0..31, the fifth bit of value j
// in bit j of qh.
void quantize_q5_1(const float* x, uint8_t* out, int64_t n);

// |n| values -> n / 32 IQ4_NL blocks (18 bytes): the value of largest magnitude maps to the table's
// -127, each value to its nearest table entry, then d is refit by least squares to those entries.
void quantize_iq4_nl(const float* x, uint8_t* out, int64_t n);

inline void dequantize_q8_0(const hwinfer_block_q8_0* blocks, float* out, int64_t n) {
  for (int64_t b = 0; b < n / HWINFER_QK8_0; ++b) {
    const float d = f16_to_f32(blocks[b].d);
    for (int j = 0; j < HWINFER_QK8_0; ++j) out[b * HWINFER_QK8_0 + j] = d * blocks[b].qs[j];
  }
}

inline void dequantize_q4_0(const hwinfer_block_q4_0* blocks, float* out, int64_t n) {
  for (int64_t b = 0; b < n / HWINFER_QK4_0; ++b) {
    const float d = f16_to_f32(blocks[b].d);
    for (int j = 0; j < HWINFER_QK4_0 / 2; ++j) {
      out[b * HWINFER_QK4_0 + j] = d * static_cast<float>((blocks[b].qs[j] & 0x0f) - 8);
      out[b * HWINFER_QK4_0 + j + HWINFER_QK4_0 / 2] =
          d * static_cast<float>((blocks[b].qs[j] >> 4) - 8);
    }
  }
}

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_QUANTIZE_BLOCKS_H_
