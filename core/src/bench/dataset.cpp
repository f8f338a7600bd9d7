// dataset.cpp — prompt datasets for the benchmark (hwinfer/dataset.h): ShareGPT conversations
// and vLLM's custom JSONL read and checked, then tokenized, filtered, ordered and turned into the
// workload's requests.
// Must not know about schedulers, devices or arrivals: it only says what each request sends and
// how many tokens it asks for.
#include "hwinfer/dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/workload_random.h"
#include "hwinfer/input_file.h"
#include "hwinfer/text_escape.h"

namespace hwinfer {
namespace {

using bench_internal::DrawLength;
using bench_internal::MakeRng;
using bench_internal::RandomStream;
using bench_internal::UniformInt;
using nlohmann::json;

// vLLM's length filter for ShareGPT (is_valid_sequence in vllm/benchmarks/datasets).
constexpr int64_t kMinTokens = 4;
constexpr int64_t kMaxPromptTokens = 1024;
constexpr int64_t kMaxPromptAndOutputTokens = 2048;

constexpr const char* kShareGptForm =
    "[{\"id\": ..., \"conversations\": [{\"from\": \"human\", \"value\": ...}, {\"from\": "
    "\"gpt\", \"value\": ...}]}, ...]";
constexpr const char* kJsonlForm = "{\"prompt\": \"...\", \"output_tokens\": 128}";

// Deeper JSON is refused before it is built: a dataset needs 4 levels, and dumping or freeing a
// value a million levels deep would overflow the stack.
constexpr int kMaxJsonDepth = 64;
struct NestedTooDeep {};

// |text| parsed; a syntax error (invalid UTF-8 included) is "FILE:LINE:COLUMN: not valid JSON:
// <what the parser says>", the line counted from |first_line|.
StatusOr<json> ParseJson(const std::string& text, const std::string& file, int64_t first_line) {
  try {
    return json::parse(text, [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth) throw NestedTooDeep{};
      return true;
    });
  } catch (const NestedTooDeep&) {
    return InvalidArgument(fmt::format("{}:{}: JSON nested more than {} levels deep", file,
                                       first_line, kMaxJsonDepth));
  } catch (const json::parse_error& e) {
    const size_t at = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const auto line = first_line + std::count(text.begin(), text.begin() + at, '\n');
    const size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
    const size_t column = line_start == std::string::npos || at == 0 ? at + 1 : at - line_start;
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while
    // parsing value - invalid literal; last read: 'x'" -> "invalid literal".
    std::string detail = e.what();
    if (const size_t dash = detail.find(" - "); dash != std::string::npos) {
      detail = detail.substr(dash + 3);
    }
    detail = detail.substr(0, detail.find("; last read"));
    return InvalidArgument(fmt::format("{}:{}:{}: not valid JSON: {}", file, line, column,
                                       EscapeControlCharacters(detail)));
  }
}

// A JSON value in a message: its text, shortened and escaped.
std::string Shown(const json& value) {
  constexpr size_t kShownBytes = 60;
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kShownBytes) text = text.substr(0, kShownBytes) + "...";
  return EscapeControlCharacters(text);
}

// "FILE: conversation 3 (id "abc")".
std::string ConversationWhere(const std::string& file, size_t index, const json& conversation) {
  std::string where = fmt::format("{}: conversation {}", file, index);
  if (conversation.is_object() && conversation.contains("id")) {
    const json& id = conversation["id"];
    where += " (id " +
             (id.is_string() ? "\"" + EscapeControlCharacters(id.get<std::string>()) + "\""
                             : Shown(id)) +
             ")";
  }
  return where;
}

bool IsHumanRole(const std::string& role) { return role == "human" || role == "user"; }

