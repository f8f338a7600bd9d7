// request_latency.h — the per-request latency definitions (DESIGN section 5) shared by the
// summary (run_summary.cpp) and the per-request CSV (result_tables.cpp), so both use one formula.
// Internal to src/metrics; times in the records are in seconds, results in milliseconds.
#pragma once

#include <cstddef>

#include "hwinfer/metrics.h"

namespace hwinfer::metrics_internal {

constexpr double kMsPerS = 1000.0;

// A request counts in latency statistics and throughputs when it finished without error and
// produced at least one token (with its time).
inline bool IsCompleted(const RequestRecord& r) {
  return !r.failed && r.output_tokens > 0 && !r.token_times_s.empty();
}

struct RequestLatency {
  double ttft_ms = 0;  // first token - arrival
  double e2el_ms = 0;  // last token - arrival
  bool has_tpot = false;
  double tpot_ms = 0;  // (e2el - ttft) / (n_out - 1), only for n_out > 1
};

// |r| must have at least one token time. n_out is the number of token times (== output_tokens
// for a well-formed record).
inline RequestLatency LatencyOf(const RequestRecord& r) {
  RequestLatency l;
  l.ttft_ms = (r.token_times_s.front() - r.arrival_s) * kMsPerS;
  l.e2el_ms = (r.token_times_s.back() - r.arrival_s) * kMsPerS;
  const size_t n_out = r.token_times_s.size();
  if (n_out > 1) {
    l.has_tpot = true;
    l.tpot_ms = (l.e2el_ms - l.ttft_ms) / static_cast<double>(n_out - 1);
  }
  return l;
}

}  // namespace hwinfer::metrics_internal
