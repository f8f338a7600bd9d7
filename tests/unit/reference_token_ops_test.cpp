// Unit tests of the scalar RoPE and embedding references (sdk/reference/reference_ops.h):
// the oracle of the rope and embedding conformance suites must itself be right — identity at
// position 0, NEOX = NORMAL up to a permutation of the dimensions, hand-computed values, the tail
// past rotary_dim untouched, and rows dequantized as quantize_blocks.h (llama.cpp's layout) does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "reference/half.h"
#include "reference/quantize_blocks.h"
#include "reference/reference_ops.h"

namespace hwinfer::reference {
namespace {

std::vector<float> RandomValues(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(rng);
  return v;
}

TEST(RopeReference, PositionZeroIsIdentity) {
  const std::vector<float> x = RandomValues(3 * 4 * 64, 1);
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    std::vector<float> y = x;
    const int32_t positions[3] = {0, 0, 0};
    rope_reference(3, 4, 64, 64, 10000.0, mode, positions, y.data(), false);
    EXPECT_EQ(y, x);
  }
}

TEST(RopeReference, KnownValues) {
  // head_dim 4, NORMAL: pair 0 turns by position * 1, pair 1 by position * theta^(-1/2).
  std::vector<float> x = {1.0f, 0.0f, 0.5f, 2.0f};
  const int32_t position = 2;
  rope_reference(1, 1, 4, 4, 100.0, RopeMode::kNormal, &position, x.data(), false);
  const double a0 = 2.0, a1 = 2.0 * 0.1;
  EXPECT_FLOAT_EQ(x[0], static_cast<float>(std::cos(a0)));
  EXPECT_FLOAT_EQ(x[1], static_cast<float>(std::sin(a0)));
  EXPECT_FLOAT_EQ(x[2], static_cast<float>(0.5 * std::cos(a1) - 2.0 * std::sin(a1)));
  EXPECT_FLOAT_EQ(x[3], static_cast<float>(0.5 * std::sin(a1) + 2.0 * std::cos(a1)));
  // NEOX pairs (0, 2) and (1, 3).
  std::vector<float> y = {1.0f, 0.5f, 0.0f, 2.0f};
  rope_reference(1, 1, 4, 4, 100.0, RopeMode::kNeox, &position, y.data(), false);
  EXPECT_FLOAT_EQ(y[0], x[0]);
  EXPECT_FLOAT_EQ(y[2], x[1]);
  EXPECT_FLOAT_EQ(y[1], x[2]);
  EXPECT_FLOAT_EQ(y[3], x[3]);
}

// NEOX on x equals NORMAL on x with dimension i + half moved next to i (and back).
TEST(RopeReference, NeoxIsNormalUpToAPermutation) {
  constexpr int64_t n_tokens = 5, n_heads = 3, head_dim = 80, rotary_dim = 64, half = 32;
  const std::vector<float> x = RandomValues(n_tokens * n_heads * head_dim, 2);
  const int32_t positions[n_tokens] = {0, 1, 17, 4095, 32000};
  // perm[j] = the NEOX index that sits at NORMAL index j.
  std::vector<int64_t> perm(head_dim);
  for (int64_t i = 0; i < half; ++i) {
    perm[2 * i] = i;
    perm[2 * i + 1] = i + half;
  }
  for (int64_t i = rotary_dim; i < head_dim; ++i) perm[i] = i;
  std::vector<float> neox = x, normal(x.size());
  for (int64_t row = 0; row < n_tokens * n_heads; ++row) {
    for (int64_t j = 0; j < head_dim; ++j) normal[row * head_dim + j] = x[row * head_dim + perm[j]];
  }
  rope_reference(n_tokens, n_heads, head_dim, rotary_dim, 10000.0, RopeMode::kNeox, positions,
                 neox.data(), false);
  rope_reference(n_tokens, n_heads, head_dim, rotary_dim, 10000.0, RopeMode::kNormal, positions,
                 normal.data(), false);
  for (int64_t row = 0; row < n_tokens * n_heads; ++row) {
    for (int64_t j = 0; j < head_dim; ++j) {
      ASSERT_EQ(normal[row * head_dim + j], neox[row * head_dim + perm[j]])
          << "row " << row << " dim " << j;
    }
  }
}

TEST(RopeReference, TailPastRotaryDimIsUntouchedAndNormsArePreserved) {
  constexpr int64_t head_dim = 96, rotary_dim = 32;
  const std::vector<float> x = RandomValues(head_dim, 3);
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    std::vector<float> y = x;
    const int32_t position = 12345;
    rope_reference(1, 1, head_dim, rotary_dim, 500000.0, mode, &position, y.data(), false);
    for (int64_t i = rotary_dim; i < head_dim; ++i) EXPECT_EQ(y[i], x[i]) << i;
    double before = 0, after = 0;
    for (int64_t i = 0; i < rotary_dim; ++i) {
      before += static_cast<double>(x[i]) * x[i];
      after += static_cast<double>(y[i]) * y[i];
    }
    EXPECT_NEAR(after, before, 1e-5 * before);
    EXPECT_NE(y, x);
  }
}

