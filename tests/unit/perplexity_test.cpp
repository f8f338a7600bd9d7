// perplexity_test.cpp — `hwinfer eval`'s scoring (hwinfer/perplexity.h) against answers known
// independently: hand-computed statistics, a model with zero weights (uniform distributions:
// perplexity = vocabulary size), the float64 reference forward's perplexity and distributions on
// every backend the build has; and against itself: chunked windows, a run compared with its own
// reference (KL 0 exactly), int8 KV against f16 KV within a stated bound.
#include "hwinfer/perplexity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <random>

#include "cpu_device.h"
#include "gguf_edit.h"
#include "llama_reference_weights.h"
#include "test_backends.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;
using testing_support::OpenFirstDevice;

std::string DataFile(const std::string& name) {
  return std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + name;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/perplexity-" + std::to_string(::getpid()) + "-" + name;
}

std::shared_ptr<const LlamaModel> OpenModel(const std::string& path) {
  auto model = LlamaModel::Open(path);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : nullptr;
}

// An executor holding |windows| windows of |ctx| tokens, run in chunks of |chunk| tokens.
std::unique_ptr<LlamaExecutor> WindowExecutor(std::shared_ptr<Device> device,
                                              std::shared_ptr<const LlamaModel> model, int64_t ctx,
                                              int64_t chunk, int64_t windows = 1,
                                              uint32_t kv_dtype = HWINFER_DTYPE_F16) {
  ExecutorOptions options;
  options.max_sequences = windows;
  options.max_batch_tokens = chunk;
  options.max_logit_rows = chunk;
  options.kv_block_size = 16;
  options.kv_cache_tokens = windows * ctx;
  options.kv_dtype = kv_dtype;
  auto executor = LlamaExecutor::Create(std::move(device), std::move(model), options);
  EXPECT_TRUE(executor.ok()) << executor.status().ToString();
  return executor.ok() ? std::move(*executor) : nullptr;
}

// |count| token ids drawn uniformly from [2, vocab) (a seeded "text").
std::vector<int32_t> RandomTokens(int64_t count, int64_t vocab, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int32_t> id(2, static_cast<int32_t>(vocab - 1));
  std::vector<int32_t> tokens(static_cast<size_t>(count));
  for (int32_t& t : tokens) t = id(random);
  return tokens;
}

StatusOr<EvalResult> Evaluate(LlamaExecutor& executor, const EvalWindows& windows,
                              EvalRunOptions options = {}) {
  return EvaluatePerplexity(executor, windows, options);
}

// The float64 reference forward's scores of |windows|: every scored position added to |scorer|
// (so its perplexity and distributions are the oracle's).
void ScoreWithReference(const LlamaModel& model, const EvalWindows& windows, EvalScorer* scorer,
                        std::vector<std::vector<float>>* log_probs) {
  const reference::LlamaConfig config = testing_support::ReferenceConfig(model);
  const reference::LlamaWeights weights = testing_support::ReferenceWeights(model);
  const auto vocab = static_cast<size_t>(config.vocab_size);
  for (int64_t w = 0; w < windows.count; ++w) {
    reference::ReferenceLlama forward(config, weights);
    for (int64_t p = 0; p < windows.ctx - 1; ++p) {
      const std::vector<double> logits =
          forward.Forward(windows.tokens[static_cast<size_t>(w * windows.ctx + p)]);
      if (p < windows.first_scored) continue;
      double max = logits[0], sum = 0;
      for (double x : logits) max = std::max(max, x);
      for (double x : logits) sum += std::exp(x - max);
      std::vector<float> row(vocab);
      for (size_t v = 0; v < vocab; ++v)
        row[v] = static_cast<float>(logits[v] - max - std::log(sum));
      scorer->Add(row, windows.tokens[static_cast<size_t>(w * windows.ctx + p + 1)]);
      log_probs->push_back(std::move(row));
    }
  }
}

