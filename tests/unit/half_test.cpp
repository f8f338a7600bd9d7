// half_test.cpp — the exact f16/bf16 conversions every kernel and the GGUF code rely on.
#include "reference/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace hwinfer::reference {
namespace {

TEST(Half, EveryF16RoundTripsThroughF32) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float value = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(value))));
      continue;
    }
    EXPECT_EQ(f32_to_f16(value), h) << "f16 bits " << h;
  }
}

TEST(Half, KnownF16Values) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);                          // largest finite
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);                          // rounds up to infinity
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);             // smallest subnormal
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);             // tie to even -> 0
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie to even (down)
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even (up)
  EXPECT_FLOAT_EQ(f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isinf(f16_to_f32(0xfc00)));
}

TEST(Half, KnownBf16Values) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_FLOAT_EQ(bf16_to_f32(0x4049), 3.140625f);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie to even (down)
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie to even (up)
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace hwinfer::reference
