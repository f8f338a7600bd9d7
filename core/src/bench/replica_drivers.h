// replica_drivers.h — the two ways a benchmark run advances its replicas (internal to the bench
// runner; docs/multi-device.md):
//   virtual clock (simulated devices): a discrete-event simulation on the calling thread; the next
//     event is the earliest of the next arrival, a step's end that frees a concurrency slot, and
//     every replica's next step start; a step's effects reach the front at its end time;
//   real clock: one worker thread per replica, the front on the calling thread sleeping until each
//     arrival and handing requests to the workers' inboxes.
// A step that fails ends the run with its error when there is one replica; with several, the
// replica leaves the routing, its never-scheduled requests are routed again and the others fail
// with the reason (BenchReplica::Abandon).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "bench_replica.h"
#include "hwinfer/bench_runner.h"
#include "hwinfer/replica_routing.h"
#include "hwinfer/status.h"
#include "hwinfer/workload.h"

namespace hwinfer::bench_internal {

struct DriverOptions {
  ReplicaRouting routing = ReplicaRouting::kLeastTokens;
  int64_t max_concurrency = 0;  // workload.max_concurrency (0 = no cap)
  std::function<void(const BenchProgress&)> on_progress;
};

// Both run |workload| (sorted by arrival) to the end: every request finished or failed.
Status RunOnVirtualClock(const std::vector<std::unique_ptr<BenchReplica>>& replicas,
                         const std::vector<WorkloadRequest>& workload, const DriverOptions& options,
                         RunRecords& records);
Status RunOnRealClock(const std::vector<std::unique_ptr<BenchReplica>>& replicas,
                      const std::vector<WorkloadRequest>& workload, const DriverOptions& options,
                      RunRecords& records);

}  // namespace hwinfer::bench_internal
