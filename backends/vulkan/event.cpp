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

// The timestamps of both events, in ticks masked to the valid bits.
hwinfer_error* read_ticks(const hwinfer_event& start, const hwinfer_event& end, uint64_t ticks[2]) {
  hwinfer_device* device = start.device;
  for (int i = 0; i < 2; ++i) {
    const hwinfer_event& event = i == 0 ? start : end;
    const VkResult result = device->fn.vkGetQueryPoolResults(
        device->device, event.query_pool, 0, 1, sizeof(uint64_t), &ticks[i], sizeof(uint64_t),
        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (result != VK_SUCCESS) return vk_error(result, "event_elapsed_ns", "vkGetQueryPoolResults");
  }
  const uint32_t bits = device->physical->timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  ticks[0] &= mask;
  ticks[1] &= mask;
  return nullptr;
}

}  // namespace

hwinfer_error* VulkanBackend::init_event(hwinfer_device& device, hwinfer_event& event) {
  if (device.physical->timestamp_valid_bits == 0) return nullptr;
  VkQueryPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  pool.queryType = VK_QUERY_TYPE_TIMESTAMP;
  pool.queryCount = 1;
  const VkResult result =
      device.fn.vkCreateQueryPool(device.device, &pool, nullptr, &event.query_pool);
  return result == VK_SUCCESS ? nullptr : vk_error(result, "event_create", "vkCreateQueryPool");
}

void VulkanBackend::destroy_event(hwinfer_event& event) {
  hwinfer_device* device = event.device;
  if (hwinfer_error* error = wait_recorded(&event, "event_destroy")) error->destroy(error);
  if (event.query_pool != VK_NULL_HANDLE) {
    device->fn.vkDestroyQueryPool(device->device, event.query_pool, nullptr);
  }
  event.timeline.reset();
}

hwinfer_error* VulkanBackend::record(hwinfer_event& event, hwinfer_stream& stream) {
  // A re-record must not reset the query while an earlier record may still write it.
  HWINFER_KIT_RETURN_IF_ERROR(wait_recorded(&event, "event_record"));
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("event_record"));
  if (event.query_pool != VK_NULL_HANDLE) {
    recording.fn().vkCmdResetQueryPool(recording.command_buffer(), event.query_pool, 0, 1);
    recording.fn().vkCmdWriteTimestamp(recording.command_buffer(),
                                       VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, event.query_pool, 0);
  }
  HWINFER_KIT_RETURN_IF_ERROR(recording.submit());
  HWINFER_KIT_RETURN_IF_ERROR(flush(&stream));  // the event completes by itself
  event.timeline = stream.timeline;
  event.value = stream.submitted;
  return nullptr;
}

hwinfer_error* VulkanBackend::wait(hwinfer_stream& stream, hwinfer_event& event) {
  if (event.value == 0) return nullptr;  // never recorded: a no-op
  // Work enqueued before the wait must not wait: submit it first.
  HWINFER_KIT_RETURN_IF_ERROR(flush(&stream));
  stream.pending_waits.emplace_back(event.timeline, event.value);
  return nullptr;
}

hwinfer_error* VulkanBackend::synchronize(hwinfer_event& event) {
  HWINFER_KIT_RETURN_IF_ERROR(wait_recorded(&event, "event_synchronize"));
  finish_host_copies(event.device);  // D2H copies the event's point covers reach the host
  return nullptr;
}

hwinfer_error* VulkanBackend::is_complete(hwinfer_event& event, bool* complete) {
  *complete = event.value == 0 || reached(&event);
  if (*complete) finish_host_copies(event.device);
  return nullptr;
}

hwinfer_error* VulkanBackend::elapsed_ns(hwinfer_event& start, hwinfer_event& end, uint64_t* out) {
  if (start.value == 0 || end.value == 0 || !reached(&start) || !reached(&end)) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "vulkan event_elapsed_ns: both events must be recorded and "
                              "complete");
  }
  if (start.query_pool == VK_NULL_HANDLE) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan event_elapsed_ns: the device's compute queue has no "
                              "timestamps (timestampValidBits = 0)");
  }
  uint64_t ticks[2] = {};
  HWINFER_KIT_RETURN_IF_ERROR(read_ticks(start, end, ticks));
  if (ticks[1] < ticks[0]) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "vulkan event_elapsed_ns: the end event was reached before the "
                              "start event");
  }
  *out = static_cast<uint64_t>(static_cast<double>(ticks[1] - ticks[0]) *
                               static_cast<double>(start.device->physical->timestamp_period_ns));
  return nullptr;
}

}  // namespace hwinfer::vulkan
