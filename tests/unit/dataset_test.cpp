// dataset_test.cpp — pins the benchmark's prompt datasets (hwinfer/dataset.h): which ShareGPT
// conversations and JSONL lines become requests, with which token counts (the Llama 2 vocabulary
// of tests/data/text), in which order, and that every bad file fails with one line naming the file
// and the line or conversation.
#include "hwinfer/dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hwinfer/gguf.h"
#include "temp_folder_test.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

std::string SourceFile(const std::string& path) { return std::string(HWINFER_SOURCE_DIR) + path; }

const Tokenizer& LlamaTokenizer() {
  static const std::unique_ptr<Tokenizer> tokenizer = [] {
    auto file = GgufFile::Open(SourceFile("/tests/data/text/ggml-vocab-llama-spm.gguf"));
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    auto made = Tokenizer::FromGguf(**file);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return std::move(*made);
  }();
  return *tokenizer;
}

int64_t PromptTokens(const std::string& text) {
  return static_cast<int64_t>(LlamaTokenizer().Encode(text, true, false).size());
}
int64_t AnswerTokens(const std::string& text) {
  return static_cast<int64_t>(LlamaTokenizer().Encode(text, false, false).size());
}

DatasetSpec Spec(DatasetSpec::Kind kind, const std::string& file) {
  DatasetSpec spec;
  spec.kind = kind;
  spec.file = file;
  return spec;
}

// A ShareGPT conversation of (from, value) turns.
std::string Conversation(const std::string& id,
                         const std::vector<std::pair<std::string, std::string>>& turns) {
  std::string text = "{\"id\": \"" + id + "\", \"conversations\": [";
  for (size_t i = 0; i < turns.size(); ++i) {
    text += (i ? ", " : "") + std::string("{\"from\": \"") + turns[i].first + "\", \"value\": \"" +
            turns[i].second + "\"}";
  }
  return text + "]}";
}

class DatasetTest : public test::TempFolderTest {
 protected:
  StatusOr<DatasetFile> Read(DatasetSpec::Kind kind, const std::string& name,
                             const std::string& text) {
    return ReadDataset(Spec(kind, Write(name, text)));
  }
  // The file read, expected to fail; its message.
  std::string ReadError(DatasetSpec::Kind kind, const std::string& name, const std::string& text) {
    StatusOr<DatasetFile> file = Read(kind, name, text);
    EXPECT_FALSE(file.ok());
    return file.ok() ? "" : file.status().message();
  }
};

TEST(DatasetSpecTest, ParsesEveryKind) {
  auto sharegpt = ParseDatasetSpec("sharegpt:data/conv.json");
  ASSERT_TRUE(sharegpt.ok());
  EXPECT_EQ(sharegpt->kind, DatasetSpec::Kind::kShareGpt);
  EXPECT_EQ(sharegpt->file, "data/conv.json");
  auto jsonl = ParseDatasetSpec("jsonl:c:/x.jsonl");  // only the first colon separates
  ASSERT_TRUE(jsonl.ok());
  EXPECT_EQ(jsonl->kind, DatasetSpec::Kind::kJsonl);
  EXPECT_EQ(jsonl->file, "c:/x.jsonl");
  EXPECT_EQ(DatasetSpecText(*jsonl), "jsonl:c:/x.jsonl");
  auto random = ParseDatasetSpec("random");
  ASSERT_TRUE(random.ok());
  EXPECT_EQ(random->kind, DatasetSpec::Kind::kRandom);
}

