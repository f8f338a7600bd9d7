// tokenizer_bpe_test.cpp — the byte-level BPE tokenizer (`tokenizer.ggml.model = gpt2`) built from
// GGUF metadata alone, against llama.cpp: every text of its test file for the Llama 3 vocabulary
// (tests/data/text/ggml-vocab-llama-bpe.gguf.inp / .out, decompressed into the build tree), the
// same vocabulary under each other pre-tokenizer (`pre` rewritten; ids from llama.cpp's
// llama-tokenize on the rewritten file, tests/data/text/README.md), special and end-of-turn
// tokens, broken UTF-8, streaming, round trips and bad metadata.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gguf_edit.h"
#include "hwinfer/gguf.h"
#include "hwinfer/tokenizer.h"
#include "tokenizer_cases.h"

namespace hwinfer {
namespace {

const std::string kSourceDir = std::string(HWINFER_SOURCE_DIR) + "/tests/data/text/";
const std::string kVocab =
    std::string(HWINFER_TEST_DATA_BUILD_DIR) + "/text/ggml-vocab-llama-bpe.gguf";

// The Llama 3 vocabulary with tokenizer.ggml.pre set to |pre|, or with |edit| applied.
StatusOr<std::unique_ptr<Tokenizer>> EditedVocab(const test::GgufEdit& edit,
                                                 std::vector<uint8_t>& bytes) {
  auto edited = test::EditedGguf(kVocab, edit);
  if (!edited.ok()) return edited.status();
  bytes = std::move(*edited);
  auto file = GgufFile::Parse(bytes.data(), bytes.size(), "edited-llama-bpe.gguf");
  if (!file.ok()) return file.status();
  return Tokenizer::FromGguf(**file);
}

TEST(TokenizerBpe, EveryLlamaCppTestTextGivesItsIds) {
  auto tokenizer = test::LoadTokenizer(kVocab);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->family(), TokenizerFamily::kBytePairs);
  const auto cases = test::ReadTokenizerCases(kSourceDir + "ggml-vocab-llama-bpe.gguf.inp",
                                              kSourceDir + "ggml-vocab-llama-bpe.gguf.out");
  ASSERT_GE(cases.size(), 40u);
  for (const auto& [text, want] : cases) {
    EXPECT_EQ(tokenizer->Encode(text, false, false), want) << "text: '" << text << "'";
    EXPECT_EQ(tokenizer->Decode(want, false), text) << "ids of: '" << text << "'";
  }
}

TEST(TokenizerBpe, EachPreTokenizerGivesLlamaCppsIds) {
  for (const std::string pre : {"llama-bpe", "default", "gpt-2", "qwen2"}) {
    std::vector<uint8_t> bytes;
    auto tokenizer =
        EditedVocab([&](test::Metadata& kvs,
                        auto&) { test::SetKv(kvs, "tokenizer.ggml.pre", GgufValue::String(pre)); },
                    bytes);
    ASSERT_TRUE(tokenizer.ok()) << pre << ": " << tokenizer.status().ToString();
    const auto cases = test::ReadTokenizerCases(kSourceDir + "pretokenizers.inp",
                                                kSourceDir + "pretokenizers." + pre + ".out");
    ASSERT_GE(cases.size(), 50u);
    for (const auto& [text, want] : cases) {
      EXPECT_EQ((*tokenizer)->Encode(text, false, false), want)
          << "pre " << pre << ", text: '" << text << "'";
    }
  }
}

TEST(TokenizerBpe, SpecialAndEndOfTurnTokensAsLlama3Has) {
  auto tokenizer = test::LoadTokenizer(kVocab);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->bos(), 128000);
  EXPECT_EQ(tokenizer->text(128009), "<|eot_id|>");
  EXPECT_EQ(tokenizer->eot(), 128009);  // found by its text: the file has no eot_token_id
  EXPECT_TRUE(tokenizer->IsEndOfGeneration(tokenizer->eos()));
  EXPECT_TRUE(tokenizer->IsEndOfGeneration(128009));
  EXPECT_EQ(tokenizer->eos(), 128001);  // <|end_of_text|>
  EXPECT_FALSE(tokenizer->IsEndOfGeneration(9906));
  const std::string turn = "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>";
  EXPECT_EQ(tokenizer->Encode(turn, true, true),
            (std::vector<int32_t>{128000, 128006, 882, 128007, 271, 13347, 128009}));
  const std::vector<int32_t> plain = tokenizer->Encode(turn, false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 128006), 0);
  EXPECT_EQ(tokenizer->Decode(plain, false), turn);
  // Control tokens print only when asked.
  EXPECT_EQ(tokenizer->Decode({128006, 882, 128007}, false), "user");
  EXPECT_EQ(tokenizer->Decode({128006, 882, 128007}, true),
            "<|start_header_id|>user<|end_header_id|>");
}

