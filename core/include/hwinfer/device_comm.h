// hwinfer/device_comm.h — one rank's end of a device communicator (plugin ABI 1.4, "device
// collectives"): tensor-parallel ranks summing activations on their devices (the CPU plugin's
// shared memory; NCCL or RCCL in a GPU plugin) instead of through host memory.
//
// The device all-reduce is enqueued on a stream and completes only when every rank's stream gets
// there, so a rank that dies would leave the others waiting forever. Guard bounds that wait: a
// watchdog aborts the communicator when the wait outlasts the deadline or the communicator
// reports an error, and the stream then finishes with an error instead of hanging.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "hwinfer/device.h"
#include "hwinfer/plugin.h"
#include "hwinfer/status.h"

namespace hwinfer {

class DeviceComm {
 public:
  // True when |device|'s plugin fills all six collective slots.
  static bool Supported(const Device& device);
  // Ok when Supported, else Unsupported naming the device and its plugin.
  static Status RequireSupported(const Device& device);
  // A fresh communicator id from |device|'s plugin, to be sent to every rank (Unsupported without
  // the slots).
  static StatusOr<hwinfer_comm_id> CreateId(const Device& device);
  // Joins rank |rank| of |nranks| on |device|; blocks until every rank has joined, at most
  // |timeout_seconds| (then Unavailable).
  static StatusOr<DeviceComm> Init(std::shared_ptr<Device> device, const hwinfer_comm_id& id,
                                   int nranks, int rank, double timeout_seconds);

  DeviceComm();
  DeviceComm(DeviceComm&& other) noexcept;
  DeviceComm& operator=(DeviceComm&& other) noexcept;
  ~DeviceComm();  // comm_destroy; the streams that ran its all-reduces must have finished them

  bool valid() const { return handle_ != nullptr; }
  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const Device& device() const { return *device_; }

  // Enqueues on |stream| the in-place sum over the ranks of the |count| F32 values at byte
  // |offset| of |buffer|.
  Status AllReduceSum(const Stream& stream, const Buffer& buffer, uint64_t offset,
                      int64_t count) const;
  // Ok while the communicator is healthy, else the error that broke it.
  Status PendingError() const;
  // Breaks the communicator: this rank's queued all-reduces finish with an error, now.
  void Abort() const;

  // Runs |wait| (a blocking wait on work that includes this communicator's all-reduces). When it
  // has not returned within |timeout_seconds|, or the communicator reports an error first, the
  // communicator is aborted (so |wait| returns) and the result is Unavailable: "rank R of N:
  // <what> did not finish within T s ..." or "rank R of N: <what>: <the communicator's error>".
  // Otherwise |wait|'s own status.
  Status Guard(const std::function<Status()>& wait, double timeout_seconds,
               const std::string& what) const;

 private:
  class Watchdog;
  std::shared_ptr<Device> device_;
  hwinfer_comm* handle_ = nullptr;
  int rank_ = 0, nranks_ = 0;
  // Started at the first Guard; mutable: how the communicator is waited on, not its value.
  mutable std::unique_ptr<Watchdog> watchdog_;
};

}  // namespace hwinfer
