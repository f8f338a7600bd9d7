// event.cpp — the GPU plugins' events: one runtime event with timing each. A never-recorded event
// is complete, and waiting on it is a no-op (plugin.h); elapsed time comes from the runtime's
// device timestamps (resolution about half a microsecond). A capturing stream refuses event_record
// and stream_wait_event (plugin.h: graphs hold kernels and D2D copies only).
#include <cmath>
#include <memory>

#include "gpu_internal.h"

namespace hwinfer::gpu {

hwinfer_error* event_create(hwinfer_device* device, hwinfer_event** out) {
  return guarded("event_create", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(device, "event_create: device"));
    GPU_RETURN_IF_ERROR(require_non_null(out, "event_create: out"));
    GPU_RETURN_IF_ERROR(use_device(device, "event_create"));
    auto event = std::make_unique<hwinfer_event>();
    event->device = device;
    GPU_CHECK("event_create", GPU(EventCreate)(&event->event));
    ++device->live_events;
    *out = event.release();
    return nullptr;
  });
}

void event_destroy(hwinfer_event* event) {
  if (event == nullptr) return;
  try {
    if (use_device(event->device, "event_destroy") == nullptr) {
      (void)GPU(EventDestroy)(event->event);
    }
    --event->device->live_events;
    delete event;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

hwinfer_error* event_record(hwinfer_event* event, hwinfer_stream* stream) {
  return guarded("event_record", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(event, "event_record: event"));
    GPU_RETURN_IF_ERROR(require_non_null(stream, "event_record: stream"));
    GPU_RETURN_IF_ERROR(refuse_while_capturing(stream, "event_record"));
    if (event->device != stream->device) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s event_record: the event and the stream belong to different "
                                "devices",
                                kPluginName);
    }
    GPU_RETURN_IF_ERROR(use_device(stream->device, "event_record"));
    GPU_CHECK("event_record", GPU(EventRecord)(event->event, stream->stream));
    event->recorded = true;
    return nullptr;
  });
}

hwinfer_error* stream_wait_event(hwinfer_stream* stream, hwinfer_event* event) {
  return guarded("stream_wait_event", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(stream, "stream_wait_event: stream"));
    GPU_RETURN_IF_ERROR(require_non_null(event, "stream_wait_event: event"));
    GPU_RETURN_IF_ERROR(refuse_while_capturing(stream, "stream_wait_event"));
    if (event->device != stream->device) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s stream_wait_event: the event belongs to another device than "
                                "the stream (cross-device ordering goes through the host)",
                                kPluginName);
    }
    if (!event->recorded) return nullptr;
    GPU_RETURN_IF_ERROR(use_device(stream->device, "stream_wait_event"));
    GPU_CHECK("stream_wait_event", GPU(StreamWaitEvent)(stream->stream, event->event, 0));
    return nullptr;
  });
}

hwinfer_error* event_synchronize(hwinfer_event* event) {
  return guarded("event_synchronize", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(event, "event_synchronize: event"));
    if (!event->recorded) return nullptr;
    GPU_RETURN_IF_ERROR(use_device(event->device, "event_synchronize"));
    GPU_CHECK("event_synchronize", GPU(EventSynchronize)(event->event));
    return nullptr;
  });
}

hwinfer_error* event_query(hwinfer_event* event, uint32_t* out_complete) {
  return guarded("event_query", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(event, "event_query: event"));
    GPU_RETURN_IF_ERROR(require_non_null(out_complete, "event_query: out_complete"));
    if (!event->recorded) {
      *out_complete = 1;
      return nullptr;
    }
    GPU_RETURN_IF_ERROR(use_device(event->device, "event_query"));
    const gpuError_t result = GPU(EventQuery)(event->event);
    if (result == kErrorNotReady) {
      *out_complete = 0;
      return nullptr;
    }
    GPU_CHECK("event_query", result);
    *out_complete = 1;
    return nullptr;
  });
}

hwinfer_error* event_elapsed_ns(hwinfer_event* start, hwinfer_event* end,
                                uint64_t* out_elapsed_ns) {
  return guarded("event_elapsed_ns", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(start, "event_elapsed_ns: start"));
    GPU_RETURN_IF_ERROR(require_non_null(end, "event_elapsed_ns: end"));
    GPU_RETURN_IF_ERROR(require_non_null(out_elapsed_ns, "event_elapsed_ns: out_elapsed_ns"));
    if (!start->recorded || !end->recorded) {
      return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                "%s event_elapsed_ns: both events must have been recorded",
                                kPluginName);
    }
    GPU_RETURN_IF_ERROR(use_device(start->device, "event_elapsed_ns"));
    float milliseconds = 0.0f;
    const gpuError_t result = GPU(EventElapsedTime)(&milliseconds, start->event, end->event);
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
    *out_elapsed_ns = static_cast<uint64_t>(std::llround(static_cast<double>(milliseconds) * 1e6));
    return nullptr;
  });
}

}  // namespace hwinfer::gpu
