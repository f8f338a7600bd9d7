// llama_executor_test.cpp — the LlamaExecutor on the CPU plugin, end to end through the ABI,
// against independent answers: llama.cpp's tokens on tests/data/gguf/tiny-llama-f32, the float64
// reference forward on the dequantized weights of every GGUF type; and against itself: a batch
// gives each sequence's tokens alone, mixed prefill/decode steps and chunked prefill change
// nothing, a forked sequence continues like a fresh one, int8 KV stays near f16 KV. Plus the bad
// input a step must refuse without changing any state.
#include "hwinfer/llama_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cpu_device.h"
#include "gguf_edit.h"
#include "hwinfer/generate.h"
#include "hwinfer/registry.h"
#include "llama_reference_weights.h"
#include "model_synth.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

std::string DataFile(const std::string& name) {
  return std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + name;
}

using testing_support::CpuDevice;

std::unique_ptr<LlamaExecutor> MakeExecutor(const std::string& file,
                                            const ExecutorOptions& options = {}) {
  auto model = LlamaModel::Open(DataFile(file));
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return nullptr;
  auto executor = LlamaExecutor::Create(CpuDevice(), *model, options);
  EXPECT_TRUE(executor.ok()) << executor.status().ToString();
  return executor.ok() ? std::move(*executor) : nullptr;
}

std::vector<std::vector<int32_t>> Greedy(LlamaExecutor& executor,
                                         const std::vector<std::vector<int32_t>>& prompts,
                                         int64_t n_new) {
  auto result = Generate(executor, prompts, n_new, SamplingParams{});
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? result->tokens : std::vector<std::vector<int32_t>>{};
}

// Logits of every position of |tokens| from the float64 reference.
std::vector<std::vector<double>> ReferenceLogits(const LlamaModel& model,
                                                 const std::vector<int32_t>& tokens) {
  const reference::LlamaConfig config = testing_support::ReferenceConfig(model);
  const reference::LlamaWeights weights = testing_support::ReferenceWeights(model);
  reference::ReferenceLlama reference(config, weights);
  std::vector<std::vector<double>> out;
  for (int32_t token : tokens) out.push_back(reference.Forward(token));
  return out;
}

// max |a - b| over the row, relative to max |b|.
double RelativeMaxError(const std::vector<float>& a, const std::vector<double>& b) {
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(static_cast<double>(a[i]) - b[i]));
    max_ref = std::max(max_ref, std::abs(b[i]));
  }
  return max_diff / max_ref;
}

const std::vector<int32_t> kLlamaCppPrompt = {1, 5, 9, 13, 17};

TEST(LlamaExecutor, ReproducesLlamaCppTokensOnTinyLlamaF32) {
  auto executor = MakeExecutor("tiny-llama-f32.gguf");
  ASSERT_NE(executor, nullptr);
  EXPECT_TRUE(executor->weights().imported()) << "the CPU device imports the mapped file";
  // tests/data/gguf/README.md: llama.cpp's 16 greedy tokens after the prompt.
  const std::vector<int32_t> expected = {187, 49, 187, 49, 114, 114, 510, 346,
                                         49,  49, 49,  49, 49,  49,  49,  49};
  EXPECT_EQ(Greedy(*executor, {kLlamaCppPrompt}, 16).front(), expected);
}

// Every weight type against the float64 forward over the same (dequantized) weights, at every
// position of a prompt fed as one prefill chunk and then as decode steps. The executor keeps the
// KV cache in f16 and, for Q8_0/Q4_0 weights, quantizes activations to 8 bits (as llama.cpp does),
// hence the looser bound there.
TEST(LlamaExecutor, EveryWeightTypeMatchesTheFloat64Reference) {
  const std::vector<int32_t> prompt = {1, 300, 22, 7, 511, 64, 128, 9};
  const struct {
    const char* file;
    double bound;
  } cases[] = {{"tiny-llama-f32.gguf", 2e-3},
               {"tiny-llama-f16.gguf", 2e-3},
               {"tiny-llama-q8_0.gguf", 3e-2},
               {"tiny-llama-q4_0.gguf", 3e-2}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    auto executor = MakeExecutor(c.file);
    ASSERT_NE(executor, nullptr);
    const auto expected = ReferenceLogits(executor->model(), prompt);
    // Positions 0..3 as one prefill chunk (logits of position 3), then 4..7 one decode at a time.
    auto step = executor->Step({{0, {prompt.begin(), prompt.begin() + 4}, true}});
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    EXPECT_LT(RelativeMaxError(step->front(), expected[3]), c.bound) << "prefill position 3";
    for (size_t pos = 4; pos < prompt.size(); ++pos) {
      step = executor->Step({{0, {prompt[pos]}, true}});
      ASSERT_TRUE(step.ok()) << step.status().ToString();
      EXPECT_LT(RelativeMaxError(step->front(), expected[pos]), c.bound) << "position " << pos;
    }
  }
}

