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
//   against the spec peak and against the measured peak (0 when that peak is unknown). The FLOP/s
//   peaks are those of the work the model does: its weight dtype's matmul as probed, and the spec
//   figure of the dtype that matmul computes in (PeakRates).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/plugin.h"
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

// m x n x k of a matmul (2*m*n*k FLOPs).
struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
};

// The ceilings MBU and MFU are measured against, and what each one is: every report that prints a
// utilisation can name its peak.
struct PeakRates {
  double spec_bandwidth_bytes_per_s = 0;  // 0 = unknown
  double spec_flops = 0;                  // the spec figure of spec_flops_dtype
  double measured_bandwidth_bytes_per_s = 0;
  double measured_flops = 0;  // the probed matmul with weights of flops_weight_dtype
  // The weight dtype of the matmuls that do the run's FLOPs (the model's): the measured FLOP/s
  // peak is the probe of exactly that matmul, the spec peak the figure of the dtype it computes
  // in: HWINFER_DTYPE_F32 | F16 | BF16, or I8 (int8 ops/s) for the block-quantized types.
  uint32_t flops_weight_dtype = HWINFER_DTYPE_F32;
  uint32_t spec_flops_dtype = HWINFER_DTYPE_F32;
  std::string spec_source;           // where the spec peaks come from ("" = unknown)
  MatmulShape measured_flops_probe;  // the matmul probe's shape; m = 0: given, not probed
  uint64_t measured_bandwidth_probe_bytes = 0;  // the read probe's working set; 0 = given
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
  PeakRates peaks;  // what the utilisations above are against (not part of SummaryToJson)
  // The in-process scheduler's batching mode and KV reservation ("continuous", "paged"), shown
  // in the tables; empty where no scheduler of ours ran (bench --endpoint).
  std::string batching_mode, kv_reservation;
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

// Several devices that each ran part of one workload (replicas, docs/multi-device.md), as one:
// requests and steps pooled by SummarizeRun over |all| (every device's records), then per phase
//   MBU = sum_d bytes_d / sum_d (time_d x peak bandwidth_d), MFU alike with the FLOP/s peaks,
// from |per_device| (each summarised against its own device's peaks): the share of the bandwidth
// (compute) the devices were offered while they ran steps, the one-device definition for one
// device; 0 when a device that ran the phase has that peak unknown. Phase time_s is the sum of the
// devices' step times (device-seconds). KV capacity, peak and mean are the devices' sums; peaks
// the devices' summed peaks (spec_source says so), for the tables' "against" lines.
RunSummary PoolDeviceSummaries(const SummaryInputs& all, const std::vector<RunSummary>& per_device);

// ---- utilisation reports (utilisation.cpp) ----
// Every place that prints an MBU or MFU prints UtilisationWarnings of what it printed with it, so
// no figure above 100% stands without a line naming the peak it exceeds and why it can.

enum class PeakKind { kSpecBandwidth, kMeasuredBandwidth, kSpecFlops, kMeasuredFlops };

// One printed utilisation: |label| ("decode MBU") is |ratio| of the |peak| of a PeakRates.
struct UtilisationFigure {
  std::string label;
  PeakKind peak = PeakKind::kSpecBandwidth;
  double ratio = 0;
};

// The peak, its value and its origin, e.g. "measured q8_0 matmul peak 95.0 GFLOP/s (probe at
// m=512 n=2048 k=2048)", "spec int8 peak 1.79 TFLOP/s (hardware/generic-cpu.yaml)", "measured read
// bandwidth 45.1 GB/s (probe over 64.0 MiB)".
std::string PeakDescription(const PeakRates& peaks, PeakKind kind);

// One line per peak that any of |figures| exceeds (ratio > 1): the figures, the peak
// (PeakDescription) and why a figure can exceed it. Empty when none does.
std::vector<std::string> UtilisationWarnings(const std::vector<UtilisationFigure>& figures,
                                             const PeakRates& peaks);
// The four figures of one phase: "<phase> MBU" and "<phase> MFU" against the spec and measured
// peaks.
std::vector<UtilisationFigure> PhaseFigures(const std::string& phase, const PhaseMetrics& metrics);
// UtilisationWarnings of every phase of |summary| (prefill, decode, mixed, all), against
// summary.peaks.
std::vector<std::string> UtilisationWarnings(const RunSummary& summary);

// The "hardware" section of a result file: the peaks and what they are (peak_bandwidth_bytes_per_s,
// peak_flops, peak_flops_dtype ("f32" | "f16" | "bf16" | "int8": the spec figure used),
// measured_bandwidth_bytes_per_s, measured_flops, measured_flops_dtype (the weight dtype whose
// matmul was probed), measured_flops_probe {m, n, k} (m 0: given, not probed),
// measured_bandwidth_probe_bytes, spec_source).
nlohmann::json PeakRatesJson(const PeakRates& peaks);
// The inverse; a key missing (a file from before a key existed) leaves its default.
PeakRates PeakRatesFromJson(const nlohmann::json& hardware);

// "f32" | "f16" | "bf16" | "int8": a spec FLOP/s figure's dtype as hardware files name it.
const char* SpecDtypeName(uint32_t dtype);
// The dtype matmuls with |weight_dtype| weights compute in: F32/F16/BF16 their own, a block type
// HWINFER_DTYPE_I8 (integer dot products).
uint32_t SpecFlopsDtypeOf(uint32_t weight_dtype);

// "51.2 GB/s"; "181.8 GFLOP/s", "1.79 TFLOP/s"; "unknown" for a rate <= 0.
std::string FormatBandwidth(double bytes_per_s);
std::string FormatFlops(double flops_per_s);

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
// The summary table as printed at the end of a bench (plain text, aligned) and as Markdown; each
// names the peaks its MBU and MFU columns are against and ends that section with the
// UtilisationWarnings of the run.
std::string SummaryTable(const RunSummary& summary);
std::string SummaryMarkdown(const RunSummary& summary);
// One row per device of a run over several (name, its own summary): requests completed / all,
// output tok/s, median TTFT and TPOT, decode MBU (measured, spec) and prefill MFU (measured)
// against that device's peaks, then each device's UtilisationWarnings. Plain text and Markdown.
std::string DevicesTable(const std::vector<std::pair<std::string, RunSummary>>& devices);
std::string DevicesMarkdown(const std::vector<std::pair<std::string, RunSummary>>& devices);

}  // namespace hwinfer