TEST(DatasetSpecTest, UnknownKindListsTheKnownOnes) {
  for (const char* text : {"foo:data.json", "ShareGPT:x.json", "random:x", ""}) {
    auto spec = ParseDatasetSpec(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_THAT(spec.status().message(), HasSubstr("expected sharegpt:FILE, jsonl:FILE or random"));
  }
  auto no_file = ParseDatasetSpec("sharegpt:");
  ASSERT_FALSE(no_file.ok());
  EXPECT_THAT(no_file.status().message(), HasSubstr("names no file; expected sharegpt:FILE"));
}

TEST_F(DatasetTest, ShareGptTakesTheFirstHumanTurnAndItsAnswer) {
  const std::string text =
      "[" + Conversation("a", {{"human", "First question"}, {"gpt", "First answer"}}) + ", " +
      Conversation("b", {{"system", "Be brief"},
                         {"gpt", "Hello"},
                         {"user", "Second question"},
                         {"assistant", "Second answer"},
                         {"human", "Later question"},
                         {"gpt", "Later answer"}}) +
      "]";
  auto file = Read(DatasetSpec::Kind::kShareGpt, "conv.json", text);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->entries.size(), 2u);
  EXPECT_EQ(file->entries[0].prompt, "First question");
  EXPECT_EQ(file->entries[0].answer, "First answer");
  EXPECT_EQ(file->entries[1].prompt, "Second question");
  EXPECT_EQ(file->entries[1].answer, "Second answer");
  EXPECT_EQ(file->entries[1].index, 1);
  EXPECT_EQ(file->records, 2);
  EXPECT_EQ(file->skipped_no_exchange, 0);
}

TEST_F(DatasetTest, ShareGptSkipsConversationsWithoutAnExchange) {
  const std::string text =
      "[" + Conversation("no-human", {{"gpt", "a"}, {"gpt", "b"}}) + ", " +
      Conversation("unanswered", {{"human", "a question"}}) + ", " +
      Conversation("human-twice", {{"human", "one"}, {"human", "two"}}) + ", " +
      Conversation("empty", {}) + ", {\"id\": \"no-conversations\"}, " +
      Conversation("kept", {{"human", "a real question"}, {"gpt", "a real answer"}}) + "]";
  auto file = Read(DatasetSpec::Kind::kShareGpt, "conv.json", text);
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->entries.size(), 1u);
  EXPECT_EQ(file->entries[0].prompt, "a real question");
  EXPECT_EQ(file->entries[0].index, 5);
  EXPECT_EQ(file->records, 6);
  EXPECT_EQ(file->skipped_no_exchange, 5);
}

TEST_F(DatasetTest, ShareGptWithoutAnyExchangeHasNoPrompts) {
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json",
                        "[" + Conversation("x", {{"gpt", "a"}, {"gpt", "b"}}) + "]"),
              HasSubstr("no prompts: none of its 1 conversations has a human turn followed by an "
                        "answer"));
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json", " [ ] "),
              HasSubstr("c.json: no prompts: the array is empty"));
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json", "\n"),
              HasSubstr("c.json: no prompts: the file is empty"));
}

TEST_F(DatasetTest, ShareGptBadFilesNameFileAndPlace) {
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json", "[\n  {\"id\": 1,,}\n]"),
              HasSubstr("c.json:2:12: not valid JSON: unexpected ','"));
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json", "{\"conversations\": []}"),
              HasSubstr("c.json: expected a JSON array of conversations"));
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json", "[3]"),
              HasSubstr("c.json: conversation 0: expected an object"));
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json",
                        "[{\"id\": \"q7\", \"conversations\": {}}]"),
              HasSubstr("c.json: conversation 0 (id \"q7\"): 'conversations' must be an array"));
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json",
                        "[{\"id\": \"q\"}, {\"id\": 9, \"conversations\": [{\"from\": \"human\", "
                        "\"value\": \"a\"}, {\"from\": \"gpt\", \"value\": 5}]}]"),
              HasSubstr("c.json: conversation 1 (id 9), turn 1: 'value' must be a string"));
}

TEST_F(DatasetTest, DeepNestingIsRefusedBeforeItIsBuilt) {
  const size_t depth = 1000000;  // would overflow the stack when dumped or freed recursively
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json",
                        std::string(depth, '[') + std::string(depth, ']')),
              HasSubstr("c.json:1: JSON nested more than 64 levels deep"));
  std::string object;
  for (size_t i = 0; i < depth; ++i) object += "{\"a\":";
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kJsonl, "p.jsonl",
                        "{\"prompt\": \"x\"}\n" + object + "1" + std::string(depth, '}')),
              HasSubstr("p.jsonl:2: JSON nested more than 64 levels deep"));
}

