// hwinfer/metrics.h — the metrics layer (DESIGN section 5): per-request and per-step records in,
// one summary out, with vLLM's benchmark key names. Same definitions on every backend.
//
//   TTFT  = first token time - arrival (queueing + prefill)
//   TPOT  = (e2e - TTFT) / (n_out - 1), per request with n_out > 1
//   ITL   = every gap between consecutive tokens of a request, pooled over requests
//   E2E   = last token time - arrival; queue = first scheduled - arrival
//   Each reported as mean, median, p90, p99 (and std); percentiles by linear interpolation between
//   closest ranks (numpy's default), over completed requests only; 0 with no samples.
//   Throughput over the run's duration (first arrival -> last token): requests/s, output tokens/s,
//   total (input + output) tokens/s; goodput = completed requests meeting every given SLO per s.
//   Per step: bytes, FLOPs (counted by the core, hwinfer/kernel_cost.h) and phase: prefill (only
//   prefill tokens), decode (only decode tokens), mixed. Per phase:
//     MBU = sum(bytes) / sum(step time) / peak bandwidth, MFU = sum(flops) / sum(step time) / peak
//   against the spec peak and against the measured peak (0 when that peak is unknown).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer {

struct RequestRecord {
  int64_t id = 0;    // the request's place in the workload file (or as drawn)
  int64_t line = 0;  // its 1-based line in a JSONL workload file; 0 when drawn
  double arrival_s = 0;
  double first_scheduled_s = -1;      // -1 = never scheduled
  std::vector<double> token_times_s;  // one per output token, ascending
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;  // == token_times_s.size() for a completed request
  int64_t preemptions = 0;
  bool failed = false;  // rejected, cancelled or errored; excluded from latency statistics
  std::string error;    // why, when failed
};

enum class StepPhase { kPrefill = 0, kDecode = 1, kMixed = 2 };
const char* StepPhaseName(StepPhase phase);  // "prefill" | "decode" | "mixed"

struct StepRecord {
  double start_s = 0, end_s = 0;
  int64_t prefill_tokens = 0;
  int64_t decode_tokens = 0;
  int64_t sequences = 0;
  double bytes = 0;
  double flops = 0;
  int64_t kv_used_blocks = 0;  // after the step
  int64_t kv_used_tokens = 0;  // tokens held in the KV cache after the step
  int64_t preemptions = 0;     // preempted while planning this step
  StepPhase phase() const;     // from the token counts
};

struct PeakRates {
  double spec_bandwidth_bytes_per_s = 0;  // 0 = unknown
  double spec_flops = 0;                  // at the model's compute dtype
  double measured_bandwidth_bytes_per_s = 0;
  double measured_flops = 0;
};

// SLOs for goodput, in milliseconds; 0 = no limit on that metric.
struct SloTargets {
  double ttft_ms = 0;
  double tpot_ms = 0;
  double e2el_ms = 0;
  Status Validate() const;  // InvalidArgument naming a negative value
  bool any() const { return ttft_ms > 0 || tpot_ms > 0 || e2el_ms > 0; }
};

struct Distribution {
  double mean = 0, median = 0, std = 0, p90 = 0, p99 = 0, min = 0, max = 0;
  int64_t count = 0;
};
// Statistics of |values| (any order); an empty input gives all zeros.
Distribution Summarize(std::vector<double> values);
// The |q|-th percentile (0..100) of sorted |values|, linear interpolation (numpy default).
double Percentile(const std::vector<double>& sorted_values, double q);

struct PhaseMetrics {
  int64_t steps = 0;
  double time_s = 0;
  int64_t tokens = 0;
  double bytes = 0, flops = 0;
  double mbu_spec = 0, mbu_measured = 0, mfu_spec = 0, mfu_measured = 0;
};

struct RunSummary {
  int64_t completed = 0, failed = 0;
  double duration_s = 0;
  int64_t total_input_tokens = 0, total_output_tokens = 0;
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;
  double request_goodput = 0;  // 0 when no SLO is given
  Distribution ttft_ms, tpot_ms, itl_ms, e2el_ms, queue_ms;
  PhaseMetrics prefill, decode, mixed, all;
  int64_t steps = 0;
  int64_t preemptions = 0;  // sum over every request record (failed ones included)
  int64_t peak_kv_blocks = 0, peak_kv_tokens = 0;
  double mean_kv_blocks = 0, mean_kv_tokens = 0;
  int64_t kv_capacity_blocks = 0, kv_block_size = 0;
};

struct SummaryInputs {
  std::vector<RequestRecord> requests;
  std::vector<StepRecord> steps;
  PeakRates peaks;
  SloTargets slo;
  int64_t kv_capacity_blocks = 0;
  int64_t kv_block_size = 0;
};

// Computes every number above. Duration: earliest arrival to latest token (of any request);
// 0 when nothing completed.
RunSummary SummarizeRun(const SummaryInputs& inputs);

// One line per phase whose MBU or MFU against the spec peak is above 100%: more bytes or FLOPs
// per second than the hardware can do means the declared peak (hardware file or plugin) is wrong
// — a unit slip, not a result. Empty when every figure is plausible.
std::vector<std::string> ImplausibleUtilization(const RunSummary& summary);

// vLLM benchmark keys, flat: duration, completed, failed, total_input_tokens,
// total_output_tokens, request_throughput, output_throughput, total_token_throughput,
// request_goodput, {mean,median,std,p90,p99}_{ttft,tpot,itl,e2el,queue}_ms, plus (hwinfer's, for
// an exact round trip) {min,max}_{ttft,...}_ms and {ttft,...}_samples, preemptions,
// steps, kv usage, and "phases": {prefill|decode|mixed|all: {steps, time_s, tokens, bytes, flops,
// mbu_spec, mbu_measured, mfu_spec, mfu_measured}}.
nlohmann::json SummaryToJson(const RunSummary& summary);
// The inverse, for `hwinfer compare` (missing keys are InvalidArgument naming the key).
StatusOr<RunSummary> SummaryFromJson(const nlohmann::json& json);

// One header row + one row per request / per step (for --csv).
std::string RequestsCsv(const std::vector<RequestRecord>& requests);
std::string StepsCsv(const std::vector<StepRecord>& steps);
// The summary table as printed at the end of a bench (plain text, aligned) and as Markdown.
std::string SummaryTable(const RunSummary& summary);
std::string SummaryMarkdown(const RunSummary& summary);

}  // namespace hwinfer