// A synthesised model of another shape: MQA (one KV head), head_dim 96 (not a power of two),
// three layers, BF16 and Q4_0 weights, written by `hwinfer model synth`'s code and read back.
TEST(LlamaExecutor, SynthesisedMqaModelsMatchTheFloat64Reference) {
  ModelShape shape;
  shape.name = "mqa-test";
  shape.n_layers = 3;
  shape.d_model = 192;
  shape.n_heads = 2;
  shape.n_kv_heads = 1;
  shape.ffn_dim = 320;
  shape.vocab_size = 300;
  shape.context_length = 64;
  shape.rope_theta = 500000.0;
  shape.rms_eps = 1e-6;
  const std::vector<int32_t> prompt = {1, 299, 17, 42, 5, 260};
  for (uint32_t type : {HWINFER_DTYPE_BF16, HWINFER_DTYPE_Q4_0}) {
    SCOPED_TRACE(type);
    cli::SynthOptions synth;
    synth.weights = cli::PureRecipe(type);
    synth.seed = 3;
    synth.std = 0.05;
    const std::string path = ::testing::TempDir() + "/mqa-" + std::to_string(::getpid()) + "-" +
                             std::to_string(type) + ".gguf";
    ASSERT_TRUE(cli::SynthesizeModel(shape, synth, path).ok());
    auto model = LlamaModel::Open(path);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    auto executor = LlamaExecutor::Create(CpuDevice(), *model);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    const auto expected = ReferenceLogits(**model, prompt);
    auto step = (*executor)->Step({{0, prompt, true}});
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    // Q4_0 quantizes activations to 8 bits; BF16 may round them to bf16 (AVX512_BF16: 8-bit
    // precision, relative 2^-9 per element), as llama.cpp does on both.
    EXPECT_LT(RelativeMaxError(step->front(), expected.back()),
              type == HWINFER_DTYPE_Q4_0 ? 3e-2 : 1e-2);
  }
}

TEST(LlamaExecutor, ABatchGivesEachSequenceItsOwnGreedyTokens) {
  ExecutorOptions options;
  options.max_sequences = 4;
  auto executor = MakeExecutor("tiny-llama-f16.gguf", options);
  ASSERT_NE(executor, nullptr);
  std::vector<std::vector<int32_t>> prompts = {
      {1, 5, 9, 13, 17}, {2}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3}, {400, 401}};
  const auto batched = Greedy(*executor, prompts, 12);
  ASSERT_EQ(batched.size(), prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(batched[i], Greedy(*executor, {prompts[i]}, 12).front()) << "sequence " << i;
  }
  EXPECT_EQ(executor->kv().num_used_blocks(), 0) << "Generate releases its sequences";
}

// One step that decodes sequence A while it prefills sequence B (and a chunked prefill of B
// against one in a single chunk) gives the logits of the separate runs.
TEST(LlamaExecutor, MixedAndChunkedStepsMatchSeparateRuns) {
  ExecutorOptions options;
  options.max_sequences = 2;
  auto executor = MakeExecutor("tiny-llama-f32.gguf", options);
  ASSERT_NE(executor, nullptr);
  const std::vector<int32_t> a = {10, 20, 30}, b = {40, 50, 60, 70, 80, 90, 100};
  // Alone: A's prompt then one decode token; B's prompt in one chunk.
  ASSERT_TRUE(executor->Step({{1, a, false}}).ok());
  auto a_alone = executor->Step({{1, {7}, true}});
  auto b_alone = executor->Step({{2, b, true}});
  ASSERT_TRUE(a_alone.ok() && b_alone.ok());
  ASSERT_TRUE(executor->Release(1).ok() && executor->Release(2).ok());
  // Together: A's prompt; then A decodes while B prefills its first 3 tokens; then B's rest.
  ASSERT_TRUE(executor->Step({{1, a, false}}).ok());
  auto mixed = executor->Step({{2, {b.begin(), b.begin() + 3}, false}, {1, {7}, true}});
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_TRUE(mixed->front().empty()) << "want_logits = false returns no logits";
  auto b_rest = executor->Step({{2, {b.begin() + 3, b.end()}, true}});
  ASSERT_TRUE(b_rest.ok()) << b_rest.status().ToString();
  // A's decode reads the same cache either way: equal up to summation order. B's second chunk
  // reads its first chunk's K/V back from the f16 cache, where the one-chunk prefill used them in
  // f32: logits move by about 1e-4 (they span about +-0.6).
  for (size_t i = 0; i < a_alone->front().size(); ++i) {
    ASSERT_NEAR((*mixed)[1][i], a_alone->front()[i], 1e-5) << "A's decode, logit " << i;
    ASSERT_NEAR(b_rest->front()[i], b_alone->front()[i], 1e-3)
        << "B's chunked prefill, logit " << i;
  }
}