TEST_F(DatasetTest, InvalidUtf8NamesTheLine) {
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json",
                        "[{\"id\": \"u\", \"conversations\": [\n{\"from\": \"human\", \"value\": "
                        "\"caf\xe9\"}]}]"),
              HasSubstr("c.json:2:33: not valid JSON: invalid string: ill-formed UTF-8 byte"));
  // An escaped lone surrogate is no character either.
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kShareGpt, "c.json", "[\"\\ud800\"]"),
              HasSubstr("c.json:1:9: not valid JSON: invalid string: surrogate"));
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kJsonl, "p.jsonl",
                        "{\"prompt\": \"fine\"}\n\n{\"prompt\": \"bad \xc3\x28\"}\n"),
              HasSubstr("p.jsonl:3:18: not valid JSON: invalid string: ill-formed UTF-8 byte"));
}

TEST_F(DatasetTest, JsonlReadsPromptsAndOutputTokens) {
  auto file = Read(DatasetSpec::Kind::kJsonl, "p.jsonl",
                   "{\"prompt\": \"one\", \"output_tokens\": 7}\n\n  \n"
                   "{\"prompt\": \"two\", \"category\": \"ignored\"}");  // no final newline
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->entries.size(), 2u);
  EXPECT_EQ(file->entries[0].prompt, "one");
  EXPECT_EQ(file->entries[0].output_tokens, 7);
  EXPECT_EQ(file->entries[0].line, 1);
  EXPECT_EQ(file->entries[1].prompt, "two");
  EXPECT_EQ(file->entries[1].output_tokens, 0);
  EXPECT_EQ(file->entries[1].line, 4);
  EXPECT_EQ(file->records, 2);
}

TEST_F(DatasetTest, JsonlBadLinesNameFileAndLine) {
  const std::string good = "{\"prompt\": \"fine\"}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"prompt\": \"never closed\", ", "p.jsonl:2:"},
      {"not json", "p.jsonl:2:2: not valid JSON: invalid literal"},
      {"[\"a list\"]", "p.jsonl:2: expected a JSON object like {\"prompt\""},
      {"{\"text\": \"x\"}", "p.jsonl:2: missing key 'prompt'"},
      {"{\"prompt\": 5}", "p.jsonl:2: 'prompt' must be a non-empty string; got 5"},
      {"{\"prompt\": \"\"}", "p.jsonl:2: 'prompt' must be a non-empty string"},
      {"{\"prompt\": \"x\", \"output_tokens\": 0}",
       "p.jsonl:2: 'output_tokens' must be an integer in [1, 2147483647]; got 0"},
      {"{\"prompt\": \"x\", \"output_tokens\": 1.5}", "p.jsonl:2: 'output_tokens' must be"},
      {"{\"prompt\": \"x\", \"output_tokens\": 18446744073709551615}", "got 18446744073709551615"},
  };
  for (const auto& [line, message] : cases) {
    EXPECT_THAT(ReadError(DatasetSpec::Kind::kJsonl, "p.jsonl", good + line + "\n" + good),
                HasSubstr(message))
        << line;
  }
  EXPECT_THAT(ReadError(DatasetSpec::Kind::kJsonl, "p.jsonl", "\n\n"),
              HasSubstr("p.jsonl: no prompts: the file has no lines"));
}

TEST_F(DatasetTest, MissingFileIsNotFound) {
  auto file = ReadDataset(Spec(DatasetSpec::Kind::kShareGpt, (dir_ / "none.json").string()));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(file.status().message(), HasSubstr("dataset file '"));
  EXPECT_THAT(file.status().message(), HasSubstr("none.json' does not exist"));
}

DatasetFile ShareGptFile(const std::vector<std::pair<std::string, std::string>>& pairs) {
  DatasetFile file;
  file.spec = Spec(DatasetSpec::Kind::kShareGpt, "mem.json");
  for (const auto& [prompt, answer] : pairs) {
    DatasetEntry entry;
    entry.prompt = prompt;
    entry.answer = answer;
    entry.index = static_cast<int64_t>(file.entries.size());
    file.entries.push_back(entry);
  }
  file.records = static_cast<int64_t>(pairs.size());
  return file;
}

WorkloadSpec InFileOrder(int64_t num_requests) {
  WorkloadSpec spec;
  spec.num_requests = num_requests;
  spec.dataset.kind = DatasetSpec::Kind::kShareGpt;
  spec.dataset.shuffle = false;
  return spec;
}

