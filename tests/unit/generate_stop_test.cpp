// generate_stop_test.cpp — Generate's stop tokens on the CPU executor: a sequence that samples
// one keeps it as its last token, is released at once and decodes no more, while the others go
// on exactly as they would alone; and the text model, tokenizer to text, gives llama.cpp's
// answer (tests/data/text/README.md) and stops only where its end-of-generation tokens say.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cpu_device.h"
#include "hwinfer/generate.h"
#include "hwinfer/tokenizer.h"

namespace hwinfer {
namespace {

std::unique_ptr<LlamaExecutor> OpenExecutor(const std::string& path) {
  auto model = LlamaModel::Open(std::string(HWINFER_SOURCE_DIR) + "/tests/data/" + path);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return nullptr;
  auto executor = LlamaExecutor::Create(testing_support::CpuDevice(), *model);
  EXPECT_TRUE(executor.ok()) << executor.status().ToString();
  return executor.ok() ? std::move(*executor) : nullptr;
}

// llama.cpp's greedy tokens for prompt 1,5,9,13,17 on tiny-llama-f32 (tests/data/gguf/README.md).
const std::vector<int32_t> kGreedy = {187, 49, 187, 49, 114, 114, 510, 346};

TEST(GenerateStop, StoppedSequenceIsReleasedWhileTheOtherGoesOn) {
  auto executor = OpenExecutor("gguf/tiny-llama-f32.gguf");
  ASSERT_NE(executor, nullptr);
  auto alone = Generate(*executor, {{3, 4}}, 8, SamplingParams{});
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  std::vector<size_t> sequences_after_stop;  // sequences streamed once sequence 0 stopped
  bool stopped = false;
  auto result = Generate(
      *executor, {{1, 5, 9, 13, 17}, {3, 4}}, 8, SamplingParams{}, 0,
      [&](size_t sequence, int32_t token) {
        if (stopped) {
          sequences_after_stop.push_back(sequence);
          EXPECT_FALSE(executor->kv().HasSequence(0));  // released right after its stop token
        }
        if (sequence == 0 && token == 114) stopped = true;
      },
      [](int32_t token) { return token == 114; });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  // Sequence 0 ends with its first 114; sequence 1 never samples one and gives its tokens alone.
  EXPECT_EQ(result->tokens[0], std::vector<int32_t>(kGreedy.begin(), kGreedy.begin() + 5));
  ASSERT_EQ(std::count(alone->tokens[0].begin(), alone->tokens[0].end(), 114), 0);
  EXPECT_EQ(result->tokens[1], alone->tokens[0]);
  EXPECT_EQ(result->decode_step_seconds.size(), 7u);
  EXPECT_FALSE(sequences_after_stop.empty());
  EXPECT_THAT(sequences_after_stop, ::testing::Each(1u));
  EXPECT_EQ(executor->kv().num_used_blocks(), 0);
}

TEST(GenerateStop, DecodingEndsWhenEverySequenceHasStopped) {
  auto executor = OpenExecutor("gguf/tiny-llama-f32.gguf");
  ASSERT_NE(executor, nullptr);
  // The first token already stops: no decode step at all.
  auto first = Generate(*executor, {{1, 5, 9, 13, 17}}, 16, SamplingParams{}, 0, nullptr,
                        [](int32_t token) { return token == 187; });
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->tokens[0], std::vector<int32_t>{187});
  EXPECT_TRUE(first->decode_step_seconds.empty());
  // A stop token never sampled: every token, as without a predicate.
  auto never = Generate(*executor, {{1, 5, 9, 13, 17}}, 8, SamplingParams{}, 0, nullptr,
                        [](int32_t token) { return token == 2; });
  ASSERT_TRUE(never.ok()) << never.status().ToString();
  EXPECT_EQ(never->tokens[0], kGreedy);
  EXPECT_EQ(executor->kv().num_used_blocks(), 0);
}

// The done-when check of issue 16 through the core: text -> ids -> greedy -> streamed text.
TEST(GenerateStop, TextModelGivesLlamaCppsTextForBothPrompts) {
  const std::string path = "text/tiny-llama-spm-text-q8_0.gguf";
  auto file = GgufFile::Open(std::string(HWINFER_SOURCE_DIR) + "/tests/data/" + path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tokenizer = Tokenizer::FromGguf(**file);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  auto executor = OpenExecutor(path);
  ASSERT_NE(executor, nullptr);
  const struct {
    std::string prompt;
    int64_t n_new;
    std::string text;
  } cases[] = {
      {"The capital of France is", 16,
       "co品 Willvirtual✅Down способ equalitymarket screensiała біль fic povnoneine"},
      {"Hello world", 8, "˜ memb Re cet県 auf Nor månaden"},
  };
  for (const auto& c : cases) {
    StreamingDecoder decoder(**tokenizer);
    std::string text;
    auto result = Generate(
        *executor, {(*tokenizer)->Encode(c.prompt, true, false)}, c.n_new, SamplingParams{}, 0,
        [&](size_t, int32_t token) { text += decoder.Push(token); },
        [&](int32_t token) { return (*tokenizer)->IsEndOfGeneration(token); });
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    text += decoder.Flush();
    EXPECT_EQ(text, c.text) << c.prompt;
    EXPECT_EQ(result->tokens[0].size(), static_cast<size_t>(c.n_new));
  }
}

}  // namespace
}  // namespace hwinfer
