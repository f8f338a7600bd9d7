// hwinfer/workload.h — the requests a benchmark sends: when each arrives, how long its prompt is,
// how many tokens it asks for. Everything is drawn from one seed, so a workload is reproducible.
//
//   arrivals: offline (all at t = 0) | poisson at `rate` requests/s | gamma at `rate` with
//     `burstiness` (the gamma shape; 1 = Poisson, < 1 burstier, > 1 smoother; vLLM's definition:
//     inter-arrival ~ Gamma(shape = burstiness, scale = 1 / (rate * burstiness)))
//   max_concurrency: at most this many requests in flight (0 = unlimited); a request that arrives
//     while the limit is reached waits outside the server and its latency counts from its
//     arrival (the bench runner applies this, not the generator)
//   input / output lengths: fixed N | uniform [min, max] | normal (mean, std, clamped to
//     [min, max]) | from a JSONL file, one request per line:
//       {"input_len": 128, "output_len": 64}            (also "prompt_len"; optional "priority",
//                                                          optional "arrival_s" overriding
//                                                          arrivals)
//     a bad line is InvalidArgument naming file:line and the key.
//   priorities: `priority` per JSONL line, else all 0.
//   dataset: random (the default: prompt tokens drawn uniformly from [1, vocab) with the same
//     seed) | sharegpt:FILE | jsonl:FILE (prompt texts and output lengths from a file,
//     hwinfer/dataset.h; arrivals still as above).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer {

// Bounds of a workload, named in the errors that enforce them. Requests and their prompt tokens
// are held in memory for the whole run; arrivals past a day are a mistake (a rate of 1e-300),
// not a benchmark.
inline constexpr int64_t kMaxWorkloadRequests = 1000000;
inline constexpr int64_t kMaxRequestTokens = (int64_t{1} << 31) - 1;   // positions are 32-bit
inline constexpr int64_t kMaxWorkloadPromptTokens = int64_t{1} << 28;  // 1 GiB of token ids
inline constexpr double kMaxArrivalSeconds = 86400.0;                  // one day
inline constexpr uint64_t kMaxWorkloadFileBytes = 1ull << 30;

struct LengthDistribution {
  enum class Kind { kFixed, kUniform, kNormal };
  Kind kind = Kind::kFixed;
  int64_t value = 128;                             // fixed
  int64_t min = 1, max = 128;                      // uniform bounds; normal clamps to them
  double mean = 128, std = 0;                      // normal
  Status Validate(const std::string& what) const;  // InvalidArgument naming |what| ("input")
};

// Where the prompts come from (hwinfer/dataset.h reads the files).
struct DatasetSpec {
  enum class Kind { kRandom, kShareGpt, kJsonl };
  Kind kind = Kind::kRandom;
  std::string file;     // sharegpt / jsonl
  bool shuffle = true;  // prompts in a seeded random order (vLLM's default); false: file order
  // `output` replaces the output lengths the dataset gives (vLLM's --sharegpt-output-len); false:
  // the dataset's, and `output` only for JSONL lines without `output_tokens`.
  bool override_output = false;
};

struct WorkloadSpec {
  enum class Arrivals { kOffline, kPoisson, kGamma };
  // 1..kMaxWorkloadRequests; with a JSONL file 0 = every line, with a dataset every prompt (more
  // requests than the dataset has prompts repeat them, as vLLM oversamples)
  int64_t num_requests = 16;
  Arrivals arrivals = Arrivals::kOffline;
  double rate = 0;              // requests/s (> 0 for poisson/gamma)
  double burstiness = 1.0;      // gamma shape (> 0)
  int64_t max_concurrency = 0;  // 0 = unlimited
  LengthDistribution input, output;
  std::string jsonl_file;  // when set, lengths (and optional priority/arrival) come from it
  DatasetSpec dataset;     // not random: prompts and output lengths from a file (no `input`)
  uint64_t seed = 0;
  Status Validate() const;  // InvalidArgument naming the field and the value
};

struct WorkloadRequest {
  int64_t id = 0;    // the request's place in the file (or as drawn), whatever its arrival
  int64_t line = 0;  // its 1-based line in the JSONL file; 0 when drawn
  double arrival_s = 0;
  int64_t input_len = 0, output_len = 0;
  int priority = 0;
  std::vector<int32_t> prompt;  // input_len tokens in [1, vocab); empty when it can never run
};

// Draws the requests, sorted by arrival; ids 0..n-1 in file (or drawing) order, so outputs keyed
// by id join to the inputs whatever the arrival order. A request whose input_len passes
// |max_model_len| (> 0) gets no prompt tokens: it can never run, and building it first could
// exhaust memory (the runner records it as failed). Errors: the spec's validation, an unreadable
// JSONL file (NotFound naming it), a bad line (InvalidArgument, "file:LINE: ..."), vocab_size < 2,
// an arrival past kMaxArrivalSeconds, prompts of more than kMaxWorkloadPromptTokens in all.
StatusOr<std::vector<WorkloadRequest>> GenerateWorkload(const WorkloadSpec& spec,
                                                        int64_t vocab_size,
                                                        int64_t max_model_len = 0);

// Gives |requests| (in id order, prompts and lengths set, e.g. a dataset's) their arrivals as
// |spec| says, ascending with the index. InvalidArgument for an arrival past kMaxArrivalSeconds.
Status ScheduleArrivals(const WorkloadSpec& spec, std::vector<WorkloadRequest>& requests);

// Everything GenerateWorkload checks (the spec, the JSONL file line by line, the bounds), without
// building any prompt: for `hwinfer config check` and for failing fast before a model loads. The
// prompt-token bound is checked only with the model's |max_model_len| (> 0): which prompts will
// be built depends on it. A dataset file is read and checked (ReadDataset) but not tokenized.
Status CheckWorkload(const WorkloadSpec& spec, int64_t max_model_len = 0);

// "offline" | "poisson" | "gamma"; "fixed" | "uniform" | "normal".
const char* ArrivalsName(WorkloadSpec::Arrivals arrivals);
const char* LengthKindName(LengthDistribution::Kind kind);

}  // namespace hwinfer
