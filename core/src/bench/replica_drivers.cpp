// replica_drivers.cpp — the virtual-clock and real-clock drivers of a benchmark run
// (replica_drivers.h).
#include "replica_drivers.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>

#include "hwinfer/log.h"
#include "replica_front.h"

namespace hwinfer::bench_internal {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr double kInfinity = std::numeric_limits<double>::infinity();
// An idle wait longer than this is announced (a low arrival rate is not a hang).
constexpr double kLongIdleSeconds = 60.0;

std::string FailureReason(const BenchReplica& replica, const Status& status) {
  return fmt::format("device {} failed at step {}: {}", replica.name(), replica.steps_run() + 1,
                     status.ToString());
}

// Takes |replica| out of the run after its step failed with |status|; requests it never scheduled
// go back to the front.
// |undelivered|: request ids routed to it that it had not admitted yet (they go back too).
void FailReplica(BenchReplica& replica, const Status& status, ReplicaFront& front,
                 RunRecords& records, const std::vector<int64_t>& undelivered = {}) {
  const std::string reason = FailureReason(replica, status);
  Log(LogLevel::kWarning, "bench",
      reason + "; its running requests fail, its waiting ones go to the other devices");
  const int64_t unfinished = replica.unfinished();
  std::vector<int64_t> requeued = replica.Abandon(reason, records);
  const auto failed = unfinished - static_cast<int64_t>(requeued.size());
  requeued.insert(requeued.end(), undelivered.begin(), undelivered.end());
  front.ReplicaFailed(replica.index(), reason, requeued, failed);
}

Status Stuck(int64_t unfinished, int64_t total) {
  return Internal(fmt::format(
      "bench: the scheduler planned nothing with {} of {} requests unfinished and nothing left "
      "to arrive",
      unfinished, total));
}

// A replica's place on the virtual clock.
struct Lane {
  double free_at = 0;       // when its last step ended
  double wake = kInfinity;  // when it plans next (infinity: when a request reaches it)
  bool pending = false;     // a step whose effects the front has not seen yet
  StepOutcome outcome;
};

}  // namespace

Status RunOnVirtualClock(const std::vector<std::unique_ptr<BenchReplica>>& replicas,
                         const std::vector<WorkloadRequest>& workload, const DriverOptions& options,
                         RunRecords& records) {
  const auto n = static_cast<int>(replicas.size());
  ReplicaFront front(workload, n, options.routing, options.max_concurrency, records);
  std::vector<Lane> lanes(static_cast<size_t>(n));
  auto lane = [&](int r) -> Lane& { return lanes[static_cast<size_t>(r)]; };
  auto settle = [&](double t) {
    for (int r = 0; r < n; ++r) {
      if (lane(r).pending && lane(r).outcome.end_s <= t) {
        front.Settle(r, lane(r).outcome);
        lane(r).pending = false;
      }
    }
  };
  auto deliver = [&](double t) {
    const bool had_more = front.more();
    for (const ReplicaFront::Delivery& d : front.Release(t)) {
      if (replicas[static_cast<size_t>(d.replica)]->Admit(workload[d.request], records)) {
        lane(d.replica).wake = std::min(lane(d.replica).wake, t);
      } else {
        front.Refused(d);
      }
    }
    if (had_more && !front.more()) {  // waiting static/dynamic batches stop waiting for more
      for (int r = 0; r < n; ++r) {
        if (replicas[static_cast<size_t>(r)]->unfinished() > 0)
          lane(r).wake = std::min(lane(r).wake, t);
      }
    }
  };
  auto progress = [&](double now) {
    if (!options.on_progress) return;
    BenchProgress p{front.done(), front.total(), 0, front.held(), now, front.output_tokens()};
    for (int r = 0; r < n; ++r) {
      if (!front.live(r)) continue;
      p.running += replicas[static_cast<size_t>(r)]->scheduler().num_running();
      p.waiting += replicas[static_cast<size_t>(r)]->scheduler().num_waiting();
    }
    options.on_progress(p);
  };

  for (;;) {
    // The front's next event: an arrival, or (while requests wait for a slot) a step's end.
    double t_front = front.next_arrival_s();
    for (int r = 0; r < n && front.holding(); ++r) {
      if (lane(r).pending) t_front = std::min(t_front, lane(r).outcome.end_s);
    }
    int next = -1;
    double t_step = kInfinity;
    for (int r = 0; r < n; ++r) {
      const double start = std::max(lane(r).free_at, lane(r).wake);
      if (front.live(r) && lane(r).wake < kInfinity && start < t_step) {
        next = r;
        t_step = start;
      }
    }
    if (t_front < kInfinity && t_front <= t_step) {  // arrivals at a step's start come first
      settle(t_front);
      deliver(t_front);
      continue;
    }
    if (next < 0) {
      settle(kInfinity);
      if (front.done() >= front.total()) return Status::Ok();
      return Stuck(front.total() - front.done(), front.total());
    }
    BenchReplica& replica = *replicas[static_cast<size_t>(next)];
    settle(t_step);
    StatusOr<StepOutcome> outcome = replica.RunStep(t_step, front.more(), true, {}, records);
    if (!outcome.ok()) {
      if (n == 1) return outcome.status();
      FailReplica(replica, outcome.status(), front, records);
      lane(next).wake = kInfinity;
      deliver(t_step);
      continue;
    }
    if (!outcome->ran) {
      lane(next).wake = replica.scheduler().NextWakeTime();
      continue;
    }
    lane(next) = {outcome->end_s, replica.scheduler().HasUnfinished() ? outcome->end_s : kInfinity,
                  true, *outcome};
    progress(outcome->end_s);
  }
}

