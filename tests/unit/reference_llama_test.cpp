// reference_llama_test.cpp — the float64 reference Llama forward (the executor's oracle) checked
// against an independent implementation: llama.cpp's greedy tokens and first logits on
// tests/data/gguf/tiny-llama-f32.gguf (see tests/data/gguf/README.md).
#include "reference/reference_llama.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "hwinfer/llama_model.h"
#include "llama_reference_weights.h"

namespace hwinfer {
namespace {

using reference::LlamaConfig;
using reference::LlamaWeights;

TEST(ReferenceLlama, ReproducesLlamaCppOnTinyLlamaF32) {
  auto loaded =
      LlamaModel::Open(std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/tiny-llama-f32.gguf");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const LlamaConfig config = testing_support::ReferenceConfig(**loaded);
  const LlamaWeights weights = testing_support::ReferenceWeights(**loaded);

  reference::ReferenceLlama model(config, weights);
  std::vector<double> logits;
  for (int32_t token : {1, 5, 9, 13, 17}) logits = model.Forward(token);
  // llama.cpp's first six logits of the first generated position. llama.cpp computes in f32 with
  // its default f16 KV cache; this reference is float64 with an exact cache, and they differ by up
  // to 1.8e-4 (logit 4), so the bound is 3e-4 ("about 1e-4", tests/data/gguf/README.md).
  const double expected_logits[] = {-0.185257, -0.563466, 0.068768, -0.003594, -0.225749, 0.194956};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(logits[static_cast<size_t>(i)], expected_logits[i], 3e-4);

  const std::vector<int32_t> expected = {187, 49, 187, 49, 114, 114, 510, 346,
                                         49,  49, 49,  49, 49,  49,  49,  49};
  std::vector<int32_t> generated;
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto best = std::max_element(logits.begin(), logits.end()) - logits.begin();
    generated.push_back(static_cast<int32_t>(best));
    logits = model.Forward(static_cast<int32_t>(best));
  }
  EXPECT_EQ(generated, expected);
}

}  // namespace
}  // namespace hwinfer
