// hwinfer/dataset.h — prompt datasets for the benchmark (`workload.dataset`, `--dataset`): the
// prompt texts serving benchmarks use, read from a file, tokenized with the model's tokenizer and
// turned into the workload's requests. Arrivals stay as the workload says (hwinfer/workload.h).
//
//   sharegpt:FILE  a JSON array of conversations, as vLLM's benchmark reads ShareGPT:
//                    [{"id": "...", "conversations": [{"from": "human", "value": "..."},
//                                                     {"from": "gpt", "value": "..."}, ...]}, ...]
//                  The first human turn ("human" or "user") is the prompt; the turn right after
//                  it, when it is an answer (any other `from` but "system"), gives the output
//                  length: its token count. A conversation without such a pair (fewer than two
//                  turns, no human turn, a human turn left unanswered) or without
//                  "conversations" is skipped. vLLM's length filter applies: prompts or answers
//                  under 4 tokens, prompts over 1024 tokens and prompt + answer over 2048 tokens
//                  are skipped (the answer check is dropped when `output` overrides it).
//   jsonl:FILE     vLLM's custom dataset: one JSON object per line, {"prompt": "...",
//                  "output_tokens": 128}; `output_tokens` is optional (else the workload's
//                  `output`), other keys are ignored, blank lines skipped.
//   random         random token ids (the workload's own generator; the default).
//
// Differences from vLLM, on purpose: vLLM takes turns 0 and 1 whatever their roles, we take the
// first human turn and its answer; vLLM counts the answer with the tokenizer's special tokens
// (BOS for Llama: one more token), we count the answer's own tokens (what the model generates).
// Prompts are tokenized as they are (BOS as the model's metadata says, no chat template, special
// token texts as plain text; vLLM's --skip-chat-template for jsonl). Every kind: a request whose
// prompt + output tokens pass the model's context is skipped, like vLLM's length filter, and
// counted (a warning says how many); when nothing is left the run is an error.
// Order: the usable prompts in a seeded random order (the workload's seed; `shuffle: false` keeps
// the file's order); more requests than prompts repeat them in the same order (vLLM draws the
// extra ones at random).
//
// Errors are one line naming the file and where: not JSON ("FILE:LINE:COLUMN: not valid JSON:
// ..."; invalid UTF-8 and lone surrogate escapes are JSON errors), a broken JSONL line
// ("FILE:LINE: ..."), JSON nested more than 64 levels deep (refused before it is built), a value
// of the wrong type (the conversation's index and id, or the line), an empty file or array, a
// file without a usable prompt.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hwinfer/status.h"
#include "hwinfer/tokenizer.h"
#include "hwinfer/workload.h"

namespace hwinfer {

// "sharegpt:FILE" | "jsonl:FILE" | "random" -> the spec (shuffle on, no override).
// InvalidArgument for another kind (listing sharegpt, jsonl, random) or a kind without its FILE.
StatusOr<DatasetSpec> ParseDatasetSpec(std::string_view text);
// "sharegpt" | "jsonl" | "random".
const char* DatasetKindName(DatasetSpec::Kind kind);
// "sharegpt:FILE" | "jsonl:FILE" | "random", as ParseDatasetSpec reads it.
std::string DatasetSpecText(const DatasetSpec& spec);

// One prompt of a dataset file, as written (UTF-8, checked by the JSON parser).
struct DatasetEntry {
  std::string prompt;
  std::string answer;         // sharegpt: the answer whose token count is the output length
  int64_t output_tokens = 0;  // jsonl: `output_tokens`; 0 = not given
  int64_t line = 0;           // jsonl: the 1-based line; 0 for sharegpt
  int64_t index = 0;          // the record's 0-based place in the file (conversation or line)
};

// A dataset file read and checked: its prompts in file order.
struct DatasetFile {
  DatasetSpec spec;
  std::vector<DatasetEntry> entries;
  int64_t records = 0;              // conversations in the array / non-blank lines
  int64_t skipped_no_exchange = 0;  // sharegpt: no human turn followed by an answer
};

// Reads |spec|.file (at most kMaxWorkloadFileBytes). Errors: NotFound for a missing file, the
// InvalidArgument errors above, and "no prompts" when the file holds none (an empty array or
// file, or only conversations without an exchange). |spec| must not be random.
StatusOr<DatasetFile> ReadDataset(const DatasetSpec& spec);

// What became of the prompts a run looked at.
struct DatasetStats {
  int64_t records = 0;              // in the file
  int64_t skipped_no_exchange = 0;  // sharegpt: no human turn followed by an answer
  int64_t tokenized = 0;            // prompts tokenized (sampling stops once it has enough)
  int64_t skipped_length = 0;       // sharegpt: vLLM's length filter
  int64_t skipped_context = 0;      // prompt + output past the model's context
  int64_t used = 0;                 // distinct prompts sent
  int64_t requests = 0;             // requests made of them (more than used when repeated)
};

// The requests of |file| for |spec| (num_requests, seed, output, dataset order and override) in
// id order, arrival 0 (ScheduleArrivals gives them theirs): ids 0..n-1, prompt and input_len from
// the tokenizer, output_len as the file or `output` says, line = the JSONL line (0 for
// sharegpt). |max_model_len| > 0 skips requests that cannot fit it. InvalidArgument "no usable
// prompts" (naming the file and what was skipped) when none is left, or when the prompts hold
// more than kMaxWorkloadPromptTokens.
StatusOr<std::vector<WorkloadRequest>> SampleDataset(const DatasetFile& file,
                                                     const WorkloadSpec& spec,
                                                     const Tokenizer& tokenizer,
                                                     int64_t max_model_len, DatasetStats* stats);

}  // namespace hwinfer
