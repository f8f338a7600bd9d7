// event.cpp — events on the virtual timeline. Work is synchronous, so an event is complete as soon
// as it is recorded; its timestamp is the stream's virtual cursor (ns), not a real clock.
// event_elapsed_ns is the virtual difference, rounded to whole ns; stream_wait_event moves the
// waiting stream's cursor up to the event's time (a stream cannot run before what it waits on).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim_internal.h"

namespace hwinfer::sim {

hwinfer_error* event_create(hwinfer_device* device, hwinfer_event** out) {
  return guarded("event_create", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(device, "event_create: device")) return error;
    if (hwinfer_error* error = require_non_null(out, "event_create: out")) return error;
    auto* event = new hwinfer_event;
    event->device = device;
    device->live_events.fetch_add(1);
    *out = event;
    return nullptr;
  });
}

void event_destroy(hwinfer_event* event) {
  if (event == nullptr) return;
  event->device->live_events.fetch_sub(1);
  delete event;
}

hwinfer_error* event_record(hwinfer_event* event, hwinfer_stream* stream) {
  if (hwinfer_error* error = require_non_null(event, "event_record: event")) return error;
  if (hwinfer_error* error = require_non_null(stream, "event_record: stream")) return error;
  if (event->device != stream->device) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim event_record: the event and the stream belong to different "
                              "devices");
  }
  event->recorded = true;
  event->time_ns = stream->now_ns;
  return nullptr;
}

hwinfer_error* stream_wait_event(hwinfer_stream* stream, hwinfer_event* event) {
  if (hwinfer_error* error = require_non_null(stream, "stream_wait_event: stream")) return error;
  if (hwinfer_error* error = require_non_null(event, "stream_wait_event: event")) return error;
  if (event->device != stream->device) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim stream_wait_event: the event belongs to another device "
                              "(cross-device ordering goes through the host)");
  }
  if (!event->recorded) return nullptr;  // waiting on a never-recorded event is a no-op
  if (event->time_ns > stream->now_ns) advance_clock(stream, event->time_ns - stream->now_ns);
  return nullptr;
}

hwinfer_error* event_synchronize(hwinfer_event* event) {
  return require_non_null(event, "event_synchronize: event");  // always complete
}

hwinfer_error* event_query(hwinfer_event* event, uint32_t* out_complete) {
  if (hwinfer_error* error = require_non_null(event, "event_query: event")) return error;
  if (hwinfer_error* error = require_non_null(out_complete, "event_query: out_complete")) {
    return error;
  }
  *out_complete = 1;
  return nullptr;
}

hwinfer_error* event_elapsed_ns(hwinfer_event* start, hwinfer_event* end,
                                uint64_t* out_elapsed_ns) {
  if (hwinfer_error* error = require_non_null(start, "event_elapsed_ns: start")) return error;
  if (hwinfer_error* error = require_non_null(end, "event_elapsed_ns: end")) return error;
  if (hwinfer_error* error = require_non_null(out_elapsed_ns, "event_elapsed_ns: out")) {
    return error;
  }
  if (!start->recorded || !end->recorded) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "sim event_elapsed_ns: the %s event was never recorded",
                              start->recorded ? "end" : "start");
  }
  if (end->time_ns < start->time_ns) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "sim event_elapsed_ns: the end event (%.0f ns) was reached before "
                              "the start event (%.0f ns) on the virtual clock",
                              end->time_ns, start->time_ns);
  }
  *out_elapsed_ns = static_cast<uint64_t>(std::llround(end->time_ns - start->time_ns));
  return nullptr;
}

}  // namespace hwinfer::sim
