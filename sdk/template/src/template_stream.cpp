// template_stream.cpp — the stream and its events. The template's stream runs each copy and kernel
// at once, inside the enqueue call, which trivially keeps the ABI's promise that a stream runs in
// order; so an event is complete when it is recorded, and its timestamp is taken then.
//
// TEMPLATE: DRIVER: a real backend queues the work (cuMemcpyAsync, vkCmdCopyBuffer), records
// driver events (cuEventRecord, timestamp queries) and waits in synchronize. Errors found while
// work runs are returned by the next synchronize.
#include <chrono>
#include <cinttypes>
#include <cstring>

#include "template_backend.h"

namespace hwinfer_template {

hwinfer_error* TemplateBackend::synchronize(hwinfer_stream&) {
  return nullptr;  // everything already ran
}

hwinfer_error* TemplateBackend::submit_copy(hwinfer_stream&, uint8_t* dst, const uint8_t* src,
                                            size_t size) {
  std::memmove(dst, src, size);  // memmove: an imported host pointer may alias a buffer
  return nullptr;
}

hwinfer_error* TemplateBackend::record(hwinfer_event& event, hwinfer_stream&) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  event.timestamp_ns =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
  event.recorded = true;
  return nullptr;
}

hwinfer_error* TemplateBackend::wait(hwinfer_stream&, hwinfer_event&) {
  return nullptr;  // what the event marks has run already
}

hwinfer_error* TemplateBackend::synchronize(hwinfer_event&) { return nullptr; }

hwinfer_error* TemplateBackend::is_complete(hwinfer_event&, bool* complete) {
  *complete = true;  // never recorded counts as complete (plugin.h)
  return nullptr;
}

hwinfer_error* TemplateBackend::elapsed_ns(hwinfer_event& start, hwinfer_event& end,
                                           uint64_t* out) {
  if (!start.recorded || !end.recorded) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "template event_elapsed_ns: the %s event was never recorded",
                              start.recorded ? "end" : "start");
  }
  if (end.timestamp_ns < start.timestamp_ns) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "template event_elapsed_ns: the end event was recorded %" PRIu64
                              " ns before the start event",
                              start.timestamp_ns - end.timestamp_ns);
  }
  *out = end.timestamp_ns - start.timestamp_ns;
  return nullptr;
}

}  // namespace hwinfer_template