TEST(EvalWindows, CutsTheTextIntoWindowsStartingWithBos) {
  std::vector<int32_t> tokens(23);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(100 + i);
  auto windows = MakeEvalWindows(tokens, 8, 1);
  ASSERT_TRUE(windows.ok()) << windows.status().ToString();
  EXPECT_EQ(windows->count, 2) << "23 tokens: two windows of 8, the last 7 dropped";
  EXPECT_EQ(windows->first_scored, 4);
  EXPECT_EQ(windows->scored_per_window(), 3) << "positions 4, 5, 6 predict 5, 6, 7";
  const std::vector<int32_t> expected = {1, 101, 102, 103, 104, 105, 106, 107,
                                         1, 109, 110, 111, 112, 113, 114, 115};
  EXPECT_EQ(windows->tokens, expected);
  auto no_bos = MakeEvalWindows(tokens, 8, -1, 1);
  ASSERT_TRUE(no_bos.ok());
  EXPECT_EQ(no_bos->count, 1) << "max_windows";
  EXPECT_EQ(no_bos->tokens.front(), 100) << "no BOS: the text's own first token";

  auto short_text = MakeEvalWindows(tokens, 32, 1);
  ASSERT_FALSE(short_text.ok());
  EXPECT_THAT(short_text.status().message(),
              HasSubstr("the text has 23 tokens; one window of --ctx 32 needs 32"));
  auto tiny_ctx = MakeEvalWindows(tokens, 3, 1);
  ASSERT_FALSE(tiny_ctx.ok());
  EXPECT_THAT(tiny_ctx.status().message(), HasSubstr("--ctx is 3; expected at least 4"));
}

// Two positions over a vocabulary of two, computed by hand.
TEST(EvalScorer, GivesTheHandComputedStatistics) {
  const float half = std::log(0.5f), quarter = std::log(0.25f), three_quarters = std::log(0.75f);
  EvalScorer scorer;
  // Position 1: the run says (1/2, 1/2), the reference (1/4, 3/4); the target is token 0.
  scorer.AddWithReference(std::vector<float>{half, half},
                          std::vector<float>{quarter, three_quarters}, 0);
  // Position 2: both say (1/4, 3/4); the target is token 0.
  scorer.AddWithReference(std::vector<float>{quarter, three_quarters},
                          std::vector<float>{quarter, three_quarters}, 0);
  EvalResult result;
  scorer.Summarise(&result);
  EXPECT_EQ(result.scored_tokens, 2);
  // NLLs ln 2 and ln 4: perplexity exp(1.5 ln 2) = 2^1.5; sd of the NLLs ln2 / sqrt(2).
  EXPECT_NEAR(result.perplexity, std::pow(2.0, 1.5), 1e-5);
  EXPECT_NEAR(result.perplexity_error,
              std::pow(2.0, 1.5) * std::log(2.0) / std::sqrt(2.0) / std::sqrt(2.0), 1e-5);
  ASSERT_TRUE(result.reference.has_value());
  const ReferenceSummary& s = *result.reference;
  // KL((1/4, 3/4) || (1/2, 1/2)) = 1/4 ln(1/2) + 3/4 ln(3/2); and 0.
  const double kl = 0.25 * std::log(0.5) + 0.75 * std::log(1.5);
  EXPECT_NEAR(s.kl_mean, kl / 2, 1e-6);
  EXPECT_NEAR(s.kl_max, kl, 1e-6);
  EXPECT_NEAR(s.kl_p99, kl, 1e-6);
  EXPECT_NEAR(s.kl_median, 0, 1e-7) << "the lower of two values";
  EXPECT_DOUBLE_EQ(s.top1_agreement, 0.5) << "argmax 0 (a tie: the first) against 1, then 1 and 1";
  // Reference NLLs ln 4 and ln 4; the run's ln 2 and ln 4: ratio exp(-ln 2 / 2).
  EXPECT_NEAR(s.reference_perplexity, 4.0, 1e-5);
  EXPECT_NEAR(s.perplexity_ratio, 1.0 / std::sqrt(2.0), 1e-5);
  // The next token's probability: 1/2 against 1/4, then 1/4 against 1/4.
  EXPECT_NEAR(s.delta_p_mean, 0.125, 1e-6);
  EXPECT_NEAR(s.delta_p_rms, std::sqrt(0.25 * 0.25 / 2), 1e-6);
}