// The prompt and answer of one conversation; nullopt when it has no human turn followed by an
// answer (or no "conversations": skipped, as vLLM skips it). A value of the wrong type is an error.
StatusOr<std::optional<DatasetEntry>> ReadConversation(const std::string& file, size_t index,
                                                       const json& conversation) {
  if (!conversation.is_object()) {
    return InvalidArgument(fmt::format(
        "{}: expected an object like {}; got {}", ConversationWhere(file, index, conversation),
        "{\"id\": ..., \"conversations\": [...]}", Shown(conversation)));
  }
  if (!conversation.contains("conversations")) return std::optional<DatasetEntry>();
  const json& turns = conversation["conversations"];
  if (!turns.is_array()) {
    return InvalidArgument(fmt::format("{}: 'conversations' must be an array of turns; got {}",
                                       ConversationWhere(file, index, conversation), Shown(turns)));
  }
  std::vector<std::pair<std::string, std::string>> roles_and_values;
  for (size_t t = 0; t < turns.size(); ++t) {
    const json& turn = turns[t];
    for (const char* key : {"from", "value"}) {
      if (!turn.is_object() || !turn.contains(key) || !turn[key].is_string()) {
        return InvalidArgument(
            fmt::format("{}, turn {}: '{}' must be a string, as in {{\"from\": \"human\", "
                        "\"value\": \"...\"}}; got {}",
                        ConversationWhere(file, index, conversation), t, key, Shown(turn)));
      }
    }
    roles_and_values.emplace_back(turn["from"].get<std::string>(),
                                  turn["value"].get<std::string>());
  }
  const auto human = std::find_if(roles_and_values.begin(), roles_and_values.end(),
                                  [](const auto& turn) { return IsHumanRole(turn.first); });
  if (human == roles_and_values.end() || human + 1 == roles_and_values.end()) {
    return std::optional<DatasetEntry>();
  }
  const std::string& reply_role = (human + 1)->first;
  if (IsHumanRole(reply_role) || reply_role == "system") return std::optional<DatasetEntry>();
  DatasetEntry entry;
  entry.prompt = human->second;
  entry.answer = (human + 1)->second;
  entry.index = static_cast<int64_t>(index);
  return std::optional<DatasetEntry>(std::move(entry));
}

// "FILE: no prompts: <why>; expected <form>".
Status NoPrompts(const DatasetSpec& spec, const std::string& why) {
  return InvalidArgument(
      fmt::format("dataset {}: no prompts: {}; expected {}", DatasetSpecText(spec), why,
                  spec.kind == DatasetSpec::Kind::kJsonl ? kJsonlForm : kShareGptForm));
}

StatusOr<DatasetFile> ReadShareGpt(const DatasetSpec& spec) {
  HWINFER_ASSIGN_OR_RETURN(const std::string text,
                           ReadInputFile(spec.file, "dataset file", kMaxWorkloadFileBytes));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return NoPrompts(spec, "the file is empty");
  }
  HWINFER_ASSIGN_OR_RETURN(const json document, ParseJson(text, spec.file, 1));
  if (!document.is_array()) {
    return InvalidArgument(fmt::format("{}: expected a JSON array of conversations {}; got {}",
                                       spec.file, kShareGptForm, Shown(document)));
  }
  DatasetFile file;
  file.spec = spec;
  file.records = static_cast<int64_t>(document.size());
  for (size_t i = 0; i < document.size(); ++i) {
    HWINFER_ASSIGN_OR_RETURN(std::optional<DatasetEntry> entry,
                             ReadConversation(spec.file, i, document[i]));
    if (entry) {
      file.entries.push_back(std::move(*entry));
    } else {
      ++file.skipped_no_exchange;
    }
  }
  if (document.empty()) return NoPrompts(spec, "the array is empty");
  if (file.entries.empty()) {
    return NoPrompts(spec, fmt::format("none of its {} conversations has a human turn followed "
                                       "by an answer",
                                       file.records));
  }
  return file;
}

// One JSONL line's prompt (and output_tokens).
StatusOr<DatasetEntry> ReadJsonlLine(const std::string& file, int64_t line,
                                     const std::string& text) {
  HWINFER_ASSIGN_OR_RETURN(const json object, ParseJson(text, file, line));
  const std::string where = fmt::format("{}:{}", file, line);
  if (!object.is_object()) {
    return InvalidArgument(fmt::format("{}: expected a JSON object like {}; got {}", where,
                                       kJsonlForm, Shown(object)));
  }
  if (!object.contains("prompt")) {
    return InvalidArgument(
        fmt::format("{}: missing key 'prompt' (expected {})", where, kJsonlForm));
  }
  const json& prompt = object["prompt"];
  if (!prompt.is_string() || prompt.get<std::string>().empty()) {
    return InvalidArgument(
        fmt::format("{}: 'prompt' must be a non-empty string; got {}", where, Shown(prompt)));
  }
  DatasetEntry entry;
  entry.prompt = prompt.get<std::string>();
  entry.line = line;
  if (object.contains("output_tokens")) {
    const json& value = object["output_tokens"];
    const bool in_range =
        value.is_number_integer() && value.get<int64_t>() >= 1 &&
        (value.is_number_unsigned() ? value.get<uint64_t>() <= uint64_t{kMaxRequestTokens}
                                    : value.get<int64_t>() <= kMaxRequestTokens);
    if (!in_range) {
      return InvalidArgument(
          fmt::format("{}: 'output_tokens' must be an integer in [1, {}]; got {}", where,
                      kMaxRequestTokens, Shown(value)));
    }
    entry.output_tokens = value.get<int64_t>();
  }
  return entry;
}

