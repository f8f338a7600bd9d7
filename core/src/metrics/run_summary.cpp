// run_summary.cpp — SummarizeRun (metrics.h): request and step records in, one RunSummary out,
// with the exact definitions of DESIGN section 5. Also the small helpers of the records
// (StepRecord::phase, StepPhaseName, SloTargets::Validate). No I/O and no formatting here
// (summary_json.cpp and result_tables.cpp do that).
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/metrics.h"
#include "metrics/request_latency.h"

namespace hwinfer {
namespace {

using metrics_internal::IsCompleted;
using metrics_internal::kMsPerS;
using metrics_internal::LatencyOf;
using metrics_internal::RequestLatency;

// Every set SLO met; a request with one output token has no TPOT, so that SLO counts as met.
bool MeetsSlo(const RequestLatency& l, const SloTargets& slo) {
  if (slo.ttft_ms > 0 && l.ttft_ms > slo.ttft_ms) return false;
  if (slo.tpot_ms > 0 && l.has_tpot && l.tpot_ms > slo.tpot_ms) return false;
  if (slo.e2el_ms > 0 && l.e2el_ms > slo.e2el_ms) return false;
  return true;
}

double Ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0;
}

void AddStep(const StepRecord& step, PhaseMetrics* phase) {
  phase->steps += 1;
  phase->time_s += step.end_s - step.start_s;
  phase->tokens += step.prefill_tokens + step.decode_tokens;
  phase->bytes += step.bytes;
  phase->flops += step.flops;
}

// MBU = bytes / time / peak bandwidth, MFU = flops / time / peak FLOP/s; 0 for an unknown peak.
void FinishPhase(const PeakRates& peaks, PhaseMetrics* phase) {
  const double bytes_per_s = Ratio(phase->bytes, phase->time_s);
  const double flops_per_s = Ratio(phase->flops, phase->time_s);
  phase->mbu_spec = Ratio(bytes_per_s, peaks.spec_bandwidth_bytes_per_s);
  phase->mbu_measured = Ratio(bytes_per_s, peaks.measured_bandwidth_bytes_per_s);
  phase->mfu_spec = Ratio(flops_per_s, peaks.spec_flops);
  phase->mfu_measured = Ratio(flops_per_s, peaks.measured_flops);
}

void SummarizeRequests(const SummaryInputs& in, RunSummary* s) {
  std::vector<double> ttft, tpot, itl, e2el, queue;
  double first_arrival_s = std::numeric_limits<double>::infinity();
  double last_token_s = -std::numeric_limits<double>::infinity();
  int64_t good = 0;
  for (const RequestRecord& r : in.requests) {
    s->preemptions += r.preemptions;  // every request, failed ones included
    first_arrival_s = std::min(first_arrival_s, r.arrival_s);
    if (!r.token_times_s.empty()) last_token_s = std::max(last_token_s, r.token_times_s.back());
    if (!IsCompleted(r)) {
      if (r.failed) s->failed += 1;
      continue;
    }
    s->completed += 1;
    s->total_input_tokens += r.input_tokens;
    s->total_output_tokens += r.output_tokens;
    const RequestLatency l = LatencyOf(r);
    ttft.push_back(l.ttft_ms);
    e2el.push_back(l.e2el_ms);
    if (l.has_tpot) tpot.push_back(l.tpot_ms);
    for (size_t i = 1; i < r.token_times_s.size(); ++i) {
      itl.push_back((r.token_times_s[i] - r.token_times_s[i - 1]) * kMsPerS);
    }
    if (r.first_scheduled_s >= 0) queue.push_back((r.first_scheduled_s - r.arrival_s) * kMsPerS);
    if (MeetsSlo(l, in.slo)) good += 1;
  }
  s->ttft_ms = Summarize(std::move(ttft));
  s->tpot_ms = Summarize(std::move(tpot));
  s->itl_ms = Summarize(std::move(itl));
  s->e2el_ms = Summarize(std::move(e2el));
  s->queue_ms = Summarize(std::move(queue));

  if (s->completed > 0) s->duration_s = std::max(0.0, last_token_s - first_arrival_s);
  s->request_throughput = Ratio(static_cast<double>(s->completed), s->duration_s);
  s->output_throughput = Ratio(static_cast<double>(s->total_output_tokens), s->duration_s);
  s->total_token_throughput =
      Ratio(static_cast<double>(s->total_input_tokens + s->total_output_tokens), s->duration_s);
  s->request_goodput = in.slo.any() ? Ratio(static_cast<double>(good), s->duration_s) : 0;
}

void SummarizeSteps(const SummaryInputs& in, RunSummary* s) {
  double kv_blocks_sum = 0, kv_tokens_sum = 0;
  for (const StepRecord& step : in.steps) {
    switch (step.phase()) {
      case StepPhase::kPrefill:
        AddStep(step, &s->prefill);
        break;
      case StepPhase::kDecode:
        AddStep(step, &s->decode);
        break;
      case StepPhase::kMixed:
        AddStep(step, &s->mixed);
        break;
    }
    AddStep(step, &s->all);
    s->peak_kv_blocks = std::max(s->peak_kv_blocks, step.kv_used_blocks);
    s->peak_kv_tokens = std::max(s->peak_kv_tokens, step.kv_used_tokens);
    kv_blocks_sum += static_cast<double>(step.kv_used_blocks);
    kv_tokens_sum += static_cast<double>(step.kv_used_tokens);
  }
  for (PhaseMetrics* phase : {&s->prefill, &s->decode, &s->mixed, &s->all}) {
    FinishPhase(in.peaks, phase);
  }
  s->steps = static_cast<int64_t>(in.steps.size());
  // KV usage mean: a simple mean over steps (not weighted by step time).
  s->mean_kv_blocks = Ratio(kv_blocks_sum, static_cast<double>(s->steps));
  s->mean_kv_tokens = Ratio(kv_tokens_sum, static_cast<double>(s->steps));
}

}  // namespace

