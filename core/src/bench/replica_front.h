// replica_front.h — the front of a benchmark run (internal to the bench runner): the workload's
// requests arrive on the run clock, wait while workload.max_concurrency requests are in flight,
// and are routed once each to a live replica (hwinfer/replica_routing.h). It keeps the counts the
// routing and the end of the run depend on. Not thread-safe: the real-clock driver holds its
// lock around every call.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bench_replica.h"
#include "hwinfer/replica_routing.h"
#include "hwinfer/workload.h"

namespace hwinfer::bench_internal {

class ReplicaFront {
 public:
  // |workload| sorted by arrival; |replicas| how many there are.
  ReplicaFront(const std::vector<WorkloadRequest>& workload, int replicas, ReplicaRouting routing,
               int64_t max_concurrency, RunRecords& records);

  struct Delivery {
    int replica = 0;
    size_t request = 0;  // index into the workload
  };
  // Takes the arrivals up to |t| and routes the waiting ones while slots are free. Returns what
  // each replica must admit. With no live replica left, a request fails with the reason the last
  // one gave.
  std::vector<Delivery> Release(double t);
  // A delivered request that its replica refused (it can never run there).
  void Refused(const Delivery& delivery);
  // A step of |replica| ended: its finished requests leave the count in flight.
  void Settle(int replica, const StepOutcome& outcome);
  // |replica| failed with |reason|: it takes no more requests; |requeued| (request ids it had never
  // scheduled) are routed again first; |failed| of its requests ended with the reason.
  void ReplicaFailed(int replica, const std::string& reason, const std::vector<int64_t>& requeued,
                     int64_t failed);

  bool more() const { return next_ < workload_.size() || !held_.empty(); }
  double next_arrival_s() const {
    return next_ < workload_.size() ? workload_[next_].arrival_s
                                    : std::numeric_limits<double>::infinity();
  }
  bool holding() const { return !held_.empty(); }
  int64_t done() const { return done_; }
  int64_t total() const { return static_cast<int64_t>(workload_.size()); }
  int64_t held() const { return static_cast<int64_t>(held_.size()); }
  int64_t output_tokens() const { return output_tokens_; }
  bool live(int replica) const { return live_[static_cast<size_t>(replica)]; }

 private:
  const WorkloadRequest& At(size_t index) const { return workload_[index]; }

  const std::vector<WorkloadRequest>& workload_;
  RunRecords& records_;
  ReplicaRouter router_;
  int64_t max_concurrency_;
  std::vector<size_t> index_of_id_;  // workload index by request id
  size_t next_ = 0;                  // the next arrival
  std::deque<size_t> held_;          // arrived (or requeued), not yet routed
  std::vector<int64_t> outstanding_;
  std::vector<bool> live_;
  std::string last_failure_;
  int64_t in_flight_ = 0, done_ = 0, output_tokens_ = 0;
};

}  // namespace hwinfer::bench_internal
