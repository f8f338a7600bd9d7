// bench_replica.h — one device's share of a benchmark run (internal to the bench runner): its
// executor, scheduler (own KV cache) and greedy sampler, the requests routed to it and the steps
// it ran. A one-device run is one replica; docs/multi-device.md describes several.
//
// Every request record is written by the one replica the request was routed to, so replicas on
// different threads write disjoint records; a replica itself is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hwinfer/bench_runner.h"
#include "hwinfer/device.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/metrics.h"
#include "hwinfer/sampler.h"
#include "hwinfer/scheduler.h"
#include "hwinfer/workload.h"

namespace hwinfer::bench_internal {

// Seconds on the steady clock since |start| (the bench's host-time measurements).
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What the replicas of a run record, indexed by request id.
struct RunRecords {
  std::vector<RequestRecord> requests;
  std::vector<std::vector<int32_t>> outputs;
  // Per output token, the top_logits best candidates (empty unless asked for).
  std::vector<std::vector<std::vector<TokenLogit>>> top_logits;
  std::vector<int> replica_of;  // the replica a request was routed to (-1: none)
  int32_t top_logits_k = 0;
};

// What one step did, for the driver's bookkeeping.
struct StepOutcome {
  bool ran = false;      // false: the plan was empty (nothing could run at that time)
  double end_s = 0;      // when the step's tokens count as produced
  int64_t finished = 0;  // requests that finished in it
  int64_t tokens = 0;    // output tokens it produced
  // By how much the replica's outstanding tokens (replica_routing.h) fell: one per token, and the
  // prompt of every request that finished.
  int64_t outstanding_drop = 0;
};

class BenchReplica {
 public:
  // |device_peaks|: one per device of the executor (several for a layer split), in layer order.
  BenchReplica(int index, std::shared_ptr<Device> device, std::unique_ptr<LlamaExecutor> executor,
               std::unique_ptr<Scheduler> scheduler, std::vector<PeakRates> device_peaks);

  // Queues request |w| here. A request that can never run (too long for the model, more KV than
  // this device's cache) is recorded as failed with the reason; returns false then.
  bool Admit(const WorkloadRequest& w, RunRecords& records);

  // Plans one step at |t| (|more_arrivals|: requests may still be routed here) and runs it. The
  // step ends at |t| + its device time on a virtual clock, else at |real_clock|() after it.
  // Records its tokens and step. Errors: the executor's and the sampler's.
  StatusOr<StepOutcome> RunStep(double t, bool more_arrivals, bool virtual_clock,
                                const std::function<double()>& real_clock, RunRecords& records);

  // Ends every unfinished request routed here: the ones never scheduled are returned (they can
  // run elsewhere), the others are recorded as failed with |reason|.
  std::vector<int64_t> Abandon(const std::string& reason, RunRecords& records);

  int index() const { return index_; }
  Device& device() const { return *device_; }  // the first device
  // "cpu:0", or for a layer split "cpu:0+vulkan:0".
  const std::string& name() const { return name_; }
  // The peaks the replica's utilisation is against: its device's; for a layer split each device's
  // peak weighted by the time its layers ran so far (a rate is unknown where a device's is).
  PeakRates peaks() const;
  const std::vector<PeakRates>& device_peaks() const { return device_peaks_; }
  // Per device of a layer split, the seconds its layers ran over the run.
  const std::vector<double>& stage_seconds() const { return stage_seconds_; }
  const LlamaExecutor& executor() const { return *executor_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  const std::vector<StepRecord>& steps() const { return steps_; }
  int64_t unfinished() const { return static_cast<int64_t>(unfinished_.size()); }
  double step_time_s() const { return step_time_s_; }
  double overhead_s() const { return overhead_s_; }
  int64_t steps_run() const { return static_cast<int64_t>(steps_.size()); }
  const std::string& failure() const { return failure_; }  // Abandon's reason ("" = none)
  // Tensor parallelism: per rank, its stats summed over the run's steps (empty otherwise).
  const std::vector<RankStepStats>& rank_totals() const { return rank_totals_; }

 private:
  int index_;
  std::shared_ptr<Device> device_;
  std::unique_ptr<LlamaExecutor> executor_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<PeakRates> device_peaks_;
  std::vector<double> stage_seconds_;
  std::vector<RankStepStats> rank_totals_;
  std::string name_;
  Sampler sampler_;
  std::set<int64_t> unfinished_;  // request ids routed here and not yet finished
  std::vector<StepRecord> steps_;
  double step_time_s_ = 0, overhead_s_ = 0;
  std::string failure_;
};

}  // namespace hwinfer::bench_internal
