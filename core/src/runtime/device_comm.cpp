// device_comm.cpp — DeviceComm over the ABI 1.4 collective slots, and the watchdog that keeps a
// device all-reduce from waiting forever for a rank that is gone.
#include "hwinfer/device_comm.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "hwinfer/plugin_loader.h"

namespace hwinfer {
namespace {

using Clock = std::chrono::steady_clock;

// How often an armed watchdog asks the communicator for an error.
constexpr std::chrono::milliseconds kErrorPollInterval(10);

}  // namespace

// A thread that, while armed, aborts the communicator at the deadline or at its first error.
class DeviceComm::Watchdog {
 public:
  Watchdog(const hwinfer_plugin_api* api, hwinfer_comm* comm)
      : api_(api), comm_(comm), thread_([this] { Run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  void Arm(double timeout_seconds) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_seconds));
      timeout_seconds_ = timeout_seconds;
      armed_ = true;
      fired_.clear();
    }
    changed_.notify_all();
  }

  // Disarms; returns why it fired ("" when it did not).
  std::string Disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
    return std::exchange(fired_, std::string());
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      if (!armed_) {
        changed_.wait(lock);
        continue;
      }
      if (Clock::now() >= deadline_) {
        Fire(fmt::format("did not finish within {:g} s (another rank is gone or stuck)",
                         timeout_seconds_));
        continue;
      }
      changed_.wait_until(lock, std::min(deadline_, Clock::now() + kErrorPollInterval));
      if (!armed_ || stop_) continue;
      lock.unlock();
      Status pending = ConsumePluginError(api_->comm_get_error(comm_), "the communicator");
      lock.lock();
      if (!pending.ok() && armed_) Fire("failed: " + pending.message());
    }
  }

  // Under mutex_: records why, aborts the communicator (its queued all-reduces finish now).
  void Fire(std::string why) {
    fired_ = std::move(why);
    armed_ = false;
    api_->comm_abort(comm_);
  }

  const hwinfer_plugin_api* api_;
  hwinfer_comm* comm_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false, armed_ = false;
  Clock::time_point deadline_;
  double timeout_seconds_ = 0;
  std::string fired_;
  std::thread thread_;  // last: starts once the fields above exist
};

bool DeviceComm::Supported(const Device& device) {
  const hwinfer_plugin_api& api = device.plugin().api();
  return api.comm_create_id != nullptr && api.comm_init != nullptr &&
         api.comm_all_reduce_sum_f32 != nullptr && api.comm_get_error != nullptr &&
         api.comm_abort != nullptr && api.comm_destroy != nullptr;
}

Status DeviceComm::RequireSupported(const Device& device) {
  if (Supported(device)) return Status::Ok();
  return Unsupported(fmt::format("{}: plugin '{}' has no device collectives (ABI 1.4)", device.id(),
                                 device.plugin().name()));
}

StatusOr<hwinfer_comm_id> DeviceComm::CreateId(const Device& device) {
  HWINFER_RETURN_IF_ERROR(RequireSupported(device));
  hwinfer_comm_id id{};
  HWINFER_RETURN_IF_ERROR(
      ConsumePluginError(device.plugin().api().comm_create_id(device.plugin().handle(), &id),
                         device.id() + ": comm_create_id"));
  return id;
}

StatusOr<DeviceComm> DeviceComm::Init(std::shared_ptr<Device> device, const hwinfer_comm_id& id,
                                      int nranks, int rank, double timeout_seconds) {
  HWINFER_RETURN_IF_ERROR(RequireSupported(*device));
  if (nranks < 1 || rank < 0 || rank >= nranks || !(timeout_seconds > 0)) {
    return InvalidArgument(fmt::format("device communicator: rank {} of {}, timeout {} s", rank,
                                       nranks, timeout_seconds));
  }
  const double timeout_ns = std::min(timeout_seconds * 1e9, 1e18);
  hwinfer_comm* handle = nullptr;
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(
      device->plugin().api().comm_init(device->handle(), &id, static_cast<uint32_t>(nranks),
                                       static_cast<uint32_t>(rank),
                                       static_cast<uint64_t>(timeout_ns), &handle),
      device->id() + ": comm_init"));
  if (handle == nullptr) return Internal(device->id() + ": comm_init returned no communicator");
  DeviceComm comm;
  comm.device_ = std::move(device);
  comm.handle_ = handle;
  comm.rank_ = rank;
  comm.nranks_ = nranks;
  return comm;
}

DeviceComm::DeviceComm() = default;

DeviceComm::DeviceComm(DeviceComm&& other) noexcept
    : device_(std::move(other.device_)),
      handle_(std::exchange(other.handle_, nullptr)),
      rank_(other.rank_),
      nranks_(other.nranks_),
      watchdog_(std::move(other.watchdog_)) {}

DeviceComm& DeviceComm::operator=(DeviceComm&& other) noexcept {
  if (this != &other) {
    watchdog_.reset();
    if (handle_ != nullptr) device_->plugin().api().comm_destroy(handle_);
    device_ = std::move(other.device_);
    handle_ = std::exchange(other.handle_, nullptr);
    rank_ = other.rank_;
    nranks_ = other.nranks_;
    watchdog_ = std::move(other.watchdog_);
  }
  return *this;
}

DeviceComm::~DeviceComm() {
  watchdog_.reset();  // joined before the communicator it watches goes
  if (handle_ != nullptr) device_->plugin().api().comm_destroy(handle_);
}

Status DeviceComm::AllReduceSum(const Stream& stream, const Buffer& buffer, uint64_t offset,
                                int64_t count) const {
  if (handle_ == nullptr) return FailedPrecondition("device all-reduce: no communicator");
  if (count < 0) return InvalidArgument(fmt::format("device all-reduce of {} values", count));
  return ConsumePluginError(
      device_->plugin().api().comm_all_reduce_sum_f32(handle_, stream.handle(), buffer.handle(),
                                                      offset, static_cast<uint64_t>(count)),
      device_->id() + ": comm_all_reduce_sum_f32");
}

Status DeviceComm::PendingError() const {
  if (handle_ == nullptr) return Status::Ok();
  return ConsumePluginError(device_->plugin().api().comm_get_error(handle_),
                            device_->id() + ": the device communicator");
}

void DeviceComm::Abort() const {
  if (handle_ != nullptr) device_->plugin().api().comm_abort(handle_);
}

Status DeviceComm::Guard(const std::function<Status()>& wait, double timeout_seconds,
                         const std::string& what) const {
  if (handle_ == nullptr) return wait();
  if (watchdog_ == nullptr) {
    watchdog_ = std::make_unique<Watchdog>(&device_->plugin().api(), handle_);
  }
  watchdog_->Arm(timeout_seconds);
  const Status waited = wait();
  const std::string fired = watchdog_->Disarm();
  if (!fired.empty()) {
    return Unavailable(fmt::format("rank {} of {}: {} {}; the device communicator was aborted",
                                   rank_, nranks_, what, fired));
  }
  return waited;
}

}  // namespace hwinfer
