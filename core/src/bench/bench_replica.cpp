// bench_replica.cpp — one device's share of a benchmark run (bench_replica.h): admit, plan, run,
// sample greedily and record.
#include "bench_replica.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace hwinfer::bench_internal {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The |k| largest logits, best first (ties: the lower id first, as greedy sampling picks).
std::vector<TokenLogit> TopLogits(const std::vector<float>& logits, int32_t k) {
  std::vector<int32_t> ids(logits.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  const auto n = std::min<size_t>(static_cast<size_t>(k), ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                    [&](int32_t a, int32_t b) {
                      const float la = logits[static_cast<size_t>(a)];
                      const float lb = logits[static_cast<size_t>(b)];
                      return la > lb || (la == lb && a < b);
                    });
  std::vector<TokenLogit> top(n);
  for (size_t i = 0; i < n; ++i) top[i] = {ids[i], logits[static_cast<size_t>(ids[i])]};
  return top;
}

}  // namespace

BenchReplica::BenchReplica(int index, std::shared_ptr<Device> device,
                           std::unique_ptr<LlamaExecutor> executor,
                           std::unique_ptr<Scheduler> scheduler,
                           std::vector<PeakRates> device_peaks)
    : index_(index),
      device_(std::move(device)),
      executor_(std::move(executor)),
      scheduler_(std::move(scheduler)),
      device_peaks_(std::move(device_peaks)),
      stage_seconds_(device_peaks_.size(), 0.0),
      sampler_(SamplingParams{}) {
  for (const LlamaExecutor::DeviceLayers& part : executor_->device_layers()) {
    name_ += (name_.empty() ? "" : "+") + part.device->id();
  }
}

PeakRates BenchReplica::peaks() const {
  if (device_peaks_.size() == 1) return device_peaks_.front();
  PeakRates combined = device_peaks_.front();
  double total = 0;
  for (const double seconds : stage_seconds_) total += seconds;
  // The time-weighted mean of one rate; unknown (0) when a device that ran has it unknown.
  auto weighted = [&](double PeakRates::*rate) {
    double sum = 0;
    for (size_t d = 0; d < device_peaks_.size(); ++d) {
      if (device_peaks_[d].*rate <= 0) return 0.0;
      sum += stage_seconds_[d] * (device_peaks_[d].*rate);
    }
    return total > 0 ? sum / total : 0.0;
  };
  combined.spec_bandwidth_bytes_per_s = weighted(&PeakRates::spec_bandwidth_bytes_per_s);
  combined.measured_bandwidth_bytes_per_s = weighted(&PeakRates::measured_bandwidth_bytes_per_s);
  combined.spec_flops = weighted(&PeakRates::spec_flops);
  combined.measured_flops = weighted(&PeakRates::measured_flops);
  combined.spec_source = "the peaks of " + name_ + " weighted by the time each device's layers ran";
  return combined;
}

bool BenchReplica::Admit(const WorkloadRequest& w, RunRecords& records) {
  const auto id = static_cast<size_t>(w.id);
  // A request too long to ever run came without prompt tokens (GenerateWorkload).
  const Status added =
      w.prompt.empty()
          ? CheckFitsModelLength(w.id, w.input_len, w.output_len,
                                 scheduler_->options().max_model_len)
          : scheduler_->Add(Request{w.id, w.prompt, w.output_len, w.priority, w.arrival_s});
  if (!added.ok()) {
    records.requests[id].failed = true;
    records.requests[id].error = added.message();
    return false;
  }
  unfinished_.insert(w.id);
  return true;
}

StatusOr<StepOutcome> BenchReplica::RunStep(double t, bool more_arrivals, bool virtual_clock,
                                            const std::function<double()>& real_clock,
                                            RunRecords& records) {
  const SteadyClock::time_point plan_start = SteadyClock::now();
  StepPlan plan = scheduler_->Schedule(t, more_arrivals);
  overhead_s_ += SecondsSince(plan_start);
  StepOutcome outcome;
  if (plan.empty()) return outcome;
  outcome.ran = true;

  const double step_start = virtual_clock ? t : real_clock();
  HWINFER_ASSIGN_OR_RETURN(std::vector<std::vector<float>> logits, executor_->Step(plan.chunks));
  const double step_end =
      virtual_clock ? step_start + executor_->last_step().device_seconds : real_clock();
  std::vector<int32_t> sampled(plan.chunks.size(), -1);
  std::map<RequestId, std::vector<TokenLogit>> step_top;  // of the chunks that sampled
  for (size_t c = 0; c < plan.chunks.size(); ++c) {
    if (logits[c].empty()) continue;
    HWINFER_ASSIGN_OR_RETURN(sampled[c], sampler_.Sample(logits[c]));
    if (records.top_logits_k > 0) {
      step_top[plan.requests[c]] = TopLogits(logits[c], records.top_logits_k);
    }
  }

  const SteadyClock::time_point record_start = SteadyClock::now();
  for (const TokenEvent& event : scheduler_->Complete(plan, sampled)) {
    const auto id = static_cast<size_t>(event.request);
    RequestRecord& r = records.requests[id];
    r.token_times_s.push_back(step_end);
    records.outputs[id].push_back(event.token);
    if (records.top_logits_k > 0) records.top_logits[id].push_back(step_top[event.request]);
    r.output_tokens = static_cast<int64_t>(r.token_times_s.size());
    ++outcome.tokens;
    if (event.finished) {
      r.first_scheduled_s = scheduler_->FirstScheduled(event.request);
      r.preemptions = scheduler_->Preemptions(event.request);
      outcome.outstanding_drop += r.input_tokens;
      unfinished_.erase(event.request);
      ++outcome.finished;
    }
  }
  const std::vector<double>& stage_seconds = executor_->last_step().stage_seconds;
  for (size_t d = 0; d < stage_seconds.size() && d < stage_seconds_.size(); ++d) {
    stage_seconds_[d] += stage_seconds[d];
  }
  AccumulateRankStats(executor_->last_step().ranks, &rank_totals_);
  steps_.push_back(StepRecordOf(plan, *executor_, step_start, step_end));
  step_time_s_ += step_end - step_start;
  overhead_s_ += SecondsSince(record_start);
  outcome.end_s = step_end;
  outcome.outstanding_drop += outcome.tokens;
  return outcome;
}

std::vector<int64_t> BenchReplica::Abandon(const std::string& reason, RunRecords& records) {
  failure_ = reason;
  std::vector<int64_t> never_scheduled;
  for (const int64_t id : unfinished_) {
    RequestRecord& r = records.requests[static_cast<size_t>(id)];
    if (scheduler_->FirstScheduled(id) < 0) {
      never_scheduled.push_back(id);
      records.replica_of[static_cast<size_t>(id)] = -1;
      continue;
    }
    r.first_scheduled_s = scheduler_->FirstScheduled(id);
    r.preemptions = scheduler_->Preemptions(id);
    r.failed = true;
    r.error = reason;
  }
  for (const int64_t id : unfinished_) (void)scheduler_->Cancel(id);
  unfinished_.clear();
  return never_scheduled;
}

}  // namespace hwinfer::bench_internal
