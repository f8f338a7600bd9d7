// hwinfer/serving_replicas.h — the front `hwinfer serve` talks to: one ServingEngine per device
// (one model replica each, backends mixed), each request routed once, when it is submitted, by
// hwinfer/replica_routing.h (least outstanding tokens, or round robin). One device is the
// one-engine case. Docs: docs/multi-device.md.
//
// Engine i of n hands out request ids i, i + n, i + 2n, ...: an id names its engine, so Cancel and
// Stop reach the right one. A request the chosen engine refuses for its own reasons (its queue is
// full, its KV cache too small) is offered to the others in routing order; the first refusal is
// returned when every engine refuses. Thread-safe, like ServingEngine.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/replica_routing.h"
#include "hwinfer/serving_engine.h"
#include "hwinfer/serving_metrics.h"
#include "hwinfer/status.h"

namespace hwinfer {

class ServingReplicas {
 public:
  // One engine per device with |options|, the peaks of device i being |peaks|[i] (|peaks| empty:
  // options.peaks for all). Errors: no device, |peaks| of another length, a device given twice,
  // and each engine's (with the device named).
  static StatusOr<std::unique_ptr<ServingReplicas>> Create(
      const std::vector<std::shared_ptr<Device>>& devices, std::shared_ptr<const LlamaModel> model,
      const EngineOptions& options, const std::vector<PeakRates>& peaks = {},
      ReplicaRouting routing = ReplicaRouting::kLeastTokens);
  ~ServingReplicas();  // Shutdown(0)

  // ServingEngine::Submit on the routed engine (see the header comment for refusals).
  StatusOr<std::shared_ptr<RequestStream>> Submit(ServeRequest request);
  void Cancel(RequestId id);
  void Stop(RequestId id);
  // Every engine stops accepting at once, then drains for up to |drain_s| (in parallel).
  void Shutdown(double drain_s);

  // Each device's id ("cpu:0") and its engine's metrics, in the order given.
  std::vector<std::pair<std::string, ServingMetrics>> Metrics() const;
  // The shortest context any engine accepts (they serve one model: the model's).
  int64_t max_model_len() const;
  bool accepting() const;
  size_t size() const { return engines_.size(); }
  ServingEngine& engine(size_t index) { return *engines_[index]; }
  // Where request |id| went (its index in the devices given); -1 for an id no engine hands out.
  int EngineOf(RequestId id) const;
  // "cpu:0, vulkan:0"
  std::string DeviceIds() const;

 private:
  explicit ServingReplicas(ReplicaRouting routing) : router_(routing) {}

  std::vector<std::unique_ptr<ServingEngine>> engines_;
  std::vector<std::string> device_ids_;
  mutable std::mutex mutex_;  // guards router_
  ReplicaRouter router_;
};

}  // namespace hwinfer