namespace {

// What the front and the workers of a real-clock run share, under |mutex|.
struct SharedRun {
  explicit SharedRun(ReplicaFront& f, size_t replicas)
      : front(f), inbox(replicas), running(replicas), waiting(replicas) {}
  std::mutex mutex;
  std::condition_variable changed;  // an inbox, a settled step, the end of arrivals, an error
  ReplicaFront& front;
  std::vector<std::vector<size_t>> inbox;  // workload indices routed to each replica
  std::vector<int64_t> running, waiting;   // each replica's scheduler, after its last step
  bool more = true;                        // requests may still be routed
  bool stop = false;
  Status error = Status::Ok();
};

// One replica's worker on the real clock: admits what reaches its inbox, plans and runs steps
// until the run stops.
void RunWorker(BenchReplica& replica, const std::vector<WorkloadRequest>& workload,
               SharedRun& shared, RunRecords& records, SteadyClock::time_point start,
               const DriverOptions& options, bool only_replica) {
  const auto r = static_cast<size_t>(replica.index());
  const std::function<double()> clock = [start] { return SecondsSince(start); };
  double wake = kInfinity;  // when the scheduler wants to plan again while idle
  bool seen_more = true;
  for (;;) {
    std::vector<size_t> arrived;
    bool more = true;
    {
      std::unique_lock<std::mutex> lock(shared.mutex);
      auto ready = [&] {
        return shared.stop || !shared.inbox[r].empty() || shared.more != seen_more ||
               (replica.unfinished() > 0 && wake <= clock());
      };
      if (replica.unfinished() == 0 || wake > clock()) {
        if (wake < kInfinity) {
          shared.changed.wait_for(lock, std::chrono::duration<double>(wake - clock()), ready);
        } else {
          shared.changed.wait(lock, ready);
        }
      }
      if (shared.stop) return;
      arrived.swap(shared.inbox[r]);
      more = seen_more = shared.more;
    }
    for (const size_t index : arrived) {
      if (!replica.Admit(workload[index], records)) {
        std::lock_guard<std::mutex> lock(shared.mutex);
        shared.front.Refused({replica.index(), index});
        shared.changed.notify_all();
      }
    }
    if (replica.unfinished() == 0) {
      wake = kInfinity;
      continue;
    }
    StatusOr<StepOutcome> outcome = replica.RunStep(clock(), more, false, clock, records);
    std::lock_guard<std::mutex> lock(shared.mutex);
    if (!outcome.ok()) {
      if (only_replica) {
        shared.error = outcome.status();
        shared.stop = true;
      } else {
        std::vector<int64_t> undelivered;
        for (const size_t index : shared.inbox[r]) undelivered.push_back(workload[index].id);
        shared.inbox[r].clear();
        FailReplica(replica, outcome.status(), shared.front, records, undelivered);
      }
      shared.changed.notify_all();
      return;
    }
    wake = outcome->ran ? clock() : replica.scheduler().NextWakeTime();
    if (!outcome->ran) {
      if (!more && wake == kInfinity && shared.inbox[r].empty()) {
        shared.error = Stuck(replica.unfinished(), shared.front.total());
        shared.stop = true;
        shared.changed.notify_all();
        return;
      }
      continue;
    }
    shared.front.Settle(replica.index(), *outcome);
    shared.running[r] = replica.scheduler().num_running();
    shared.waiting[r] = replica.scheduler().num_waiting();
    if (options.on_progress) {
      BenchProgress p{shared.front.done(), shared.front.total(), 0,
                      shared.front.held(), outcome->end_s,       shared.front.output_tokens()};
      for (size_t i = 0; i < shared.running.size(); ++i) {
        p.running += shared.running[i];
        p.waiting += shared.waiting[i];
      }
      options.on_progress(p);
    }
    shared.changed.notify_all();
  }
}

}  // namespace

Status RunOnRealClock(const std::vector<std::unique_ptr<BenchReplica>>& replicas,
                      const std::vector<WorkloadRequest>& workload, const DriverOptions& options,
                      RunRecords& records) {
  const SteadyClock::time_point start = SteadyClock::now();
  ReplicaFront front(workload, static_cast<int>(replicas.size()), options.routing,
                     options.max_concurrency, records);
  SharedRun shared(front, replicas.size());
  std::vector<std::thread> workers;
  workers.reserve(replicas.size());
  for (const auto& replica : replicas) {
    workers.emplace_back(RunWorker, std::ref(*replica), std::cref(workload), std::ref(shared),
                         std::ref(records), start, std::cref(options), replicas.size() == 1);
  }
  double announced_wake = -1;
  {
    std::unique_lock<std::mutex> lock(shared.mutex);
    while (!shared.stop) {
      if (front.done() >= front.total()) break;
      const double now = SecondsSince(start);
      for (const ReplicaFront::Delivery& d : front.Release(now)) {
        shared.inbox[static_cast<size_t>(d.replica)].push_back(d.request);
      }
      if (shared.more && !front.more()) shared.more = false;
      shared.changed.notify_all();
      const double next = front.next_arrival_s();
      if (std::isfinite(next) && next - now > kLongIdleSeconds && next != announced_wake) {
        announced_wake = next;
        Log(LogLevel::kWarning, "bench",
            fmt::format("nothing to run for {:.0f} s, until the next arrival at t = {:.1f} s",
                        next - now, next));
      }
      // Wakes for the next arrival, a freed slot or a failed replica, at least once a second.
      shared.changed.wait_for(lock,
                              std::chrono::duration<double>(std::clamp(next - now, 0.0, 1.0)));
    }
    shared.stop = true;
    shared.changed.notify_all();
  }
  for (std::thread& worker : workers) worker.join();
  return shared.error;
}

}  // namespace hwinfer::bench_internal
