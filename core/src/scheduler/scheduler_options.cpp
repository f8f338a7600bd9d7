// scheduler_options.cpp — batching-mode and KV-reservation names, and SchedulerOptions validation
// (scheduler.h).
// Pure value checks; nothing here touches a scheduler's state.
#include <cmath>
#include <string>

#include "hwinfer/scheduler.h"

namespace hwinfer {

const char* BatchingModeName(BatchingMode mode) {
  switch (mode) {
    case BatchingMode::kContinuous:
      return "continuous";
    case BatchingMode::kDynamic:
      return "dynamic";
    case BatchingMode::kStatic:
      return "static";
  }
  return "unknown";
}

StatusOr<BatchingMode> ParseBatchingMode(const std::string& text) {
  for (BatchingMode mode :
       {BatchingMode::kContinuous, BatchingMode::kDynamic, BatchingMode::kStatic}) {
    if (text == BatchingModeName(mode)) return mode;
  }
  return InvalidArgument("batching mode '" + text + "' is not one of continuous, dynamic, static");
}

const char* KvReservationName(KvReservation reservation) {
  switch (reservation) {
    case KvReservation::kPaged:
      return "paged";
    case KvReservation::kMaxLength:
      return "max_length";
  }
  return "unknown";
}

StatusOr<KvReservation> ParseKvReservation(const std::string& text) {
  for (KvReservation reservation : {KvReservation::kPaged, KvReservation::kMaxLength}) {
    if (text == KvReservationName(reservation)) return reservation;
  }
  return InvalidArgument("kv_reservation '" + text + "' is not one of paged, max_length");
}

Status SchedulerOptions::Validate() const {
  auto positive = [](const char* name, int64_t value) {
    return value > 0
               ? Status::Ok()
               : InvalidArgument(std::string(name) + " must be > 0, got " + std::to_string(value));
  };
  HWINFER_RETURN_IF_ERROR(positive("max_batch_tokens", max_batch_tokens));
  HWINFER_RETURN_IF_ERROR(positive("max_sequences", max_sequences));
  HWINFER_RETURN_IF_ERROR(positive("max_model_len", max_model_len));
  if (!(batch_timeout_s >= 0) || !std::isfinite(batch_timeout_s)) {
    return InvalidArgument("batch_timeout_s must be finite and >= 0, got " +
                           std::to_string(batch_timeout_s));
  }
  if (kv_reservation != KvReservation::kPaged && kv_reservation != KvReservation::kMaxLength) {
    return InvalidArgument("kv_reservation must be paged or max_length, got value " +
                           std::to_string(static_cast<int>(kv_reservation)));
  }
  if (!(ageing_s > 0) || !std::isfinite(ageing_s)) {
    return InvalidArgument("ageing_s must be finite and > 0, got " + std::to_string(ageing_s));
  }
  return Status::Ok();
}

}  // namespace hwinfer