// All-zero weights: every logit is 0, every distribution uniform, the perplexity the vocabulary
// size whatever the text.
TEST(EvaluatePerplexity, ZeroWeightsGiveTheVocabularySize) {
  const std::string path = TempPath("zero.gguf");
  ASSERT_TRUE(test::WriteEditedGguf(
                  DataFile("tiny-llama-f32.gguf"),
                  [](test::Metadata&, std::vector<test::TensorCopy>& tensors) {
                    for (test::TensorCopy& t : tensors)
                      std::fill(t.bytes.begin(), t.bytes.end(), 0);
                  },
                  path)
                  .ok());
  auto model = OpenModel(path);
  ASSERT_NE(model, nullptr);
  auto executor = WindowExecutor(testing_support::CpuDevice(), model, 32, 32);
  ASSERT_NE(executor, nullptr);
  auto windows = MakeEvalWindows(RandomTokens(70, 512, 5), 32, 1);
  ASSERT_TRUE(windows.ok());
  auto result = Evaluate(*executor, *windows);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->windows, 2);
  EXPECT_EQ(result->scored_tokens, 2 * 15);
  EXPECT_NEAR(result->perplexity, 512.0, 512.0 * 1e-6);
  EXPECT_NEAR(result->perplexity_error, 0.0, 1e-3) << "every token's NLL is ln 512";
  std::remove(path.c_str());
}

// Every backend's perplexity and distributions, by decode and by prefill scoring, against the
// float64 forward (checked itself against llama.cpp, reference_llama_test.cpp) on the F32 tiny
// model, and the CPU's on the Q8_0 one: the executor's
// f16 KV cache and (Q8_0) 8-bit activations move the perplexity by well under 0.1%, the
// distributions by a KL under 1e-5 nats, and never the top token where the oracle's is clear.
TEST(EvaluatePerplexity, MatchesTheFloat64ReferenceOnEveryBackend) {
  for (const char* file : {"tiny-llama-f32.gguf", "tiny-llama-q8_0.gguf"}) {
    auto model = OpenModel(DataFile(file));
    ASSERT_NE(model, nullptr);
    auto windows = MakeEvalWindows(RandomTokens(130, 512, 11), 64, 1);
    ASSERT_TRUE(windows.ok());
    EvalScorer oracle;
    std::vector<std::vector<float>> oracle_rows;
    ScoreWithReference(*model, *windows, &oracle, &oracle_rows);
    EvalResult expected;
    oracle.Summarise(&expected);
    // Saved as a reference file, to compare each backend's distributions with the oracle's.
    const std::string path = TempPath(std::string("oracle-") + file + ".bin");
    {
      LogitsFileHeader header{
          kLogitsFileVersion, 512, 64, 32, 2, ShapeSignature(model->shape()), "float64 reference",
          windows->tokens};
      auto writer = LogitsFileWriter::Create(path, header);
      ASSERT_TRUE(writer.ok()) << writer.status().ToString();
      for (int64_t w = 0; w < 2; ++w) {
        std::vector<float> rows;
        for (int64_t i = 0; i < 31; ++i) {
          const auto& row = oracle_rows[static_cast<size_t>(w * 31 + i)];
          rows.insert(rows.end(), row.begin(), row.end());
        }
        ASSERT_TRUE((*writer)->WriteWindow(rows).ok());
      }
      ASSERT_TRUE((*writer)->Finish().ok());
    }
    auto reader = LogitsFileReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    for (const testing_support::TestBackend& backend : testing_support::kTestBackends) {
      // Q8_0 on the CPU only: its kernels on the other backends have their own reference tests
      // (llama_quant_mix_test.cpp); this one is about the scoring path.
      if (std::string(file) != "tiny-llama-f32.gguf" && std::string(backend.name) != "cpu")
        continue;
      if (!testing_support::RunsModelsHere(backend)) continue;
      for (EvalScoring scoring : {EvalScoring::kDecode, EvalScoring::kPrefill}) {
        SCOPED_TRACE(std::string(file) + " on " + backend.name +
                     (scoring == EvalScoring::kDecode ? ", decode" : ", prefill"));
        // Two windows side by side (decode scoring batches them).
        auto executor =
            WindowExecutor(OpenFirstDevice(backend.plugin_dir, backend.plugin), model, 64, 64, 2);
        ASSERT_NE(executor, nullptr);
        auto result = Evaluate(*executor, *windows, {nullptr, reader->get(), nullptr, scoring});
        ASSERT_TRUE(result.ok()) << result.status().ToString();
        EXPECT_NEAR(result->perplexity / expected.perplexity, 1.0, 1e-3);
        ASSERT_TRUE(result->reference.has_value());
        EXPECT_LT(result->reference->kl_max, 1e-5);
        EXPECT_NEAR(result->reference->perplexity_ratio, 1.0, 1e-3);
      }
    }
    std::remove(path.c_str());
  }
}

