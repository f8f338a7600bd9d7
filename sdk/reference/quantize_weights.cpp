// quantize_weights.cpp — see quantize_weights.h.
#include "reference/quantize_weights.h"

#include <cstring>

#include "hwinfer/plugin.h"
#include "reference/half.h"
#include "reference/quantize_blocks.h"
#include "reference/quantize_k.h"

namespace hwinfer::reference {

namespace {

using BlockQuantizer = void (*)(const float* x, int64_t n, uint8_t* out);

// The quantizer of a block type, every one called as (x, n, out).
BlockQuantizer block_quantizer(uint32_t type) {
  switch (type) {
    case HWINFER_DTYPE_Q8_0:
      return [](const float* x, int64_t n, uint8_t* out) {
        quantize_q8_0(x, reinterpret_cast<hwinfer_block_q8_0*>(out), n);
      };
    case HWINFER_DTYPE_Q4_0:
      return [](const float* x, int64_t n, uint8_t* out) {
        quantize_q4_0(x, reinterpret_cast<hwinfer_block_q4_0*>(out), n);
      };
    case HWINFER_DTYPE_Q4_1:
      return [](const float* x, int64_t n, uint8_t* out) { quantize_q4_1(x, out, n); };
    case HWINFER_DTYPE_Q5_0:
      return [](const float* x, int64_t n, uint8_t* out) { quantize_q5_0(x, out, n); };
    case HWINFER_DTYPE_Q5_1:
      return [](const float* x, int64_t n, uint8_t* out) { quantize_q5_1(x, out, n); };
    case HWINFER_DTYPE_IQ4_NL:
      return [](const float* x, int64_t n, uint8_t* out) { quantize_iq4_nl(x, out, n); };
    case HWINFER_DTYPE_Q2_K:
      return quantize_q2_k;
    case HWINFER_DTYPE_Q3_K:
      return quantize_q3_k;
    case HWINFER_DTYPE_Q4_K:
      return quantize_q4_k;
    case HWINFER_DTYPE_Q5_K:
      return quantize_q5_k;
    case HWINFER_DTYPE_Q6_K:
      return quantize_q6_k;
    default:
      return nullptr;
  }
}

}  // namespace

bool can_quantize_weights(uint32_t type) {
  return type == HWINFER_DTYPE_F32 || type == HWINFER_DTYPE_F16 || type == HWINFER_DTYPE_BF16 ||
         block_quantizer(type) != nullptr;
}

std::vector<uint8_t> quantize_weights(const std::vector<float>& values, uint32_t type) {
  std::vector<uint8_t> bytes;
  if (type == HWINFER_DTYPE_F32) {
    bytes.resize(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
  } else if (type == HWINFER_DTYPE_F16 || type == HWINFER_DTYPE_BF16) {
    bytes.resize(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t h = type == HWINFER_DTYPE_F16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
  } else if (BlockQuantizer quantize = block_quantizer(type)) {
    const auto n = static_cast<int64_t>(values.size());
    bytes.resize(static_cast<size_t>(n / hwinfer_dtype_block_values(type)) *
                 hwinfer_dtype_block_bytes(type));
    quantize(values.data(), n, bytes.data());
  }
  return bytes;
}

}  // namespace hwinfer::reference
