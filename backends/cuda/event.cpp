// event.cpp — the GPU plugins' events: one runtime event with timing each. A never-recorded event
// is complete, and waiting on it is a no-op (plugin.h); elapsed time comes from the runtime's
// device timestamps (resolution about half a microsecond). A capturing stream refuses event_record
// and stream_wait_event (plugin.h: graphs hold kernels and D2D copies only).
#include <cmath>
#include <memory>

#include "gpu_internal.h"

namespace hwinfer::gpu {

hwinfer_error* GpuBackend::init_event(hwinfer_device& device, hwinfer_event& event) {
  GPU_RETURN_IF_ERROR(use_device(&device, "event_create"));
  GPU_CHECK("event_create", GPU(EventCreate)(&event.event));
  return nullptr;
}

void GpuBackend::destroy_event(hwinfer_event& event) {
  if (!use_device_quietly(event.device, "event_destroy")) return;
  (void)GPU(EventDestroy)(event.event);
}

hwinfer_error* GpuBackend::record(hwinfer_event& event, hwinfer_stream& stream) {
  GPU_RETURN_IF_ERROR(refuse_while_capturing(&stream, "event_record"));
  GPU_RETURN_IF_ERROR(use_device(stream.device, "event_record"));
  GPU_CHECK("event_record", GPU(EventRecord)(event.event, stream.stream));
  event.recorded = true;
  return nullptr;
}

hwinfer_error* GpuBackend::wait(hwinfer_stream& stream, hwinfer_event& event) {
  GPU_RETURN_IF_ERROR(refuse_while_capturing(&stream, "stream_wait_event"));
  if (!event.recorded) return nullptr;
  GPU_RETURN_IF_ERROR(use_device(stream.device, "stream_wait_event"));
  GPU_CHECK("stream_wait_event", GPU(StreamWaitEvent)(stream.stream, event.event, 0));
  return nullptr;
}

hwinfer_error* GpuBackend::synchronize(hwinfer_event& event) {
  if (!event.recorded) return nullptr;
  GPU_RETURN_IF_ERROR(use_device(event.device, "event_synchronize"));
  GPU_CHECK("event_synchronize", GPU(EventSynchronize)(event.event));
  return nullptr;
}

hwinfer_error* GpuBackend::is_complete(hwinfer_event& event, bool* complete) {
  *complete = true;
  if (!event.recorded) return nullptr;
  GPU_RETURN_IF_ERROR(use_device(event.device, "event_query"));
  const gpuError_t result = GPU(EventQuery)(event.event);
  if (result == kErrorNotReady) {
    *complete = false;
    return nullptr;
  }
  GPU_CHECK("event_query", result);
  return nullptr;
}

hwinfer_error* GpuBackend::elapsed_ns(hwinfer_event& start, hwinfer_event& end, uint64_t* out) {
  if (!start.recorded || !end.recorded) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s event_elapsed_ns: both events must have been recorded",
                              kPluginName);
  }
  GPU_RETURN_IF_ERROR(use_device(start.device, "event_elapsed_ns"));
  float milliseconds = 0.0f;
  const gpuError_t result = GPU(EventElapsedTime)(&milliseconds, start.event, end.event);
  if (result == kErrorNotReady) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s event_elapsed_ns: an event has not completed yet", kPluginName);
  }
  GPU_CHECK("event_elapsed_ns", result);
  if (milliseconds < 0.0f) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s event_elapsed_ns: the end event was reached %.3f ms before "
                              "the start event",
                              kPluginName, static_cast<double>(-milliseconds));
  }
  *out = static_cast<uint64_t>(std::llround(static_cast<double>(milliseconds) * 1e6));
  return nullptr;
}

}  // namespace hwinfer::gpu