// A broken byte reads as U+FFFD (as llama.cpp); valid text round-trips; a character split over
// byte tokens streams out once, whole.
TEST(TokenizerBpe, BrokenUtf8StreamingAndRoundTrips) {
  auto tokenizer = test::LoadTokenizer(kVocab);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_EQ(tokenizer->Decode(tokenizer->Encode("a\xff"
                                                "b \xe2\x82",
                                                false, false),
                              false),
            "a\xef\xbf\xbd"
            "b \xef\xbf\xbd\xef\xbf\xbd");
  const std::vector<int32_t> ids = tokenizer->Encode(" 😁", false, false);
  ASSERT_EQ(ids, (std::vector<int32_t>{27623, 223}));  // " \xf0\x9f\x98" + "\x81"
  StreamingDecoder decoder(*tokenizer);
  EXPECT_EQ(decoder.Push(ids[0]), " ");
  EXPECT_EQ(decoder.Push(ids[1]), "😁");
  EXPECT_EQ(decoder.Flush(), "");
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string text = test::RandomUtf8(rng, 16);
    EXPECT_EQ(tokenizer->Decode(tokenizer->Encode(text, true, false), false), text);
  }
}

TEST(TokenizerBpe, BadMetadataNamesTheKeyAndValue) {
  std::vector<uint8_t> bytes;
  auto unknown_pre = EditedVocab(
      [](test::Metadata& kvs, auto&) {
        test::SetKv(kvs, "tokenizer.ggml.pre", GgufValue::String("falcon"));
      },
      bytes);
  ASSERT_FALSE(unknown_pre.ok());
  EXPECT_NE(unknown_pre.status().message().find("tokenizer.ggml.pre 'falcon'"), std::string::npos);
  EXPECT_NE(unknown_pre.status().message().find("llama-bpe"), std::string::npos);
  auto bad_merge = EditedVocab(
      [](test::Metadata& kvs, auto&) {
        for (auto& [key, value] : kvs) {
          if (key != "tokenizer.ggml.merges") continue;
          auto& items = std::get<GgufArray>(value.data).items;
          items[5] = GgufValue::String("Ġt");  // no space between the two parts
          items[7] = GgufValue::String("zzzunknown Ġ");
        }
      },
      bytes);
  ASSERT_FALSE(bad_merge.ok());
  EXPECT_NE(bad_merge.status().message().find("tokenizer.ggml.merges[5] 'Ġt'"), std::string::npos)
      << bad_merge.status().ToString();
  auto no_merges = EditedVocab(
      [](test::Metadata& kvs, auto&) {
        std::erase_if(kvs, [](const auto& kv) { return kv.first == "tokenizer.ggml.merges"; });
      },
      bytes);
  ASSERT_FALSE(no_merges.ok());
  EXPECT_NE(no_merges.status().message().find("tokenizer.ggml.merges"), std::string::npos);
}

}  // namespace
}  // namespace hwinfer
