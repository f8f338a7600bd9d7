// replica_front.cpp — arrivals, the concurrency cap and routing of a benchmark run
// (replica_front.h).
#include "replica_front.h"

namespace hwinfer::bench_internal {

ReplicaFront::ReplicaFront(const std::vector<WorkloadRequest>& workload, int replicas,
                           ReplicaRouting routing, int64_t max_concurrency, RunRecords& records)
    : workload_(workload),
      records_(records),
      router_(routing),
      max_concurrency_(max_concurrency),
      index_of_id_(workload.size()),
      outstanding_(static_cast<size_t>(replicas), 0),
      live_(static_cast<size_t>(replicas), true) {
  for (size_t i = 0; i < workload.size(); ++i)
    index_of_id_[static_cast<size_t>(workload[i].id)] = i;
}

std::vector<ReplicaFront::Delivery> ReplicaFront::Release(double t) {
  while (next_ < workload_.size() && workload_[next_].arrival_s <= t) held_.push_back(next_++);
  std::vector<Delivery> deliveries;
  while (!held_.empty() && (max_concurrency_ <= 0 || in_flight_ < max_concurrency_)) {
    const size_t index = held_.front();
    held_.pop_front();
    const WorkloadRequest& w = At(index);
    const int replica = router_.Pick(outstanding_, live_);
    if (replica < 0) {
      RequestRecord& r = records_.requests[static_cast<size_t>(w.id)];
      r.failed = true;
      r.error = "no device left to run it: " + last_failure_;
      ++done_;
      continue;
    }
    records_.replica_of[static_cast<size_t>(w.id)] = replica;
    outstanding_[static_cast<size_t>(replica)] += w.input_len + w.output_len;
    ++in_flight_;
    deliveries.push_back({replica, index});
  }
  return deliveries;
}

void ReplicaFront::Refused(const Delivery& delivery) {
  const WorkloadRequest& w = At(delivery.request);
  outstanding_[static_cast<size_t>(delivery.replica)] -= w.input_len + w.output_len;
  --in_flight_;
  ++done_;
}

void ReplicaFront::Settle(int replica, const StepOutcome& outcome) {
  outstanding_[static_cast<size_t>(replica)] -= outcome.outstanding_drop;
  in_flight_ -= outcome.finished;
  done_ += outcome.finished;
  output_tokens_ += outcome.tokens;
}

void ReplicaFront::ReplicaFailed(int replica, const std::string& reason,
                                 const std::vector<int64_t>& requeued, int64_t failed) {
  live_[static_cast<size_t>(replica)] = false;
  outstanding_[static_cast<size_t>(replica)] = 0;
  last_failure_ = reason;
  in_flight_ -= failed + static_cast<int64_t>(requeued.size());
  done_ += failed;
  for (auto it = requeued.rbegin(); it != requeued.rend(); ++it) {
    held_.push_front(index_of_id_[static_cast<size_t>(*it)]);
  }
}

}  // namespace hwinfer::bench_internal
