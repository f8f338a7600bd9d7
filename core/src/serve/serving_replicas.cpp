// serving_replicas.cpp — several ServingEngines behind one front (hwinfer/serving_replicas.h).
#include "hwinfer/serving_replicas.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace hwinfer {

StatusOr<std::unique_ptr<ServingReplicas>> ServingReplicas::Create(
    const std::vector<std::shared_ptr<Device>>& devices, std::shared_ptr<const LlamaModel> model,
    const EngineOptions& options, const std::vector<PeakRates>& peaks, ReplicaRouting routing) {
  if (devices.empty()) return InvalidArgument("serve: no device");
  if (!peaks.empty() && peaks.size() != devices.size()) {
    return InvalidArgument(
        fmt::format("serve: {} devices but {} sets of peaks", devices.size(), peaks.size()));
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] == nullptr) return InvalidArgument(fmt::format("serve: device {} is null", i));
  }
  if (const Device* repeated = RepeatedDevice(devices)) {
    return InvalidArgument(fmt::format(
        "serve: device {} is given twice; each device runs one replica", repeated->id()));
  }
  std::unique_ptr<ServingReplicas> replicas(new ServingReplicas(routing));
  const auto n = static_cast<RequestId>(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    EngineOptions engine_options = options;
    if (!peaks.empty()) engine_options.peaks = peaks[i];
    engine_options.first_request_id = static_cast<RequestId>(i);
    engine_options.request_id_step = n;
    StatusOr<std::unique_ptr<ServingEngine>> engine =
        ServingEngine::Create(devices[i], model, engine_options);
    if (!engine.ok()) return engine.status().WithContext(devices[i]->id());
    replicas->engines_.push_back(std::move(*engine));
    replicas->device_ids_.push_back(devices[i]->id());
  }
  return replicas;
}

ServingReplicas::~ServingReplicas() { Shutdown(0); }

StatusOr<std::shared_ptr<RequestStream>> ServingReplicas::Submit(ServeRequest request) {
  const size_t n = engines_.size();
  std::vector<int64_t> outstanding(n);
  for (size_t i = 0; i < n; ++i) outstanding[i] = engines_[i]->outstanding_tokens();
  std::vector<bool> untried(n, true);
  Status first_refusal = Status::Ok();
  for (size_t tries = 0; tries < n; ++tries) {
    int pick = 0;
    {
      std::lock_guard lock(mutex_);
      pick = router_.Pick(outstanding, untried);
    }
    if (pick < 0) break;
    untried[static_cast<size_t>(pick)] = false;
    StatusOr<std::shared_ptr<RequestStream>> stream =
        engines_[static_cast<size_t>(pick)]->Submit(request);
    if (stream.ok()) return stream;
    // A request no engine can take (a bad field) is refused by the first alike.
    const StatusCode code = stream.status().code();
    if (code == StatusCode::kInvalidArgument) return stream.status();
    if (first_refusal.ok()) {
      first_refusal = n > 1 ? stream.status().WithContext(device_ids_[static_cast<size_t>(pick)])
                            : stream.status();
    }
  }
  return first_refusal;
}

int ServingReplicas::EngineOf(RequestId id) const {
  if (id < 0) return -1;
  return static_cast<int>(id % static_cast<RequestId>(engines_.size()));
}

void ServingReplicas::Cancel(RequestId id) {
  if (const int engine = EngineOf(id); engine >= 0)
    engines_[static_cast<size_t>(engine)]->Cancel(id);
}

void ServingReplicas::Stop(RequestId id) {
  if (const int engine = EngineOf(id); engine >= 0) engines_[static_cast<size_t>(engine)]->Stop(id);
}

void ServingReplicas::Shutdown(double drain_s) {
  std::vector<std::thread> drains;
  for (auto& engine : engines_) {
    drains.emplace_back([&engine, drain_s] { engine->Shutdown(drain_s); });
  }
  for (std::thread& drain : drains) drain.join();
}

std::vector<std::pair<std::string, ServingMetrics>> ServingReplicas::Metrics() const {
  std::vector<std::pair<std::string, ServingMetrics>> metrics;
  for (size_t i = 0; i < engines_.size(); ++i) {
    metrics.emplace_back(device_ids_[i], engines_[i]->Metrics());
  }
  return metrics;
}

int64_t ServingReplicas::max_model_len() const {
  int64_t shortest = engines_.front()->max_model_len();
  for (const auto& engine : engines_) shortest = std::min(shortest, engine->max_model_len());
  return shortest;
}

bool ServingReplicas::accepting() const {
  for (const auto& engine : engines_) {
    if (engine->accepting()) return true;
  }
  return false;
}

std::string ServingReplicas::DeviceIds() const {
  std::string ids;
  for (const std::string& id : device_ids_) ids += (ids.empty() ? "" : ", ") + id;
  return ids;
}

}  // namespace hwinfer