const char* StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kPrefill:
      return "prefill";
    case StepPhase::kDecode:
      return "decode";
    case StepPhase::kMixed:
      return "mixed";
  }
  return "unknown";
}

// Prefill tokens and decode tokens -> mixed; only prefill tokens -> prefill; otherwise decode
// (a step with no tokens at all counts as decode).
StepPhase StepRecord::phase() const {
  if (prefill_tokens > 0 && decode_tokens > 0) return StepPhase::kMixed;
  if (prefill_tokens > 0) return StepPhase::kPrefill;
  return StepPhase::kDecode;
}

Status SloTargets::Validate() const {
  const struct {
    const char* name;
    double value;
  } fields[] = {{"ttft_ms", ttft_ms}, {"tpot_ms", tpot_ms}, {"e2el_ms", e2el_ms}};
  for (const auto& f : fields) {
    if (!(f.value >= 0)) {  // also rejects NaN
      return InvalidArgument("SLO " + std::string(f.name) + " must be >= 0 (0 = no limit), got " +
                             std::to_string(f.value));
    }
  }
  return Status::Ok();
}

RunSummary SummarizeRun(const SummaryInputs& inputs) {
  RunSummary s;
  SummarizeRequests(inputs, &s);
  SummarizeSteps(inputs, &s);
  s.kv_capacity_blocks = inputs.kv_capacity_blocks;
  s.kv_block_size = inputs.kv_block_size;
  s.peaks = inputs.peaks;
  return s;
}

namespace {

// One pooled utilisation: sum(work_d) / sum(time_d x peak_d), 0 when a device that spent time
// has no peak.
struct PooledRatio {
  double work = 0, offered = 0;
  bool unknown = false;
  void Add(double device_work, double time_s, double peak) {
    if (time_s <= 0) return;
    if (peak <= 0) unknown = true;
    work += device_work;
    offered += time_s * peak;
  }
  double value() const { return unknown ? 0 : Ratio(work, offered); }
};

// Phase |phase| of |s|: 0 prefill, 1 decode, 2 mixed, 3 all.
template <typename Summary>
auto* PhaseOf(Summary& s, int phase) {
  decltype(&s.prefill) phases[] = {&s.prefill, &s.decode, &s.mixed, &s.all};
  return phases[phase];
}

}  // namespace

RunSummary PoolDeviceSummaries(const SummaryInputs& all,
                               const std::vector<RunSummary>& per_device) {
  RunSummary pooled = SummarizeRun(all);
  for (int phase = 0; phase < 4; ++phase) {
    PooledRatio mbu_spec, mbu_measured, mfu_spec, mfu_measured;
    for (const RunSummary& device : per_device) {
      const PhaseMetrics& m = *PhaseOf(device, phase);
      const PeakRates& p = device.peaks;
      mbu_spec.Add(m.bytes, m.time_s, p.spec_bandwidth_bytes_per_s);
      mbu_measured.Add(m.bytes, m.time_s, p.measured_bandwidth_bytes_per_s);
      mfu_spec.Add(m.flops, m.time_s, p.spec_flops);
      mfu_measured.Add(m.flops, m.time_s, p.measured_flops);
    }
    PhaseMetrics& out = *PhaseOf(pooled, phase);
    out.mbu_spec = mbu_spec.value();
    out.mbu_measured = mbu_measured.value();
    out.mfu_spec = mfu_spec.value();
    out.mfu_measured = mfu_measured.value();
  }
  pooled.peak_kv_blocks = pooled.peak_kv_tokens = pooled.kv_capacity_blocks = 0;
  pooled.mean_kv_blocks = pooled.mean_kv_tokens = 0;
  PeakRates peaks = per_device.empty() ? PeakRates{} : per_device.front().peaks;
  peaks.spec_bandwidth_bytes_per_s = peaks.measured_bandwidth_bytes_per_s = 0;
  peaks.spec_flops = peaks.measured_flops = 0;
  for (const RunSummary& device : per_device) {
    pooled.peak_kv_blocks += device.peak_kv_blocks;
    pooled.peak_kv_tokens += device.peak_kv_tokens;
    pooled.mean_kv_blocks += device.mean_kv_blocks;
    pooled.mean_kv_tokens += device.mean_kv_tokens;
    pooled.kv_capacity_blocks += device.kv_capacity_blocks;
    peaks.spec_bandwidth_bytes_per_s += device.peaks.spec_bandwidth_bytes_per_s;
    peaks.measured_bandwidth_bytes_per_s += device.peaks.measured_bandwidth_bytes_per_s;
    peaks.spec_flops += device.peaks.spec_flops;
    peaks.measured_flops += device.peaks.measured_flops;
  }
  peaks.spec_source = "the sum of " + std::to_string(per_device.size()) + " devices' peaks";
  pooled.peaks = peaks;
  return pooled;
}

}  // namespace hwinfer
