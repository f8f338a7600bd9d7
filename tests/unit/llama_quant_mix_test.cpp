// llama_quant_mix_test.cpp — GGUF files as llama.cpp's quantize tool writes them (mixed tensor
// types per file: Q4_K_M, Q6_K, Q2_K, ... with output.weight Q6_K) on every plugin that runs all
// the types (kBackends), against
// llama.cpp's own answers on the same files (tests/data/gguf-quant-mixes/README.md: the first six
// logits of the first generated position and 16 greedy tokens) and the float64 reference.
//
// Why not to 1e-4. A runtime that quantizes activations to 8 bits turns any difference upstream
// into a different integer now and then (an x value within rounding noise of a .5 boundary), and
// that moves the logits by ~1e-3..1e-2. llama.cpp rounds where hwinfer does not: its CPU attention
// rounds q and the softmax probabilities to f16 and reads the new tokens' K and V back from the f16
// cache (hwinfer attends to them in f32). Hence two checks:
//   1. the float64 forward rounded as llama.cpp rounds (ReferenceRounding: x quantized per matrix
//      type to Q8_0 / Q8_1 / Q8_K, f16 KV, f16 q and probabilities) against llama.cpp: on six files
//      (Q2_K .. Q6_K and IQ4_NL layers) it gives llama.cpp's logits to the printed digits and its
//      16 tokens, so the oracle's block layouts and activation formats are llama.cpp's bit for bit
//      (the CPU kernels are held to that oracle by the conformance suite, NMSE <= 1e-7). On the
//      other five it lands within 2e-2 (measured <= 9e-3): q3_k_m takes one such rounding flip;
//      the Q4_0 / Q4_1 / Q5_0 / Q5_1 layers differ in some detail of llama.cpp's x86 path for
//      those types that the reference does not follow (even its Q8_0-only file does);
//   2. the executor against llama.cpp: the six logits within 2e-2 (measured <= 1.0e-2), and the
//      greedy tokens identical up to the first position where llama.cpp's pick is a near-tie
//      (within 2e-2) of ours; the runs diverge from there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "cpu_device.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/registry.h"
#include "llama_reference_weights.h"
#include "test_backends.h"

