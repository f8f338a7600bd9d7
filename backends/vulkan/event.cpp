// event.cpp — events: an event is a (stream timeline, value) pair plus one timestamp query.
// event_record submits a command buffer that, after everything before it on the stream (the
// leading barrier), resets the query and writes a bottom-of-pipe timestamp, and signals the
// stream's next timeline value; the event keeps a reference to that timeline (so it stays valid
// after the stream is destroyed). Waits, queries and synchronization compare the timeline with the
// value, exactly as stream_synchronize does, so a synchronized stream's events are complete.
//
// Must not block in event_query; event_destroy waits for a pending record to finish before it
// frees the query pool the GPU writes. A completed synchronize or query also lands the pending D2H
// copies it covers (stream.cpp, finish_host_copies).
#include <cinttypes>
#include <memory>

#include "dispatch.h"
#include "vk_internal.h"

namespace hwinfer::vulkan {

namespace {

bool reached(const hwinfer_event* event) {
  uint64_t value = 0;
  const VkResult result = event->device->fn.vkGetSemaphoreCounterValue(
      event->device->device, event->timeline->semaphore, &value);
  return result == VK_SUCCESS && value >= event->value;
}

// Waits until the event's last record has run (no-op when never recorded).
hwinfer_error* wait_recorded(hwinfer_event* event, const char* what) {
  if (event->value == 0) return nullptr;
  return wait_timeline(event->device, event->timeline->semaphore, event->value, what);
}

}  // namespace

hwinfer_error* event_create(hwinfer_device* device, hwinfer_event** out) {
  return guarded("event_create", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(device, "event_create: device")) return error;
    if (hwinfer_error* error = require_non_null(out, "event_create: out")) return error;
    auto event = std::make_unique<hwinfer_event>();
    event->device = device;
    if (device->physical->timestamp_valid_bits > 0) {
      VkQueryPoolCreateInfo pool{};
      pool.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
      pool.queryType = VK_QUERY_TYPE_TIMESTAMP;
      pool.queryCount = 1;
      const VkResult result =
          device->fn.vkCreateQueryPool(device->device, &pool, nullptr, &event->query_pool);
      if (result != VK_SUCCESS) return vk_error(result, "event_create", "vkCreateQueryPool");
    }
    device->live_events.fetch_add(1);
    *out = event.release();
    return nullptr;
  });
}

void event_destroy(hwinfer_event* event) {
  if (event == nullptr) return;
  try {
    hwinfer_device* device = event->device;
    if (hwinfer_error* error = wait_recorded(event, "event_destroy")) error->destroy(error);
    if (event->query_pool != VK_NULL_HANDLE) {
      device->fn.vkDestroyQueryPool(device->device, event->query_pool, nullptr);
    }
    event->timeline.reset();
    device->live_events.fetch_sub(1);
    delete event;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

hwinfer_error* event_record(hwinfer_event* event, hwinfer_stream* stream) {
  return guarded("event_record", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(event, "event_record: event")) return error;
    if (hwinfer_error* error = require_non_null(stream, "event_record: stream")) return error;
    if (event->device != stream->device) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "vulkan event_record: the event and the stream belong to "
                                "different devices");
    }
    // A re-record must not reset the query while an earlier record may still write it.
    if (hwinfer_error* error = wait_recorded(event, "event_record")) return error;
    Recording recording(stream);
    if (hwinfer_error* error = recording.begin("event_record")) return error;
    if (event->query_pool != VK_NULL_HANDLE) {
      recording.fn().vkCmdResetQueryPool(recording.command_buffer(), event->query_pool, 0, 1);
      recording.fn().vkCmdWriteTimestamp(
          recording.command_buffer(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, event->query_pool, 0);
    }
    if (hwinfer_error* error = recording.submit()) return error;
    if (hwinfer_error* error = flush(stream)) return error;  // the event completes by itself
    event->timeline = stream->timeline;
    event->value = stream->submitted;
    return nullptr;
  });
}

hwinfer_error* stream_wait_event(hwinfer_stream* stream, hwinfer_event* event) {
  return guarded("stream_wait_event", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "stream_wait_event: stream")) return error;
    if (hwinfer_error* error = require_non_null(event, "stream_wait_event: event")) return error;
    if (event->device != stream->device) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "vulkan stream_wait_event: cross-device waits go through the "
                                "host (event_synchronize)");
    }
    if (event->value == 0) return nullptr;  // never recorded: a no-op
    // Work enqueued before the wait must not wait: submit it first.
    if (hwinfer_error* error = flush(stream)) return error;
    stream->pending_waits.emplace_back(event->timeline, event->value);
    return nullptr;
  });
}

hwinfer_error* event_synchronize(hwinfer_event* event) {
  return guarded("event_synchronize", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(event, "event_synchronize: event")) return error;
    if (hwinfer_error* error = wait_recorded(event, "event_synchronize")) return error;
    finish_host_copies(event->device);  // D2H copies the event's point covers reach the host
    return nullptr;
  });
}

hwinfer_error* event_query(hwinfer_event* event, uint32_t* out_complete) {
  return guarded("event_query", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(event, "event_query: event")) return error;
    if (hwinfer_error* error = require_non_null(out_complete, "event_query: out_complete")) {
      return error;
    }
    *out_complete = event->value == 0 || reached(event) ? 1u : 0u;
    if (*out_complete != 0) finish_host_copies(event->device);
    return nullptr;
  });
}

hwinfer_error* event_elapsed_ns(hwinfer_event* start, hwinfer_event* end,
                                uint64_t* out_elapsed_ns) {
  return guarded("event_elapsed_ns", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(start, "event_elapsed_ns: start")) return error;
    if (hwinfer_error* error = require_non_null(end, "event_elapsed_ns: end")) return error;
    if (hwinfer_error* error = require_non_null(out_elapsed_ns, "event_elapsed_ns: out")) {
      return error;
    }
    if (start->device != end->device) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "vulkan event_elapsed_ns: the events belong to different devices");
    }
    if (start->value == 0 || end->value == 0 || !reached(start) || !reached(end)) {
      return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                "vulkan event_elapsed_ns: both events must be recorded and "
                                "complete");
    }
    if (start->query_pool == VK_NULL_HANDLE) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "vulkan event_elapsed_ns: the device's compute queue has no "
                                "timestamps (timestampValidBits = 0)");
    }
    hwinfer_device* device = start->device;
    uint64_t ticks[2] = {};
    for (int i = 0; i < 2; ++i) {
      const hwinfer_event* event = i == 0 ? start : end;
      const VkResult result = device->fn.vkGetQueryPoolResults(
          device->device, event->query_pool, 0, 1, sizeof(uint64_t), &ticks[i], sizeof(uint64_t),
          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      if (result != VK_SUCCESS) {
        return vk_error(result, "event_elapsed_ns", "vkGetQueryPoolResults");
      }
    }
    const uint32_t bits = device->physical->timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint64_t begin = ticks[0] & mask;
    const uint64_t finish = ticks[1] & mask;
    if (finish < begin) {
      return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                "vulkan event_elapsed_ns: the end event was reached before the "
                                "start event");
    }
    *out_elapsed_ns =
        static_cast<uint64_t>(static_cast<double>(finish - begin) *
                              static_cast<double>(device->physical->timestamp_period_ns));
    return nullptr;
  });
}

}  // namespace hwinfer::vulkan