TEST(LlamaExecutor, PromptsLongerThanOneStepArePrefilledInChunks) {
  ExecutorOptions small;
  small.max_batch_tokens = 4;
  small.max_sequences = 1;
  auto chunked = MakeExecutor("tiny-llama-q8_0.gguf", small);
  auto whole = MakeExecutor("tiny-llama-q8_0.gguf");
  ASSERT_NE(chunked, nullptr);
  ASSERT_NE(whole, nullptr);
  std::vector<int32_t> prompt(37);
  std::iota(prompt.begin(), prompt.end(), 100);
  EXPECT_EQ(Greedy(*chunked, {prompt}, 8), Greedy(*whole, {prompt}, 8));
}

// A fork shares the prompt's blocks; the first token after it copies the shared partial block.
TEST(LlamaExecutor, AForkContinuesLikeAFreshSequence) {
  ExecutorOptions options;
  options.max_sequences = 2;
  options.kv_block_size = 8;
  auto executor = MakeExecutor("tiny-llama-f16.gguf", options);
  ASSERT_NE(executor, nullptr);
  std::vector<int32_t> prompt(13);  // one full block and a partial one
  std::iota(prompt.begin(), prompt.end(), 30);
  ASSERT_TRUE(executor->Step({{1, prompt, false}}).ok());
  ASSERT_TRUE(executor->Fork(1, 2).ok());
  EXPECT_EQ(executor->kv().num_used_blocks(), 2);
  auto forked = executor->Step({{1, {5}, true}, {2, {6}, true}});
  ASSERT_TRUE(forked.ok()) << forked.status().ToString();
  EXPECT_EQ(executor->kv().num_used_blocks(), 3) << "the partial block was copied once";
  // The same operations on a fresh sequence: the prompt, then token 6 as a decode step.
  ASSERT_TRUE(executor->Step({{3, prompt, false}}).ok());
  auto fresh = executor->Step({{3, {6}, true}});
  ASSERT_TRUE(fresh.ok());
  for (size_t i = 0; i < fresh->front().size(); ++i) {
    ASSERT_NEAR((*forked)[1][i], fresh->front()[i], 1e-5) << "logit " << i;
  }
  EXPECT_NE((*forked)[0], (*forked)[1]) << "the two branches saw different tokens";
}

// int8 KV (per block-and-head scales) against f16 KV over 24 positions of generated text: the
// logits differ by at most 2% of their range, and the greedy tokens agree.
TEST(LlamaExecutor, Int8KvStaysWithinToleranceOfF16Kv) {
  ExecutorOptions int8;
  int8.kv_dtype = HWINFER_DTYPE_I8;
  auto with_f16 = MakeExecutor("tiny-llama-f32.gguf");
  auto with_int8 = MakeExecutor("tiny-llama-f32.gguf", int8);
  ASSERT_NE(with_f16, nullptr);
  ASSERT_NE(with_int8, nullptr);
  EXPECT_GT(with_f16->kv_bytes_per_token(), 1.9 * with_int8->kv_bytes_per_token());
  std::vector<int32_t> tokens = kLlamaCppPrompt;
  const auto generated = Greedy(*with_f16, {tokens}, 19).front();
  tokens.insert(tokens.end(), generated.begin(), generated.end());
  double worst = 0;
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    auto a = with_f16->Step({{0, {tokens[pos]}, true}});
    auto b = with_int8->Step({{0, {tokens[pos]}, true}});
    ASSERT_TRUE(a.ok() && b.ok());
    const auto& fa = a->front();
    const auto& fb = b->front();
    const auto [lo, hi] = std::minmax_element(fa.begin(), fa.end());
    double diff = 0;
    for (size_t i = 0; i < fa.size(); ++i) diff = std::max(diff, double{std::abs(fa[i] - fb[i])});
    worst = std::max(worst, diff / static_cast<double>(*hi - *lo));
    EXPECT_EQ(std::max_element(fa.begin(), fa.end()) - fa.begin(),
              std::max_element(fb.begin(), fb.end()) - fb.begin())
        << "position " << pos;
  }
  EXPECT_LT(worst, 0.02);
  RecordProperty("int8_vs_f16_worst_relative_logit_error", std::to_string(worst));
}

