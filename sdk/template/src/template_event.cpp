// template_event.cpp — events: points in a stream that carry a device timestamp.
//
// TEMPLATE: replace `template` with your backend's name. Because a template stream has finished
// everything by the time an enqueue returns, "the stream reaches the event" happens during
// event_record itself: the event completes at once and takes its timestamp (steady_clock, in ns)
// there. Waiting on an event therefore never has to block. DRIVER: cuEventRecord /
// vkCmdWriteTimestamp; event_elapsed_ns reads the two device timestamps back.
#include <chrono>
#include <new>

#include "template_internal.h"

namespace hwinfer_template {
namespace {

uint64_t now_ns() {
  const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count();
  // 0 means "never recorded" in hwinfer_event, so a timestamp is at least 1.
  return ns > 0 ? static_cast<uint64_t>(ns) : 1u;
}

}  // namespace

hwinfer_error* event_create(hwinfer_device* device, hwinfer_event** out) {
  if (device == nullptr || out == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "event_create: device and out must not be NULL");
  }
  hwinfer_event* event = new (std::nothrow) hwinfer_event();
  if (event == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "event_create: out of memory");
  }
  event->device = device;
  device->live_events.fetch_add(1);
  *out = event;
  return nullptr;
}

void event_destroy(hwinfer_event* event) {
  if (event == nullptr) return;
  event->device->live_events.fetch_sub(1);
  delete event;
}

hwinfer_error* event_record(hwinfer_event* event, hwinfer_stream* stream) {
  if (event == nullptr || stream == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "event_record: event and stream must not be NULL");
  }
  if (event->device != stream->device) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "event_record: the event and the stream belong to different devices");
  }
  // Re-recording resets the event: simply overwrite the timestamp.
  event->timestamp_ns.store(now_ns());
  return nullptr;
}

hwinfer_error* stream_wait_event(hwinfer_stream* stream, hwinfer_event* event) {
  if (stream == nullptr || event == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "stream_wait_event: stream and event must not be NULL");
  }
  if (event->device->plugin != stream->device->plugin) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "stream_wait_event: the event belongs to another plugin instance");
  }
  // Every recorded event has already completed, and waiting on a never-recorded event is a no-op,
  // so there is nothing to wait for. DRIVER: cuStreamWaitEvent / a semaphore wait.
  return nullptr;
}

hwinfer_error* event_synchronize(hwinfer_event* event) {
  if (event == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "event_synchronize: event is NULL");
  }
  return nullptr;  // already complete (see stream_wait_event)
}

hwinfer_error* event_query(hwinfer_event* event, uint32_t* out_complete) {
  if (event == nullptr || out_complete == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "event_query: event and out_complete must not be NULL");
  }
  *out_complete = 1;  // recorded events are complete; never-recorded ones count as complete too
  return nullptr;
}

hwinfer_error* event_elapsed_ns(hwinfer_event* start, hwinfer_event* end,
                                uint64_t* out_elapsed_ns) {
  if (start == nullptr || end == nullptr || out_elapsed_ns == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "event_elapsed_ns: start, end and out_elapsed_ns must not be NULL");
  }
  if (start->device != end->device) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "event_elapsed_ns: the events belong to different devices");
  }
  const uint64_t start_ns = start->timestamp_ns.load();
  const uint64_t end_ns = end->timestamp_ns.load();
  if (start_ns == 0 || end_ns == 0) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "event_elapsed_ns: the %s event was never recorded",
                              start_ns == 0 ? "start" : "end");
  }
  if (end_ns < start_ns) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "event_elapsed_ns: the end event was recorded before the start "
                              "event (arguments swapped?)");
  }
  *out_elapsed_ns = end_ns - start_ns;
  return nullptr;
}

}  // namespace hwinfer_template