const std::vector<std::pair<std::string, std::string>> kPairs = {
    {"How many legs does a spider have?", "A spider has eight legs."},
    {"Name a prime number between ten and twenty.", "Thirteen is one; so are 11, 17 and 19."},
    {"What colour do you get by mixing blue and yellow?", "You get green."},
    {"Which ocean is the largest?", "The Pacific Ocean is the largest of them all."},
};

TEST(DatasetSampleTest, LengthsAreTheTokenizersCounts) {
  DatasetStats stats;
  auto requests =
      SampleDataset(ShareGptFile(kPairs), InFileOrder(0), LlamaTokenizer(), 512, &stats);
  ASSERT_TRUE(requests.ok()) << requests.status().message();
  ASSERT_EQ(requests->size(), kPairs.size());
  for (size_t i = 0; i < kPairs.size(); ++i) {
    const WorkloadRequest& r = (*requests)[i];
    EXPECT_EQ(r.id, static_cast<int64_t>(i));
    EXPECT_EQ(r.prompt, LlamaTokenizer().Encode(kPairs[i].first, true, false));
    EXPECT_EQ(r.input_len, PromptTokens(kPairs[i].first));
    EXPECT_EQ(r.output_len, AnswerTokens(kPairs[i].second));
    EXPECT_EQ(r.prompt.front(), 1);  // BOS, as the vocabulary's add_bos_token says
  }
  EXPECT_EQ(stats.used, 4);
  EXPECT_EQ(stats.requests, 4);
  EXPECT_EQ(stats.tokenized, 4);
}

TEST(DatasetSampleTest, VllmLengthFilterSkipsShortAndLongPairs) {
  std::string long_prompt;
  for (int i = 0; i < 300; ++i) long_prompt += "word" + std::to_string(i) + " ";
  ASSERT_GT(PromptTokens(long_prompt), 1024);
  std::string medium_prompt, long_answer;
  for (int i = 0; i < 150; ++i) medium_prompt += "ask" + std::to_string(i) + " ";
  for (int i = 0; i < 500; ++i) long_answer += "answer" + std::to_string(i) + " ";
  ASSERT_LE(PromptTokens(medium_prompt), 1024);
  ASSERT_GT(PromptTokens(medium_prompt) + AnswerTokens(long_answer), 2048);
  std::vector<std::pair<std::string, std::string>> pairs = kPairs;
  pairs.push_back({"Hi", "Hello there, how are you?"});  // prompt < 4 tokens
  pairs.push_back({"Is water wet?", "Yes."});            // answer < 4 tokens
  pairs.push_back({long_prompt, "Fine."});               // prompt > 1024
  pairs.push_back({medium_prompt, long_answer});         // sum > 2048
  DatasetStats stats;
  auto requests = SampleDataset(ShareGptFile(pairs), InFileOrder(0), LlamaTokenizer(), 0, &stats);
  ASSERT_TRUE(requests.ok()) << requests.status().message();
  EXPECT_EQ(requests->size(), kPairs.size());
  EXPECT_EQ(stats.skipped_length, 4);
  EXPECT_EQ(stats.skipped_context, 0);
  // An output override drops the answer's minimum, not the prompt's.
  WorkloadSpec spec = InFileOrder(0);
  spec.dataset.override_output = true;
  spec.output.value = 3;
  requests = SampleDataset(ShareGptFile(pairs), spec, LlamaTokenizer(), 0, &stats);
  ASSERT_TRUE(requests.ok());
  EXPECT_EQ(requests->size(), kPairs.size() + 2);  // "Is water wet?" and the long answer's pair
  for (const WorkloadRequest& r : *requests) EXPECT_EQ(r.output_len, 3);
}