namespace hwinfer {
namespace {

constexpr double kLlamaCppDigits = 2e-6;   // check 1, llama.cpp's logits printed to 6 decimals
constexpr double kDirectTolerance = 2e-2;  // check 2, and check 1 on the files it does not pin

struct MixCase {
  const char* file;
  std::vector<double> logits;   // llama.cpp's first six logits of the first generated position
  std::vector<int32_t> tokens;  // llama.cpp's 16 greedy tokens
  bool reference_exact;         // check 1 gives llama.cpp's digits and tokens (measured)
};

// The plugins that run every type of the files (a backend joins test_backends.h with its kernels).
using MixBackend = testing_support::TestBackend;

void PrintTo(const MixCase& c, std::ostream* out) { *out << c.file; }

const std::vector<int32_t> kPrompt = {1, 5, 9, 13, 17};

// tests/data/gguf-quant-mixes/README.md.
const MixCase kCases[] = {
    {"tiny-llama-q4_k_m-mix.gguf",
     {-0.225236, -0.507499, 0.049514, -0.064713, -0.223930, 0.186848},
     {114, 510, 486, 145, 145, 145, 145, 145, 114, 510, 114, 510, 114, 122, 242, 370},
     true},
    {"tiny-llama-q4_k_s-mix.gguf",
     {-0.232924, -0.509054, 0.006340, -0.085358, -0.206661, 0.183520},
     {114, 510, 486, 145, 145, 145, 145, 145, 145, 114, 510, 114, 510, 114, 510, 242},
     true},
    {"tiny-llama-q5_k_m-mix.gguf",
     {-0.205665, -0.550529, 0.054993, 0.023483, -0.226899, 0.192117},
     {187, 49, 187, 49, 114, 114, 510, 346, 49, 49, 242, 49, 49, 49, 49, 49},
     true},
    {"tiny-llama-q6_k-mix.gguf",
     {-0.199220, -0.563374, 0.044647, 0.021407, -0.219879, 0.196353},
     {187, 49, 187, 49, 114, 114, 510, 346, 49, 49, 49, 49, 49, 49, 49, 49},
     true},
    {"tiny-llama-q3_k_m-mix.gguf",
     {-0.217839, -0.556642, 0.137585, -0.070582, -0.021052, 0.199330},
     {187, 114, 114, 114, 114, 49, 49, 49, 49, 49, 49, 49, 242, 49, 49, 49},
     false},  // one rounding flip
    {"tiny-llama-q2_k-mix.gguf",
     {-0.155456, -0.334400, 0.220757, 0.106919, 0.160477, 0.193280},
     {187, 49, 122, 122, 122, 486, 122, 486, 486, 122, 110, 486, 486, 486, 234, 164},
     true},
    {"tiny-llama-iq4_nl-mix.gguf",
     {-0.118610, -0.578000, 0.016386, -0.076681, -0.258218, 0.216774},
     {114, 510, 486, 145, 145, 145, 145, 145, 145, 122, 510, 114, 510, 114, 510, 114},
     true},
    {"tiny-llama-q4_0-mix.gguf",
     {-0.160403, -0.534121, 0.008274, 0.034654, -0.166461, 0.241906},
     {187, 49, 187, 49, 114, 114, 510, 346, 346, 398, 397, 242, 397, 242, 397, 242},
     false},
    {"tiny-llama-q4_1-mix.gguf",
     {-0.198232, -0.598695, 0.057686, -0.052183, -0.244647, 0.258064},
     {187, 49, 187, 49, 114, 114, 510, 346, 346, 398, 398, 398, 398, 397, 397, 397},
     false},
    {"tiny-llama-q5_0-mix.gguf",
     {-0.196132, -0.556909, 0.048101, 0.001184, -0.175013, 0.261367},
     {187, 49, 187, 49, 114, 114, 510, 49, 49, 49, 49, 49, 49, 49, 49, 49},
     false},
    {"tiny-llama-q5_1-mix.gguf",
     {-0.178405, -0.574172, 0.090223, -0.004382, -0.191695, 0.200281},
     {187, 49, 187, 49, 114, 114, 510, 346, 49, 49, 49, 49, 49, 49, 49, 49},
     false},
};

const auto& kBackends = testing_support::kTestBackends;

using testing_support::OpenFirstDevice;

std::shared_ptr<const LlamaModel> OpenModel(const std::string& file) {
  auto model =
      LlamaModel::Open(std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf-quant-mixes/" + file);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : nullptr;
}

template <typename T>
int32_t Argmax(const std::vector<T>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

class QuantMixTest : public testing::TestWithParam<MixCase> {};

// Check 1.
TEST_P(QuantMixTest, ReferenceRoundedAsLlamaCppGivesItsLogitsAndTokens) {
  const MixCase& c = GetParam();
  auto model = OpenModel(c.file);
  ASSERT_NE(model, nullptr);
  const reference::LlamaConfig config = testing_support::ReferenceConfig(*model);
  const reference::LlamaWeights weights = testing_support::ReferenceWeights(*model);
  reference::ReferenceLlama reference(config, weights,
                                      testing_support::RuntimeRounding(*model, true));
  std::vector<double> logits;
  for (int32_t token : kPrompt) logits = reference.Forward(token);
  const double tolerance = c.reference_exact ? kLlamaCppDigits : kDirectTolerance;
  for (size_t i = 0; i < c.logits.size(); ++i) {
    EXPECT_NEAR(logits[i], c.logits[i], tolerance) << "logit " << i;
  }
  if (!c.reference_exact) return;
  std::vector<int32_t> tokens;
  for (size_t n = 0; n < c.tokens.size(); ++n) {
    tokens.push_back(Argmax(logits));
    if (n + 1 < c.tokens.size()) logits = reference.Forward(tokens.back());
  }
  EXPECT_EQ(tokens, c.tokens);
}

class QuantMixOnDeviceTest : public testing::TestWithParam<std::tuple<MixBackend, MixCase>> {};

// Check 2: greedy decoding step by step, so the logits at a divergence are at hand.
TEST_P(QuantMixOnDeviceTest, ExecutorFollowsLlamaCppUpToANearTie) {
  const auto& [backend, c] = GetParam();
  if (!testing_support::RunsModelsHere(backend))
    GTEST_SKIP() << backend.name << ": the plain build runs it (RunsModelsHere)";
  auto model = OpenModel(c.file);
  ASSERT_NE(model, nullptr);
  auto device = OpenFirstDevice(backend.plugin_dir, backend.plugin);
  ASSERT_NE(device, nullptr);
  auto executor = LlamaExecutor::Create(device, model);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  auto step = (*executor)->Step({{0, kPrompt, true}});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  for (size_t i = 0; i < c.logits.size(); ++i) {
    EXPECT_NEAR(step->front()[i], c.logits[i], kDirectTolerance) << "logit " << i;
  }
  for (size_t n = 0; n < c.tokens.size(); ++n) {
    const std::vector<float>& logits = step->front();
    const int32_t ours = Argmax(logits);
    if (ours != c.tokens[n]) {
      const double gap =
          logits[static_cast<size_t>(ours)] - logits[static_cast<size_t>(c.tokens[n])];
      EXPECT_LE(gap, kDirectTolerance) << "token " << n << ": ours " << ours << ", llama.cpp's "
                                       << c.tokens[n] << " is not a near-tie";
      return;  // the two runs continue from different tokens
    }
    if (n + 1 < c.tokens.size()) {
      step = (*executor)->Step({{0, {ours}, true}});
      ASSERT_TRUE(step.ok()) << step.status().ToString();
    }
  }
}

// "q4_k_m" from "tiny-llama-q4_k_m-mix.gguf".
std::string MixName(const MixCase& c) {
  std::string name = c.file;
  return name.substr(11, name.size() - 11 - 9);
}

INSTANTIATE_TEST_SUITE_P(LlamaCppFiles, QuantMixTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<MixCase>& param) {
                           return MixName(param.param);
                         });
INSTANTIATE_TEST_SUITE_P(LlamaCppFiles, QuantMixOnDeviceTest,
                         testing::Combine(testing::ValuesIn(kBackends), testing::ValuesIn(kCases)),
                         [](const testing::TestParamInfo<std::tuple<MixBackend, MixCase>>& param) {
                           return std::string(std::get<0>(param.param).name) + "_" +
                                  MixName(std::get<1>(param.param));
                         });

}  // namespace
}  // namespace hwinfer
