// simulated_ranks.cpp — see simulated_ranks.h.
#include "simulated_ranks.h"

#include <fmt/format.h>

#include <chrono>

#include "hwinfer/llama_executor.h"
#include "hwinfer/log.h"

namespace hwinfer::cli {

StatusOr<std::unique_ptr<SimulatedRanks>> SimulatedRanks::Start(
    Registry& registry, const std::shared_ptr<Device>& rank0, const std::string& model_path,
    int ranks, const InterconnectSpec& interconnect, double deadline_seconds) {
  std::vector<const RegisteredDevice*> others;  // the same plugin's devices after rank 0's
  const RegisteredDevice* first = nullptr;
  for (const RegisteredDevice& device : registry.devices()) {
    if (device.id() == rank0->id()) {
      first = &device;
    } else if (first != nullptr && device.plugin == first->plugin) {
      others.push_back(&device);
    }
  }
  if (static_cast<int>(others.size()) < ranks - 1) {
    return InvalidArgument(
        fmt::format("--tp {} on the simulator needs {} simulated devices from {} on; there are {}",
                    ranks, ranks, rank0->id(), others.size() + 1));
  }
  HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<const LlamaModel> model, LlamaModel::Open(model_path));
  std::unique_ptr<SimulatedRanks> started(new SimulatedRanks());
  started->group_ = MakeLocalCollectives(ranks, deadline_seconds, interconnect);
  for (int r = 1; r < ranks; ++r) {
    HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Device> device,
                             registry.Open(*others[static_cast<size_t>(r - 1)]));
    started->followers_.push_back(std::async(
        std::launch::async, [collective = started->group_[static_cast<size_t>(r)], device, model] {
          return LlamaExecutor::FollowTensorParallel(collective, device, model);
        }));
  }
  return started;
}

SimulatedRanks::~SimulatedRanks() {
  // A follower that already returned (its shard failed) would never take the end message.
  bool all_following = true;
  for (std::future<Status>& follower : followers_) {
    all_following =
        all_following && follower.wait_for(std::chrono::seconds(0)) == std::future_status::timeout;
  }
  if (all_following) {
    const Status ended = LlamaExecutor::EndTensorParallel(*group_.front());
    if (!ended.ok()) Log(LogLevel::kWarning, "tp", ended.ToString());
  }
  for (std::future<Status>& follower : followers_) {
    const Status status = follower.get();
    if (!status.ok()) Log(LogLevel::kWarning, "tp", status.ToString());
  }
}

}  // namespace hwinfer::cli
