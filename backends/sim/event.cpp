// event.cpp — events on the virtual timeline. Work is synchronous, so an event is complete as soon
// as it is recorded; its timestamp is the stream's virtual cursor (ns), not a real clock.
// event_elapsed_ns is the virtual difference, rounded to whole ns; stream_wait_event moves the
// waiting stream's cursor up to the event's time (a stream cannot run before what it waits on).
#include <cmath>
#include <cstdint>

#include "sim_internal.h"

namespace hwinfer::sim {

hwinfer_error* SimBackend::record(hwinfer_event& event, hwinfer_stream& stream) {
  event.recorded = true;
  event.time_ns = stream.now_ns;
  return nullptr;
}

hwinfer_error* SimBackend::wait(hwinfer_stream& stream, hwinfer_event& event) {
  if (!event.recorded) return nullptr;  // waiting on a never-recorded event is a no-op
  if (event.time_ns > stream.now_ns) advance_clock(&stream, event.time_ns - stream.now_ns);
  return nullptr;
}

hwinfer_error* SimBackend::synchronize(hwinfer_event&) {
  return nullptr;  // always complete
}

hwinfer_error* SimBackend::is_complete(hwinfer_event&, bool* complete) {
  *complete = true;
  return nullptr;
}

hwinfer_error* SimBackend::elapsed_ns(hwinfer_event& start, hwinfer_event& end, uint64_t* out) {
  if (!start.recorded || !end.recorded) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "sim event_elapsed_ns: the %s event was never recorded",
                              start.recorded ? "end" : "start");
  }
  if (end.time_ns < start.time_ns) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "sim event_elapsed_ns: the end event (%.0f ns) was reached before "
                              "the start event (%.0f ns) on the virtual clock",
                              end.time_ns, start.time_ns);
  }
  *out = static_cast<uint64_t>(std::llround(end.time_ns - start.time_ns));
  return nullptr;
}

}  // namespace hwinfer::sim