TEST(LlamaExecutor, RefusesBadStepsWithoutChangingState) {
  ExecutorOptions options;
  options.max_sequences = 2;
  options.kv_cache_tokens = 64;
  options.kv_block_size = 16;
  auto executor = MakeExecutor("tiny-llama-f32.gguf", options);
  ASSERT_NE(executor, nullptr);
  auto expect_error = [&](const std::vector<SequenceChunk>& batch, StatusCode code,
                          const std::string& message) {
    auto step = executor->Step(batch);
    ASSERT_FALSE(step.ok()) << message;
    EXPECT_EQ(step.status().code(), code);
    EXPECT_THAT(step.status().message(), HasSubstr(message));
    EXPECT_EQ(executor->kv().num_used_blocks(), 0) << "nothing was appended";
  };
  expect_error({}, StatusCode::kInvalidArgument, "the batch is empty");
  expect_error({{1, {1, 512}, true}}, StatusCode::kInvalidArgument,
               "token 512 (index 1) is outside the vocabulary [0, 512)");
  expect_error({{1, {-3}, true}}, StatusCode::kInvalidArgument, "token -3 (index 0)");
  expect_error({{1, {}, true}}, StatusCode::kInvalidArgument, "sequence 1 has no tokens");
  expect_error({{1, {1}, true}, {1, {2}, true}}, StatusCode::kInvalidArgument,
               "sequence 1 appears twice");
  expect_error({{1, {1}, true}, {2, {1}, true}, {3, {1}, true}}, StatusCode::kInvalidArgument,
               "3 sequences; max_sequences is 2");
  expect_error({{1, std::vector<int32_t>(513, 1), true}}, StatusCode::kInvalidArgument,
               "passes the context length 512");
  expect_error({{1, std::vector<int32_t>(65, 1), true}}, StatusCode::kOutOfMemory,
               "needs 5 more blocks of 16 tokens and has 4 free");
  SequenceChunk too_many_rows{1, {1, 2, 3}, true, 4};
  expect_error({too_many_rows}, StatusCode::kInvalidArgument,
               "sequence 1: logit_rows is 4; the chunk has 3 tokens");
  // The logits buffer holds max_sequences rows by default.
  SequenceChunk over_buffer{1, {1, 2, 3}, true, 3};
  expect_error({over_buffer}, StatusCode::kInvalidArgument,
               "3 rows of logits asked for; the executor holds 2 (max_logit_rows)");
  // After all that, a good step still runs.
  EXPECT_TRUE(executor->Step({{1, {1, 2, 3}, true}}).ok());
}

// Scoring a text: a chunk's logit_rows returns the logits of its last tokens, each row the same
// as the float64 reference's at that position, beside another sequence's last-token logits.
TEST(LlamaExecutor, LogitRowsReturnEveryScoredPositionOfAChunk) {
  ExecutorOptions options;
  options.max_sequences = 2;
  options.max_batch_tokens = 32;
  options.max_logit_rows = 32;
  auto executor = MakeExecutor("tiny-llama-f32.gguf", options);
  ASSERT_NE(executor, nullptr);
  std::vector<int32_t> text(20);
  std::iota(text.begin(), text.end(), 30);
  const std::vector<std::vector<double>> expected = ReferenceLogits(executor->model(), text);
  const auto vocab = static_cast<size_t>(executor->model().shape().vocab_size);
  // The first 12 tokens in one chunk (its last 5 rows), the other 8 in a second one (all rows),
  // beside a sequence that wants its last token's logits only.
  SequenceChunk first{1, {text.begin(), text.begin() + 12}, false, 5};
  auto step = executor->Step({first, {2, {7, 8, 9}, true}});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  ASSERT_EQ((*step)[0].size(), 5 * vocab);
  ASSERT_EQ((*step)[1].size(), vocab);
  SequenceChunk rest{1, {text.begin() + 12, text.end()}, false, 8};
  auto second = executor->Step({rest});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ((*second)[0].size(), 8 * vocab);
  auto row = [&](const std::vector<float>& rows, size_t r) {
    return std::vector<float>(rows.begin() + static_cast<ptrdiff_t>(r * vocab),
                              rows.begin() + static_cast<ptrdiff_t>((r + 1) * vocab));
  };
  // f16 KV against the exact cache: the same bound as the reference comparisons above.
  for (size_t r = 0; r < 5; ++r) {
    EXPECT_LT(RelativeMaxError(row((*step)[0], r), expected[7 + r]), 2e-3) << "position " << 7 + r;
  }
  for (size_t r = 0; r < 8; ++r) {
    EXPECT_LT(RelativeMaxError(row((*second)[0], r), expected[12 + r]), 2e-3)
        << "position " << 12 + r;
  }
  const std::vector<std::vector<double>> other = ReferenceLogits(executor->model(), {7, 8, 9});
  EXPECT_LT(RelativeMaxError((*step)[1], other.back()), 2e-3);
}

