// hwinfer/collective.h — the host collectives tensor parallelism runs on (docs/multi-device.md
// section 3): every rank of a group calls the same operations in the same order, each on its own
// host memory. Implementations: MPI ranks (hwinfer/mpi_collective.h, one process per rank) and
// threads of one process (MakeLocalCollectives, for tests and for ranks that share a process).
//
// Every call but an |idle| broadcast waits at most the group's deadline for the other ranks;
// past it the call fails with Unavailable naming the rank, the call and the wait, and every later
// call on that rank fails at once with the same error (a group that lost a rank cannot go on).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/hardware_spec.h"
#include "hwinfer/status.h"

namespace hwinfer {

// Tensor parallelism: where the ranks' all-reduces run.
enum class TpCollectives : int32_t {
  kAuto = 0,    // on the devices where every rank's plugin has device collectives, else kHost
  kHost = 1,    // through host memory, over the Collective (MPI, threads)
  kDevice = 2,  // on the devices (plugin ABI 1.4), or creating the executor fails saying why
};
// "auto", "host", "device"; parsed back by ParseTpCollectives (InvalidArgument naming the value).
const char* TpCollectivesName(TpCollectives mode);
StatusOr<TpCollectives> ParseTpCollectives(const std::string& text);

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // data [count] floats: on return every rank holds the sum over the ranks, the same values on
  // every rank. |what| names the call in errors ("all-reduce after the attention output").
  virtual Status AllReduceSum(float* data, int64_t count, const std::string& what) = 0;
  // Rank 0's |bytes| bytes at |data| into |data| on every rank. |idle|: the wait has no deadline
  // (a rank waiting for rank 0's next step, which may be idle for as long as it likes).
  virtual Status Broadcast(void* data, int64_t bytes, const std::string& what, bool idle) = 0;
  // Each rank's |bytes| bytes at |data| into out [size(), bytes], in rank order, on every rank.
  virtual Status AllGather(const void* data, int64_t bytes, void* out, const std::string& what) = 0;
  // How long a call waits for the other ranks (a device all-reduce is bounded by the same).
  virtual double deadline_seconds() const = 0;
  // Ranks on simulated devices: the seconds a modelled interconnect takes to all-reduce |bytes|
  // (the all-reduce then moves no data: the simulator prices work, its values are not the
  // model's). 0 for ranks whose all-reduces really run (their time is measured).
  virtual double ModelledAllReduceSeconds(int64_t bytes) const {
    (void)bytes;
    return 0;
  }
};

// Every rank learns every rank's |mine|: OK when all are OK, else the lowest failing rank's error
// (its code, its message after "rank R: "), the same on every rank. A failure of the exchange
// itself is returned as it is.
Status AgreeOnStatus(Collective& collective, const Status& mine, const std::string& what);

// |size| ranks of one process, to be used by |size| threads, rank i by one thread: each call
// returns once every rank has made it. |deadline_seconds| bounds each wait. With |interconnect|
// given (a bandwidth), the ranks model their all-reduces' time by it (simulated devices).
std::vector<std::shared_ptr<Collective>> MakeLocalCollectives(int size, double deadline_seconds,
                                                              InterconnectSpec interconnect = {});

}  // namespace hwinfer
