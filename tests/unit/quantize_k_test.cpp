// quantize_k_test.cpp — the quantizers `hwinfer model synth` / `model quantize` write with (every
// block type; quantize_weights.h), read back by the oracle's dequantizer
// (reference/weight_blocks.h, written independently from plugin.h): the error stays within what the
// type's bits allow, zeros stay zeros, and every value is read from where the quantizer wrote it (a
// layout slip would show as a large error).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "hwinfer/plugin.h"
#include "reference/quantize_weights.h"
#include "reference/weight_blocks.h"

namespace hwinfer::reference {
namespace {

// RMS error of quantize -> dequantize relative to the RMS of |x|.
double RelativeRmsError(uint32_t type, const std::vector<float>& x) {
  const std::vector<uint8_t> blocks = quantize_weights(x, type);
  std::vector<float> back(x.size());
  dequantize_blocks(type, blocks.data(), static_cast<int64_t>(x.size()), back.data());
  double err2 = 0, ref2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err2 += (back[i] - x[i]) * static_cast<double>(back[i] - x[i]);
    ref2 += x[i] * static_cast<double>(x[i]);
  }
  return std::sqrt(err2 / ref2);
}

std::vector<float> Gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

// Round to nearest over a sub-block's range: about range / steps / sqrt(12) per value. On
// Gaussian data, measured: Q4_K 0.079, Q6_K 0.019; the bounds leave room, and a misplaced nibble
// or scale gives > 0.5.
TEST(QuantizeK, Q4KReadsBackWithinFourBitError) {
  EXPECT_LT(RelativeRmsError(HWINFER_DTYPE_Q4_K, Gaussian(8192, 1)), 0.12);
}

TEST(QuantizeK, Q6KReadsBackWithinSixBitError) {
  EXPECT_LT(RelativeRmsError(HWINFER_DTYPE_Q6_K, Gaussian(8192, 2)), 0.03);
}

// The other types, same Gaussian data, measured: Q2_K 0.33, Q3_K 0.16, Q5_K 0.039, Q4_1 0.080,
// Q5_1 0.039, IQ4_NL 0.078 (tests/unit/quant_recipe_test.cpp compares each with llama.cpp's own).
TEST(QuantizeK, EveryTypeReadsBackWithinItsBitsError) {
  const std::pair<uint32_t, double> kBounds[] = {
      {HWINFER_DTYPE_Q2_K, 0.40}, {HWINFER_DTYPE_Q3_K, 0.20}, {HWINFER_DTYPE_Q5_K, 0.05},
      {HWINFER_DTYPE_Q4_1, 0.10}, {HWINFER_DTYPE_Q5_1, 0.05}, {HWINFER_DTYPE_IQ4_NL, 0.10},
      {HWINFER_DTYPE_Q4_0, 0.12}, {HWINFER_DTYPE_Q5_0, 0.06}, {HWINFER_DTYPE_Q8_0, 0.01},
  };
  for (const auto& [type, bound] : kBounds) {
    EXPECT_LT(RelativeRmsError(type, Gaussian(8192, type)), bound) << "type " << type;
  }
}

TEST(QuantizeK, ZerosAndSignsSurvive) {
  for (uint32_t type :
       {HWINFER_DTYPE_Q2_K, HWINFER_DTYPE_Q3_K, HWINFER_DTYPE_Q4_K, HWINFER_DTYPE_Q5_K,
        HWINFER_DTYPE_Q6_K, HWINFER_DTYPE_Q4_1, HWINFER_DTYPE_Q5_1, HWINFER_DTYPE_IQ4_NL}) {
    std::vector<float> x(512, 0.0f);
    for (int i = 256; i < 512; ++i) x[i] = (i % 2 == 0 ? 1.0f : -1.0f) * static_cast<float>(i);
    const std::vector<uint8_t> blocks = quantize_weights(x, type);
    std::vector<float> back(512);
    dequantize_blocks(type, blocks.data(), 512, back.data());
    for (int i = 0; i < 256; ++i) EXPECT_EQ(back[static_cast<size_t>(i)], 0.0f) << i;
    for (int i = 256; i < 512; ++i) {
      EXPECT_EQ(std::signbit(back[static_cast<size_t>(i)]), std::signbit(x[static_cast<size_t>(i)]))
          << "type " << type << " value " << i;
    }
  }
}

}  // namespace
}  // namespace hwinfer::reference