// A sequence that reserved blocks (the scheduler's max_length KV reservation) appends into them
// even when fewer are free; other sequences get only what nobody reserved.
TEST(LlamaExecutor, AReservedSequenceAppendsIntoItsReservation) {
  ExecutorOptions options;
  options.max_sequences = 2;
  options.kv_cache_tokens = 64;  // 4 blocks of 16
  options.kv_block_size = 16;
  auto executor = MakeExecutor("tiny-llama-f32.gguf", options);
  ASSERT_NE(executor, nullptr);
  ASSERT_TRUE(executor->mutable_kv()->Reserve(1, 48).ok());  // 3 blocks
  EXPECT_EQ(executor->kv().num_free_blocks(), 1);
  auto first = executor->Step({{1, std::vector<int32_t>(40, 7), true}});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(executor->kv().BlockTable(1).size(), 3u);
  EXPECT_EQ(executor->kv().ReservedBlocks(1), 0);
  auto other = executor->Step({{2, std::vector<int32_t>(20, 7), true}});
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(),
              HasSubstr("needs 2 more blocks of 16 tokens and has 1 free"));
  EXPECT_TRUE(executor->Step({{2, std::vector<int32_t>(16, 7), true}}).ok());
}

TEST(LlamaExecutor, RejectsBadOptions) {
  auto model = LlamaModel::Open(DataFile("tiny-llama-f32.gguf"));
  ASSERT_TRUE(model.ok());
  ExecutorOptions options;
  options.kv_dtype = HWINFER_DTYPE_Q4_0;
  auto executor = LlamaExecutor::Create(CpuDevice(), *model, options);
  ASSERT_FALSE(executor.ok());
  EXPECT_THAT(executor.status().message(), HasSubstr("kv_dtype is q4_0; expected f16 or i8"));
  options = ExecutorOptions{};
  options.max_sequences = 1000;
  executor = LlamaExecutor::Create(CpuDevice(), *model, options);
  ASSERT_FALSE(executor.ok());
  EXPECT_THAT(executor.status().message(), HasSubstr("max_sequences is 1000"));
}

// tiny-llama-f32.gguf with |edit| applied, as a model over |storage| (which must outlive it).
std::shared_ptr<const LlamaModel> EditedTinyLlama(const test::GgufEdit& edit,
                                                  std::vector<uint8_t>& storage) {
  auto bytes = test::EditedGguf(DataFile("tiny-llama-f32.gguf"), edit);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  if (!bytes.ok()) return nullptr;
  storage = std::move(*bytes);
  auto parsed = GgufFile::Parse(storage.data(), storage.size(), "edited.gguf");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return nullptr;
  auto model = LlamaModel::FromGguf(std::move(*parsed));
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : nullptr;
}

// context_length = 2^32 - 1 used to size block tables (6.4 GB before the KV cache was even
// tried) and a 1 TB cache. Now: the default cache (2 x context) is refused before anything is
// allocated, and a cache sized by the run works exactly as on the 512-token file.
TEST(ExecutorSizing, AHugeContextLengthSizesNothingByItself) {
  std::vector<uint8_t> storage;
  const auto model = EditedTinyLlama(
      [](test::Metadata& kvs, auto&) {
        test::SetKv(kvs, "llama.context_length", GgufValue::Uint32(0xFFFFFFFFu));
      },
      storage);
  ASSERT_NE(model, nullptr);
  auto refused = LlamaExecutor::Create(CpuDevice(), model);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kOutOfMemory);
  EXPECT_THAT(refused.status().message(), HasSubstr("the KV cache of 8589934592 tokens"));
  ExecutorOptions sized;
  sized.kv_cache_tokens = 64;
  EXPECT_EQ(LlamaExecutor::MaxBlocksPerSequence(model->shape(), sized), 4);
  auto executor = LlamaExecutor::Create(CpuDevice(), model, sized);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  EXPECT_EQ(
      Greedy(**executor, {{1, 5, 9, 13, 17}}, 16).front(),
      (std::vector<int32_t>{187, 49, 187, 49, 114, 114, 510, 346, 49, 49, 49, 49, 49, 49, 49, 49}));
}