TEST(DatasetSampleTest, RequestsPastTheContextAreSkippedAndNoneLeftIsAnError) {
  const int64_t first_total = PromptTokens(kPairs[0].first) + AnswerTokens(kPairs[0].second);
  DatasetStats stats;
  auto requests =
      SampleDataset(ShareGptFile(kPairs), InFileOrder(0), LlamaTokenizer(), first_total, &stats);
  ASSERT_TRUE(requests.ok()) << requests.status().message();
  for (const WorkloadRequest& r : *requests) EXPECT_LE(r.input_len + r.output_len, first_total);
  EXPECT_EQ(stats.skipped_context + stats.used, 4);
  EXPECT_GE(stats.used, 1);
  auto none = SampleDataset(ShareGptFile(kPairs), InFileOrder(0), LlamaTokenizer(), 8, &stats);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(),
              HasSubstr("dataset sharegpt:mem.json: no usable prompts: of 4 conversations, 4 need "
                        "more than the model's context of 8 tokens"));
}

TEST(DatasetSampleTest, MoreRequestsThanPromptsRepeatThem) {
  DatasetStats stats;
  auto requests =
      SampleDataset(ShareGptFile(kPairs), InFileOrder(10), LlamaTokenizer(), 512, &stats);
  ASSERT_TRUE(requests.ok());
  ASSERT_EQ(requests->size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ((*requests)[i].id, static_cast<int64_t>(i));
    EXPECT_EQ((*requests)[i].prompt, (*requests)[i % 4].prompt);
  }
  EXPECT_EQ(stats.used, 4);
  EXPECT_EQ(stats.requests, 10);
  // Fewer requests than prompts: only what is needed is tokenized.
  requests = SampleDataset(ShareGptFile(kPairs), InFileOrder(2), LlamaTokenizer(), 512, &stats);
  ASSERT_TRUE(requests.ok());
  EXPECT_EQ(requests->size(), 2u);
  EXPECT_EQ(stats.tokenized, 2);
}

TEST(DatasetSampleTest, ShuffleIsASeededPermutation) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 0; i < 20; ++i) {
    pairs.push_back({"Question number " + std::to_string(i) + " is here?",
                     "Answer number " + std::to_string(i) + " is here."});
  }
  auto order = [&](uint64_t seed) {
    WorkloadSpec spec = InFileOrder(0);
    spec.dataset.shuffle = true;
    spec.seed = seed;
    auto requests = SampleDataset(ShareGptFile(pairs), spec, LlamaTokenizer(), 512, nullptr);
    EXPECT_TRUE(requests.ok());
    std::vector<std::vector<int32_t>> prompts;
    for (const WorkloadRequest& r : *requests) prompts.push_back(r.prompt);
    return prompts;
  };
  const auto first = order(1);
  EXPECT_EQ(first, order(1));
  EXPECT_NE(first, order(2));
  std::vector<std::vector<int32_t>> in_file_order;
  for (const auto& pair : pairs) {
    in_file_order.push_back(LlamaTokenizer().Encode(pair.first, true, false));
  }
  EXPECT_NE(first, in_file_order);
  EXPECT_EQ(std::set(first.begin(), first.end()),
            std::set(in_file_order.begin(), in_file_order.end()));
}

TEST(DatasetSampleTest, JsonlOutputTokensElseTheWorkloadsOutput) {
  DatasetFile file;
  file.spec = Spec(DatasetSpec::Kind::kJsonl, "mem.jsonl");
  for (const auto& [prompt, tokens] :
       std::vector<std::pair<std::string, int64_t>>{{"Tell me a joke.", 9}, {"Hi", 0}}) {
    DatasetEntry entry;
    entry.prompt = prompt;
    entry.output_tokens = tokens;
    entry.line = static_cast<int64_t>(file.entries.size()) + 3;
    file.entries.push_back(entry);
  }
  file.records = 2;
  WorkloadSpec spec = InFileOrder(0);
  spec.dataset.kind = DatasetSpec::Kind::kJsonl;
  spec.output.value = 21;
  auto requests = SampleDataset(file, spec, LlamaTokenizer(), 512, nullptr);
  ASSERT_TRUE(requests.ok()) << requests.status().message();
  ASSERT_EQ(requests->size(), 2u);
  EXPECT_EQ((*requests)[0].output_len, 9);
  EXPECT_EQ((*requests)[0].line, 3);
  EXPECT_EQ((*requests)[1].output_len, 21);
  EXPECT_EQ((*requests)[1].line, 4);
  // No length filter for JSONL: a prompt of 2 tokens is sent.
  EXPECT_EQ((*requests)[1].input_len, 2);
}

}  // namespace
}  // namespace hwinfer
