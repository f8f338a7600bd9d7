// sampler_test.cpp — greedy, temperature, top-k and top-p sampling: exact choices where the answer
// is determined, empirical frequencies (fixed seed, wide bounds) where it is random, replay with
// the same seed, and parameter validation.
#include "hwinfer/sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

std::map<int32_t, int> Histogram(const SamplingParams& params, const std::vector<float>& logits,
                                 int draws) {
  Sampler sampler(params);
  std::map<int32_t, int> counts;
  for (int i = 0; i < draws; ++i) ++counts[*sampler.Sample(logits)];
  return counts;
}

TEST(Sampler, GreedyPicksFirstMaximumAndSkipsNan) {
  Sampler sampler({});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(*sampler.Sample(std::vector<float>{0.1f, 3.0f, -1.0f, 3.0f}), 1);
  EXPECT_EQ(*sampler.Sample(std::vector<float>{nan, -5.0f, -4.0f}), 2);
  EXPECT_FALSE(sampler.Sample(std::vector<float>{nan, nan}).ok());
  EXPECT_FALSE(sampler.Sample(std::vector<float>{}).ok());
}

TEST(Sampler, TopKOneIsGreedyAtAnyTemperature) {
  SamplingParams params;
  params.temperature = 5.0f;
  params.top_k = 1;
  Sampler sampler(params);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(*sampler.Sample(std::vector<float>{1, 2, 9, 3}), 2);
}

TEST(Sampler, TemperatureOneFollowsSoftmax) {
  // softmax(log 1, log 2, log 7) = 0.1, 0.2, 0.7
  SamplingParams params;
  params.temperature = 1.0f;
  params.seed = 7;
  auto counts = Histogram(params, {std::log(1.0f), std::log(2.0f), std::log(7.0f)}, 20000);
  EXPECT_NEAR(counts[0] / 20000.0, 0.1, 0.015);
  EXPECT_NEAR(counts[1] / 20000.0, 0.2, 0.015);
  EXPECT_NEAR(counts[2] / 20000.0, 0.7, 0.015);
}

TEST(Sampler, TopKAndTopPRestrictTheCandidates) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f),
                                     std::log(0.05f)};
  SamplingParams top_k;
  top_k.temperature = 1.0f;
  top_k.top_k = 2;
  auto k_counts = Histogram(top_k, logits, 5000);
  EXPECT_EQ(k_counts.count(2) + k_counts.count(3), 0u);
  EXPECT_NEAR(k_counts[0] / 5000.0, 0.625, 0.03);  // 0.5 / (0.5 + 0.3)

  SamplingParams top_p;
  top_p.temperature = 1.0f;
  top_p.top_p = 0.9f;  // 0.5 + 0.3 + 0.15 = 0.95 >= 0.9: the 0.05 token is cut
  auto p_counts = Histogram(top_p, logits, 5000);
  EXPECT_EQ(p_counts.count(3), 0u);
  EXPECT_GT(p_counts[2], 0);
}

TEST(Sampler, SameSeedReplaysDifferentSeedDiffers) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.seed = 42;
  const std::vector<float> logits(100, 0.0f);
  Sampler a(params), b(params);
  params.seed = 43;
  Sampler c(params);
  int differ = 0;
  for (int i = 0; i < 50; ++i) {
    const int32_t x = *a.Sample(logits);
    EXPECT_EQ(x, *b.Sample(logits));
    differ += x != *c.Sample(logits);
  }
  EXPECT_GT(differ, 25);
}

TEST(Sampler, InvalidParametersNameTheField) {
  SamplingParams params;
  params.top_p = 0.0f;
  EXPECT_THAT(params.Validate().message(), HasSubstr("top_p must be in (0, 1]"));
  params = {};
  params.temperature = -1.0f;
  EXPECT_THAT(params.Validate().message(), HasSubstr("temperature must be >= 0"));
  params = {};
  params.top_k = -3;
  Sampler sampler(params);
  auto result = sampler.Sample(std::vector<float>{1.0f});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("top_k must be >= 0"));
}

}  // namespace
}  // namespace hwinfer