TEST(ExecutorSizing, CachesPastTheBoundsOrTheDeviceAreRefusedBeforeAllocating) {
  auto model = LlamaModel::Open(DataFile("tiny-llama-f32.gguf"));
  ASSERT_TRUE(model.ok());
  ExecutorOptions options;
  options.kv_cache_tokens = std::numeric_limits<int64_t>::max();  // was a 1-block cache
  auto executor = LlamaExecutor::Create(CpuDevice(), *model, options);
  ASSERT_FALSE(executor.ok());
  EXPECT_THAT(executor.status().message(),
              HasSubstr("kv_cache_tokens is 9223372036854775807; expected in [0, 2147483647]"));
  options.kv_cache_tokens = kMaxKvCacheTokens;  // 1 TiB of f16 KV for this model
  executor = LlamaExecutor::Create(CpuDevice(), *model, options);
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.status().code(), StatusCode::kOutOfMemory);
  EXPECT_THAT(executor.status().message(),
              HasSubstr("the KV cache of 2147483648 tokens 1024.00 GiB"));
  EXPECT_NEAR(LlamaExecutor::MemoryNeeded((*model)->shape(), options).kv_bytes,
              static_cast<double>(kMaxKvCacheTokens + 1) * 512.0, 1.0);
}

// A weight tensor of +inf made every logit inf or NaN, and greedy sampling printed token 0.
TEST(LlamaExecutor, NonFiniteLogitsAreAnErrorNamingTheStep) {
  std::vector<uint8_t> storage;
  const auto model = EditedTinyLlama(
      [](auto&, std::vector<test::TensorCopy>& tensors) {
        test::FillF32(*test::FindTensorCopy(tensors, "output_norm.weight"),
                      std::numeric_limits<float>::infinity());
      },
      storage);
  ASSERT_NE(model, nullptr);
  auto executor = LlamaExecutor::Create(CpuDevice(), model);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  auto step = (*executor)->Step({{7, {1, 5, 9}, true}});
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.status().code(), StatusCode::kInternal);
  EXPECT_THAT(step.status().message(),
              HasSubstr("executor step 1: the logits of sequence 7 are not finite"));
  auto generated = Generate(**executor, {{1, 2}}, 4, SamplingParams{}, 100);
  ASSERT_FALSE(generated.ok());
  EXPECT_THAT(generated.status().message(), HasSubstr("are not finite"));
}

// n_new near 2^63 overflowed the positions check, decoded up to the context and failed there.
TEST(Generate, AnyNumberOfNewTokensIsCheckedBeforeAnythingRuns) {
  auto executor = MakeExecutor("tiny-llama-f32.gguf");
  ASSERT_NE(executor, nullptr);
  auto result =
      Generate(*executor, {{1, 2, 3}}, std::numeric_limits<int64_t>::max(), SamplingParams{});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("a prompt of 3 tokens plus 9223372036854775807 new tokens needs "
                        "9223372036854775809 positions"));
  EXPECT_EQ(executor->kv().num_used_blocks(), 0);
}

TEST(Generate, StreamsEachTokenAsItIsSampled) {
  auto executor = MakeExecutor("tiny-llama-f32.gguf");
  ASSERT_NE(executor, nullptr);
  const std::vector<std::vector<int32_t>> prompts = {{1, 5, 9, 13, 17}, {3, 4}};
  std::vector<std::vector<int32_t>> streamed(2);
  auto result =
      Generate(*executor, prompts, 6, SamplingParams{}, 0, [&](size_t sequence, int32_t token) {
        // Token k arrives right after the step that produced it: the KV
        // cache then holds the prompt and the k tokens fed back before it.
        const auto held =
            static_cast<size_t>(executor->kv().SequenceTokens(static_cast<SequenceId>(sequence)));
        EXPECT_EQ(held, prompts[sequence].size() + streamed[sequence].size());
        streamed[sequence].push_back(token);
      });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(streamed, result->tokens);
}

}  // namespace
}  // namespace hwinfer
