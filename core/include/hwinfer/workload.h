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
// Prompt tokens are drawn uniformly from [1, vocab) with the same seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer {

struct LengthDistribution {
  enum class Kind { kFixed, kUniform, kNormal };
  Kind kind = Kind::kFixed;
  int64_t value = 128;                             // fixed
  int64_t min = 1, max = 128;                      // uniform bounds; normal clamps to them
  double mean = 128, std = 0;                      // normal
  Status Validate(const std::string& what) const;  // InvalidArgument naming |what| ("input")
};

struct WorkloadSpec {
  enum class Arrivals { kOffline, kPoisson, kGamma };
  int64_t num_requests = 16;  // > 0; with a JSONL file: 0 = every line, else the first N
  Arrivals arrivals = Arrivals::kOffline;
  double rate = 0;              // requests/s (> 0 for poisson/gamma)
  double burstiness = 1.0;      // gamma shape (> 0)
  int64_t max_concurrency = 0;  // 0 = unlimited
  LengthDistribution input, output;
  std::string jsonl_file;  // when set, lengths (and optional priority/arrival) come from it
  uint64_t seed = 0;
  Status Validate() const;  // InvalidArgument naming the field and the value
};

struct WorkloadRequest {
  int64_t id = 0;
  double arrival_s = 0;
  int64_t input_len = 0, output_len = 0;
  int priority = 0;
  std::vector<int32_t> prompt;  // input_len tokens in [1, vocab)
};

// Draws the requests (sorted by arrival, ids 0..n-1 in that order). Errors: the spec's
// validation, an unreadable JSONL file (NotFound naming it), a bad line (InvalidArgument,
// "file:LINE: ..."), vocab_size < 2.
StatusOr<std::vector<WorkloadRequest>> GenerateWorkload(const WorkloadSpec& spec,
                                                        int64_t vocab_size);

// "offline" | "poisson" | "gamma"; "fixed" | "uniform" | "normal".
const char* ArrivalsName(WorkloadSpec::Arrivals arrivals);
const char* LengthKindName(LengthDistribution::Kind kind);

}  // namespace hwinfer
