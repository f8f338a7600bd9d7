// tools/cli/simulated_ranks.h — `--tp N` on the simulator, without mpirun: N tensor-parallel
// ranks as threads of this process, rank i on the i-th simulated device, their all-reduces priced
// by the hardware file's `interconnect:` (docs/multi-device.md section 4). Rank 0 is the
// command's own thread (its collective goes into BenchRunOptions); the others follow it.
#pragma once

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/collective.h"
#include "hwinfer/hardware_spec.h"
#include "hwinfer/registry.h"

namespace hwinfer::cli {

class SimulatedRanks {
 public:
  // Opens the |ranks| - 1 devices of |rank0|'s plugin after it in |registry| (InvalidArgument
  // naming how many there are when too few) and starts one follower thread on each, running the
  // model at |model_path|.
  static StatusOr<std::unique_ptr<SimulatedRanks>> Start(Registry& registry,
                                                         const std::shared_ptr<Device>& rank0,
                                                         const std::string& model_path, int ranks,
                                                         const InterconnectSpec& interconnect,
                                                         double deadline_seconds);
  // Ends the followers (LlamaExecutor::EndTensorParallel) and joins them; a follower's error is
  // logged.
  ~SimulatedRanks();
  const std::shared_ptr<Collective>& rank0() const { return group_.front(); }

 private:
  SimulatedRanks() = default;
  std::vector<std::shared_ptr<Collective>> group_;
  std::vector<std::future<Status>> followers_;
};

}  // namespace hwinfer::cli
