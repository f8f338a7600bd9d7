// tokenizer_spm_test.cpp — the SentencePiece tokenizer (`tokenizer.ggml.model = llama`) built
// from GGUF metadata alone, against llama.cpp: every text of its tokenizer test file for the
// Llama 2 vocabulary (tests/data/text/ggml-vocab-llama-spm.gguf.inp / .out, ids without BOS),
// the prompt ids and generated text of the tiny text model (tests/data/text/README.md), round
// trips, the streaming decoder and bad metadata.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/tokenizer.h"
#include "tokenizer_cases.h"

namespace hwinfer {
namespace {

const std::string kDir = std::string(HWINFER_SOURCE_DIR) + "/tests/data/text/";

std::unique_ptr<Tokenizer> Load(const std::string& file) {
  return test::LoadTokenizer(kDir + file);
}

std::vector<std::pair<std::string, std::vector<int32_t>>> ReadCases(const std::string& stem) {
  return test::ReadTokenizerCases(kDir + stem + ".inp", kDir + stem + ".out");
}

TEST(TokenizerSpm, EveryLlamaCppTestTextGivesItsIds) {
  auto tokenizer = Load("ggml-vocab-llama-spm.gguf");
  ASSERT_NE(tokenizer, nullptr);
  const auto cases = ReadCases("ggml-vocab-llama-spm.gguf");
  ASSERT_GE(cases.size(), 30u);
  for (const auto& [text, want] : cases) {
    EXPECT_EQ(tokenizer->Encode(text, false, false), want) << "text: '" << text << "'";
    EXPECT_EQ(tokenizer->Decode(want, false), text) << "ids of: '" << text << "'";
  }
}

TEST(TokenizerSpm, TextModelPromptsAndGeneratedTextAreLlamaCpps) {
  auto tokenizer = Load("tiny-llama-spm-text-q8_0.gguf");
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->Encode("The capital of France is", true, false),
            (std::vector<int32_t>{1, 450, 7483, 310, 3444, 338}));
  EXPECT_EQ(tokenizer->Encode("Hello world", true, false), (std::vector<int32_t>{1, 15043, 3186}));
  const std::vector<int32_t> generated = {1111,  31399, 2811,  18714, 31681, 6767,  27876, 17193,
                                          28549, 11844, 23398, 19115, 22959, 16545, 9290,  457};
  const std::string text =
      "co品 Willvirtual✅Down способ equalitymarket screensiała біль fic povnoneine";
  std::string streamed;
  StreamingDecoder decoder(*tokenizer);
  for (int32_t id : generated) streamed += decoder.Push(id);
  streamed += decoder.Flush();
  EXPECT_EQ(streamed, text);
  EXPECT_EQ(tokenizer->bos(), 1);
  EXPECT_EQ(tokenizer->eos(), 2);
  EXPECT_TRUE(tokenizer->IsEndOfGeneration(2));
}

// Characters split over byte tokens come out whole, once; random UTF-8 round-trips.
TEST(TokenizerSpm, StreamingHoldsBackSplitCharactersAndRandomTextRoundTrips) {
  auto tokenizer = Load("ggml-vocab-llama-spm.gguf");
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> ids = tokenizer->Encode("🦙", false, false);  // no such token
  ASSERT_GE(ids.size(), 4u);                                                 // byte tokens
  StreamingDecoder decoder(*tokenizer);
  std::vector<std::string> pieces;
  for (int32_t id : ids) pieces.push_back(decoder.Push(id));
  for (size_t k = 0; k + 1 < pieces.size(); ++k)
    EXPECT_EQ(pieces[k].find("\xf0"), std::string::npos);
  EXPECT_EQ(pieces.back(), "🦙");  // all four bytes at once, with the last byte token
  std::string all;
  for (const std::string& piece : pieces) all += piece;
  EXPECT_EQ(all, " 🦙");  // the space prefix's own token came first
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string text = test::RandomUtf8(rng, 12);
    EXPECT_EQ(tokenizer->Decode(tokenizer->Encode(text, true, false), false), text);
  }
}

TEST(TokenizerSpm, SpecialTokenTextsAreParsedOnlyWhenAsked) {
  auto tokenizer = Load("ggml-vocab-llama-spm.gguf");
  ASSERT_NE(tokenizer, nullptr);
  const std::vector<int32_t> parsed = tokenizer->Encode("<s>Hi</s>", false, true);
  ASSERT_GE(parsed.size(), 3u);
  EXPECT_EQ(parsed.front(), 1);
  EXPECT_EQ(parsed.back(), 2);
  const std::vector<int32_t> plain = tokenizer->Encode("<s>Hi</s>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_GT(plain.size(), parsed.size());
}

TEST(TokenizerSpm, BadMetadataNamesTheKey) {
  GgufWriter writer;
  ASSERT_TRUE(writer.AddKv("tokenizer.ggml.model", GgufValue::String("llama")).ok());
  ASSERT_TRUE(writer
                  .AddKv("tokenizer.ggml.tokens",
                         GgufValue::Array(GgufType::kString,
                                          {GgufValue::String("a"), GgufValue::String("b")}))
                  .ok());
  ASSERT_TRUE(writer
                  .AddKv("tokenizer.ggml.scores",
                         GgufValue::Array(GgufType::kFloat32, {GgufValue::Float32(0)}))
                  .ok());
  auto bytes = writer.Serialize();
  ASSERT_TRUE(bytes.ok());
  auto file = GgufFile::Parse(bytes->data(), bytes->size(), "short-scores.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto tokenizer = Tokenizer::FromGguf(**file);
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_NE(tokenizer.status().message().find(
                "tokenizer.ggml.scores: 1 entries, expected one per token (2)"),
            std::string::npos)
      << tokenizer.status().ToString();
  GgufWriter gpt2;
  ASSERT_TRUE(gpt2.AddKv("tokenizer.ggml.model", GgufValue::String("rwkv")).ok());
  bytes = gpt2.Serialize();
  ASSERT_TRUE(bytes.ok());
  file = GgufFile::Parse(bytes->data(), bytes->size(), "rwkv.gguf");
  ASSERT_TRUE(file.ok());
  tokenizer = Tokenizer::FromGguf(**file);
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_NE(tokenizer.status().message().find("tokenizer.ggml.model 'rwkv'"), std::string::npos);
}

}  // namespace
}  // namespace hwinfer