// Prefill scoring: a window run in chunks of 16 tokens scores as one run whole (the chunks read
// the earlier ones' K and V from the f16 cache: the logits move by ~1e-4).
TEST(EvaluatePerplexity, ChunkedWindowsScoreAsWholeOnes) {
  auto model = OpenModel(DataFile("tiny-llama-f16.gguf"));
  ASSERT_NE(model, nullptr);
  auto windows = MakeEvalWindows(RandomTokens(128, 512, 3), 64, 1);
  ASSERT_TRUE(windows.ok());
  auto whole = WindowExecutor(testing_support::CpuDevice(), model, 64, 64);
  auto chunked = WindowExecutor(testing_support::CpuDevice(), model, 64, 16);
  ASSERT_TRUE(whole != nullptr && chunked != nullptr);
  const EvalRunOptions prefill{nullptr, nullptr, nullptr, EvalScoring::kPrefill};
  auto a = Evaluate(*whole, *windows, prefill);
  auto b = Evaluate(*chunked, *windows, prefill);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(b->perplexity / a->perplexity, 1.0, 1e-4);
  EXPECT_EQ(b->scored_tokens, 2 * 31);
}

// A run saved as a reference and compared with itself: KL exactly 0, every top token the same,
// ratio 1. Then int8 KV against that f16-KV reference: within the bound stated in
// docs/evaluation.md.
TEST(EvaluatePerplexity, ARunAgainstItsOwnReferenceAndInt8Kv) {
  auto model = OpenModel(DataFile("tiny-llama-f16.gguf"));
  ASSERT_NE(model, nullptr);
  auto windows = MakeEvalWindows(RandomTokens(256, 512, 7), 128, 1);
  ASSERT_TRUE(windows.ok());
  const std::string path = TempPath("self.bin");
  auto executor = WindowExecutor(testing_support::CpuDevice(), model, 128, 128);
  ASSERT_NE(executor, nullptr);
  LogitsFileHeader header{
      kLogitsFileVersion, 512, 128, 64, 2, ShapeSignature(model->shape()), "f16 KV",
      windows->tokens};
  auto writer = LogitsFileWriter::Create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  auto saved = Evaluate(*executor, *windows, {writer->get(), nullptr, nullptr});
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  ASSERT_TRUE((*writer)->Finish().ok());
  auto reader = LogitsFileReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->header().about, "f16 KV");

  auto again = Evaluate(*executor, *windows, {nullptr, reader->get(), nullptr});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE(again->reference.has_value());
  EXPECT_EQ(again->reference->kl_max, 0.0);
  EXPECT_EQ(again->reference->top1_agreement, 1.0);
  EXPECT_EQ(again->reference->perplexity_ratio, 1.0);
  EXPECT_EQ(again->reference->reference_perplexity, saved->perplexity);
  EXPECT_EQ(again->reference->delta_p_rms, 0.0);

  auto int8 = WindowExecutor(testing_support::CpuDevice(), model, 128, 128, 1, HWINFER_DTYPE_I8);
  ASSERT_NE(int8, nullptr);
  auto quantized = Evaluate(*int8, *windows, {nullptr, reader->get(), nullptr});
  ASSERT_TRUE(quantized.ok()) << quantized.status().ToString();
  const ReferenceSummary& s = *quantized->reference;
  EXPECT_GT(s.kl_max, 0.0) << "int8 KV changes the distributions";
  EXPECT_LT(s.kl_mean, 1e-4);
  EXPECT_LT(s.kl_p99, 1e-3);
  EXPECT_GE(s.top1_agreement, 0.9);
  EXPECT_NEAR(s.perplexity_ratio, 1.0, 0.01);
  std::remove(path.c_str());
}

TEST(EvaluatePerplexity, RefusesAnExecutorWithTooFewLogitRows) {
  auto model = OpenModel(DataFile("tiny-llama-f16.gguf"));
  ASSERT_NE(model, nullptr);
  ExecutorOptions options;
  options.max_sequences = 1;
  options.kv_cache_tokens = 64;
  auto executor = LlamaExecutor::Create(testing_support::CpuDevice(), model, options);
  ASSERT_TRUE(executor.ok());
  auto windows = MakeEvalWindows(RandomTokens(64, 512, 1), 64, 1);
  ASSERT_TRUE(windows.ok());
  auto result = Evaluate(**executor, *windows, {nullptr, nullptr, nullptr, EvalScoring::kPrefill});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("returns 1 rows of logits a step; scoring windows of 64 in prefill chunks "
                        "needs 32"));
  EXPECT_TRUE(Evaluate(**executor, *windows).ok()) << "decode scoring needs one row a sequence";
}

}  // namespace
}  // namespace hwinfer