TEST(RopeReference, F16OperandIsRoundedToHalf) {
  std::vector<float> x = RandomValues(64, 4);
  const int32_t position = 3;
  rope_reference(1, 1, 64, 64, 10000.0, RopeMode::kNormal, &position, x.data(), true);
  for (float v : x) EXPECT_EQ(v, f16_to_f32(f32_to_f16(v)));
}

TEST(EmbeddingReference, DequantizesRowsAsQuantizeBlocks) {
  constexpr int64_t dim = 128;
  const std::vector<float> x = RandomValues(dim, 5);
  std::vector<float> got(dim), want(dim);
  std::vector<hwinfer_block_q8_0> q8(dim / 32);
  quantize_q8_0(x.data(), q8.data(), dim);
  dequantize_q8_0(q8.data(), want.data(), dim);
  dequantize_row_reference(HWINFER_DTYPE_Q8_0, reinterpret_cast<const uint8_t*>(q8.data()), dim,
                           got.data());
  EXPECT_EQ(got, want);
  std::vector<hwinfer_block_q4_0> q4(dim / 32);
  quantize_q4_0(x.data(), q4.data(), dim);
  dequantize_q4_0(q4.data(), want.data(), dim);
  dequantize_row_reference(HWINFER_DTYPE_Q4_0, reinterpret_cast<const uint8_t*>(q4.data()), dim,
                           got.data());
  EXPECT_EQ(got, want);
  std::vector<uint16_t> half(dim), bhalf(dim);
  for (int64_t i = 0; i < dim; ++i) {
    half[i] = f32_to_f16(x[i]);
    bhalf[i] = f32_to_bf16(x[i]);
  }
  dequantize_row_reference(HWINFER_DTYPE_F16, reinterpret_cast<const uint8_t*>(half.data()), dim,
                           got.data());
  for (int64_t i = 0; i < dim; ++i) EXPECT_EQ(got[i], f16_to_f32(half[i]));
  dequantize_row_reference(HWINFER_DTYPE_BF16, reinterpret_cast<const uint8_t*>(bhalf.data()), dim,
                           got.data());
  for (int64_t i = 0; i < dim; ++i) EXPECT_EQ(got[i], bf16_to_f32(bhalf[i]));
}

TEST(EmbeddingReference, LooksUpRowsAndRejectsIdsOutsideVocab) {
  constexpr int64_t vocab = 4, dim = 3;
  const std::vector<float> table = RandomValues(vocab * dim, 6);
  const auto* bytes = reinterpret_cast<const uint8_t*>(table.data());
  const int32_t ids[3] = {3, 0, 3};
  std::vector<float> out(3 * dim, -1.0f);
  ASSERT_TRUE(
      embedding_reference(3, vocab, dim, HWINFER_DTYPE_F32, bytes, dim * 4, ids, out.data()));
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t i = 0; i < dim; ++i) EXPECT_EQ(out[t * dim + i], table[ids[t] * dim + i]);
  }
  for (int32_t bad : {-1, 4}) {
    const int32_t bad_ids[2] = {0, bad};
    std::vector<float> untouched(2 * dim, -1.0f);
    EXPECT_FALSE(embedding_reference(2, vocab, dim, HWINFER_DTYPE_F32, bytes, dim * 4, bad_ids,
                                     untouched.data()));
    EXPECT_EQ(untouched, std::vector<float>(2 * dim, -1.0f));
  }
}

}  // namespace
}  // namespace hwinfer::reference