StatusOr<DatasetFile> ReadJsonlDataset(const DatasetSpec& spec) {
  HWINFER_ASSIGN_OR_RETURN(InputFile in, InputFile::Open(spec.file, "dataset file"));
  if (in.size_bytes() > kMaxWorkloadFileBytes) {
    return InvalidArgument(fmt::format("dataset file '{}' is {} bytes; at most {} are read",
                                       spec.file, in.size_bytes(), kMaxWorkloadFileBytes));
  }
  DatasetFile file;
  file.spec = spec;
  std::string text;
  int64_t line = 0;
  while (true) {
    HWINFER_ASSIGN_OR_RETURN(const bool more, in.ReadLine(&text, kMaxWorkloadLineBytes));
    if (!more) break;
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (file.records == kMaxWorkloadRequests) {
      return InvalidArgument(fmt::format("{}:{}: more than {} prompts; a dataset holds at most {}",
                                         spec.file, line, kMaxWorkloadRequests,
                                         kMaxWorkloadRequests));
    }
    HWINFER_ASSIGN_OR_RETURN(DatasetEntry entry, ReadJsonlLine(spec.file, line, text));
    entry.index = file.records++;
    file.entries.push_back(std::move(entry));
  }
  if (file.entries.empty()) return NoPrompts(spec, "the file has no lines");
  return file;
}

// The order the entries are looked at: file order, or a seeded Fisher-Yates shuffle.
std::vector<size_t> EntryOrder(size_t count, const WorkloadSpec& spec) {
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), size_t{0});
  if (!spec.dataset.shuffle) return order;
  std::mt19937_64 rng = MakeRng(spec.seed, RandomStream::kDatasetOrder);
  for (size_t i = count; i > 1; --i) {
    const auto j = static_cast<size_t>(UniformInt(rng, 0, static_cast<int64_t>(i) - 1));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

// The output length of |entry|: `output` when it overrides, else the answer's token count
// (sharegpt) or `output_tokens`, else `output` (a JSONL line without it).
int64_t OutputLength(const DatasetEntry& entry, const WorkloadSpec& spec,
                     const Tokenizer& tokenizer, std::mt19937_64& rng) {
  if (spec.dataset.override_output) return DrawLength(spec.output, rng);
  if (spec.dataset.kind == DatasetSpec::Kind::kShareGpt) {
    return static_cast<int64_t>(
        tokenizer.Encode(entry.answer, /*add_special=*/false, /*parse_special=*/false).size());
  }
  return entry.output_tokens > 0 ? entry.output_tokens : DrawLength(spec.output, rng);
}

// vLLM's ShareGPT length filter; the output minimum is not checked when `output` overrides it.
bool PassesVllmLengthFilter(int64_t prompt_len, int64_t output_len, bool override_output) {
  return prompt_len >= kMinTokens && (override_output || output_len >= kMinTokens) &&
         prompt_len <= kMaxPromptTokens && prompt_len + output_len <= kMaxPromptAndOutputTokens;
}

Status NoUsablePrompts(const DatasetFile& file, const DatasetStats& stats, int64_t max_model_len) {
  std::string why =
      fmt::format("of {} {}", stats.records,
                  file.spec.kind == DatasetSpec::Kind::kJsonl ? "lines" : "conversations");
  if (stats.skipped_no_exchange > 0) {
    why += fmt::format(", {} have no human turn followed by an answer", stats.skipped_no_exchange);
  }
  if (stats.skipped_length > 0) {
    why += fmt::format(
        ", {} fail vLLM's length filter (prompt and answer >= {} tokens, prompt <= {}, prompt + "
        "answer <= {})",
        stats.skipped_length, kMinTokens, kMaxPromptTokens, kMaxPromptAndOutputTokens);
  }
  if (stats.skipped_context > 0) {
    why += fmt::format(", {} need more than the model's context of {} tokens (prompt + output)",
                       stats.skipped_context, max_model_len);
  }
  return InvalidArgument(
      fmt::format("dataset {}: no usable prompts: {}", DatasetSpecText(file.spec), why));
}

}  // namespace

const char* DatasetKindName(DatasetSpec::Kind kind) {
  switch (kind) {
    case DatasetSpec::Kind::kRandom:
      return "random";
    case DatasetSpec::Kind::kShareGpt:
      return "sharegpt";
    case DatasetSpec::Kind::kJsonl:
      return "jsonl";
  }
  return "unknown";
}

std::string DatasetSpecText(const DatasetSpec& spec) {
  if (spec.kind == DatasetSpec::Kind::kRandom) return "random";
  return std::string(DatasetKindName(spec.kind)) + ":" + spec.file;
}

StatusOr<DatasetSpec> ParseDatasetSpec(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const std::string_view file = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  DatasetSpec spec;
  if (kind == "random" && colon == std::string_view::npos) return spec;
  if (kind == "sharegpt" || kind == "jsonl") {
    if (file.empty()) {
      return InvalidArgument(fmt::format("dataset '{}' names no file; expected {}:FILE",
                                         EscapeControlCharacters(text), kind));
    }
    spec.kind = kind == "sharegpt" ? DatasetSpec::Kind::kShareGpt : DatasetSpec::Kind::kJsonl;
    spec.file = std::string(file);
    return spec;
  }
  return InvalidArgument(
      fmt::format("unknown dataset '{}'; expected sharegpt:FILE, jsonl:FILE or random",
                  EscapeControlCharacters(text)));
}

StatusOr<DatasetFile> ReadDataset(const DatasetSpec& spec) {
  switch (spec.kind) {
    case DatasetSpec::Kind::kShareGpt:
      return ReadShareGpt(spec);
    case DatasetSpec::Kind::kJsonl:
      return ReadJsonlDataset(spec);
    case DatasetSpec::Kind::kRandom:
      break;
  }
  return InvalidArgument("ReadDataset: the random dataset has no file");
}

StatusOr<std::vector<WorkloadRequest>> SampleDataset(const DatasetFile& file,
                                                     const WorkloadSpec& spec,
                                                     const Tokenizer& tokenizer,
                                                     int64_t max_model_len, DatasetStats* stats) {
  DatasetStats counts;
  counts.records = file.records;
  counts.skipped_no_exchange = file.skipped_no_exchange;
  const auto wanted = static_cast<size_t>(spec.num_requests);  // 0 = every usable prompt
  std::mt19937_64 length_rng = MakeRng(spec.seed, RandomStream::kLengths);
  std::vector<WorkloadRequest> usable;
  for (const size_t index : EntryOrder(file.entries.size(), spec)) {
    if (wanted > 0 && usable.size() == wanted) break;
    const DatasetEntry& entry = file.entries[index];
    WorkloadRequest request;
    request.line = entry.line;
    request.prompt = tokenizer.Encode(entry.prompt, /*add_special=*/true, /*parse_special=*/false);
    request.input_len = static_cast<int64_t>(request.prompt.size());
    request.output_len = OutputLength(entry, spec, tokenizer, length_rng);
    ++counts.tokenized;
    if (spec.dataset.kind == DatasetSpec::Kind::kShareGpt &&
        !PassesVllmLengthFilter(request.input_len, request.output_len,
                                spec.dataset.override_output)) {
      ++counts.skipped_length;
      continue;
    }
    if (max_model_len > 0 && request.input_len + request.output_len > max_model_len) {
      ++counts.skipped_context;
      continue;
    }
    usable.push_back(std::move(request));
  }
  if (stats != nullptr) *stats = counts;
  if (usable.empty()) return NoUsablePrompts(file, counts, max_model_len);

  // More requests than usable prompts repeat them in order.
  const size_t count = wanted > 0 ? wanted : usable.size();
  int64_t prompt_tokens = 0;
  for (size_t i = 0; i < count; ++i) prompt_tokens += usable[i % usable.size()].input_len;
  if (prompt_tokens > kMaxWorkloadPromptTokens) {
    return InvalidArgument(fmt::format(
        "dataset {}: {} requests hold {} prompt tokens in all; at most {} are sent (lower "
        "num_requests)",
        DatasetSpecText(file.spec), count, prompt_tokens, kMaxWorkloadPromptTokens));
  }
  std::vector<WorkloadRequest> requests;
  requests.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    requests.push_back(i < usable.size() ? std::move(usable[i]) : requests[i % usable.size()]);
    requests.back().id = static_cast<int64_t>(i);
  }
  counts.used = static_cast<int64_t>(usable.size());
  counts.requests = static_cast<int64_t>(count);
  if (stats != nullptr) *stats = counts;
  return requests;
}

}  // namespace hwinfer
