// stream.cpp — streams: a command pool and a timeline semaphore per stream, on the device's one
// queue. Every enqueue records one command buffer (dispatch.h's Recording) and submits it at once,
// signalling the next timeline value; finished submissions are retired (command buffers, staging
// and descriptor pools freed) on the next enqueue or synchronize.
//
// Copies: H2D copies the host bytes into a fresh host-visible staging buffer at enqueue (so the
// caller's memory is free at once) and records vkCmdCopyBuffer; the staging lives until the copy
// has run. D2H is asynchronous too: it records a copy into a staging buffer and returns; the
// staging bytes reach the host pointer when the host next synchronizes (the stream, or an event
// recorded after the copy on any stream of the device) or enqueues, once the copy has run
// (finish_host_copies). D2D is one vkCmdCopyBuffer.
//
// Must be called for one stream from one thread at a time (plugin.h); must not block except in
// synchronize and destroy.
#include <cinttypes>
#include <cstring>
#include <memory>

#include "dispatch.h"
#include "vk_internal.h"

namespace hwinfer::vulkan {

namespace {

void remember(hwinfer_stream* stream, hwinfer_error* error);

// Frees every submission the GPU has passed, after turning its set error words into the stream's
// pending error (Recording::error_word).
void retire(hwinfer_stream* stream) {
  finish_host_copies(stream->device);
  if (stream->in_flight.empty()) return;
  uint64_t reached = 0;
  const VkResult result = stream->device->fn.vkGetSemaphoreCounterValue(
      stream->device->device, stream->timeline->semaphore, &reached);
  if (result != VK_SUCCESS) return;
  while (!stream->in_flight.empty() && stream->in_flight.front().value <= reached) {
    for (const auto& [word, message] : stream->in_flight.front().error_words) {
      uint32_t value = 0;
      std::memcpy(&value, word->mapped, sizeof(value));
      if (value != 0) {
        remember(stream, hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s: %s", kPluginName,
                                            message));
      }
    }
    release_submission(stream, stream->in_flight.front());
    stream->in_flight.pop_front();
  }
}

// Records the first error found while running (returned by the next synchronize).
void remember(hwinfer_stream* stream, hwinfer_error* error) {
  if (stream->pending_error == nullptr) {
    stream->pending_error = error;
  } else {
    error->destroy(error);
  }
}

}  // namespace

void finish_host_copies(hwinfer_device* device, bool discard) {
  std::lock_guard<std::mutex> lock(device->host_copy_mutex);
  for (auto it = device->host_copies.begin(); it != device->host_copies.end();) {
    uint64_t reached = 0;
    if (!discard && device->fn.vkGetSemaphoreCounterValue(device->device, it->timeline->semaphore,
                                                          &reached) != VK_SUCCESS) {
      reached = 0;
    }
    if (!discard && reached < it->value) {
      ++it;
      continue;
    }
    if (!discard) std::memcpy(it->dst, it->staging->mapped, it->size_bytes);
    release_buffer(it->staging);
    it = device->host_copies.erase(it);
  }
}

// Blocks until |semaphore| reaches |value|; device loss and the like become an error.
Timeline::~Timeline() {
  if (semaphore != VK_NULL_HANDLE)
    device->fn.vkDestroySemaphore(device->device, semaphore, nullptr);
}

hwinfer_error* wait_timeline(hwinfer_device* device, VkSemaphore semaphore, uint64_t value,
                             const char* what) {
  VkSemaphoreWaitInfo wait{};
  wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wait.semaphoreCount = 1;
  wait.pSemaphores = &semaphore;
  wait.pValues = &value;
  const VkResult result = device->fn.vkWaitSemaphores(device->device, &wait, UINT64_MAX);
  return result == VK_SUCCESS ? nullptr : vk_error(result, what, "vkWaitSemaphores");
}

hwinfer_error* VulkanBackend::init_stream(hwinfer_device& device, hwinfer_stream& stream) {
  const DeviceFunctions& fn = device.fn;
  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool.queueFamilyIndex = device.physical->queue_family;
  VkResult result = fn.vkCreateCommandPool(device.device, &pool, nullptr, &stream.command_pool);
  if (result != VK_SUCCESS) return vk_error(result, "stream_create", "vkCreateCommandPool");
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo semaphore{};
  semaphore.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  semaphore.pNext = &type;
  stream.timeline = std::make_shared<Timeline>();
  stream.timeline->device = &device;
  result = fn.vkCreateSemaphore(device.device, &semaphore, nullptr, &stream.timeline->semaphore);
  if (result != VK_SUCCESS) {
    stream.timeline->semaphore = VK_NULL_HANDLE;
    fn.vkDestroyCommandPool(device.device, stream.command_pool, nullptr);
    return vk_error(result, "stream_create", "vkCreateSemaphore");
  }
  return nullptr;
}

hwinfer_error* VulkanBackend::synchronize(hwinfer_stream& stream) {
  if (hwinfer_error* error = flush(&stream)) remember(&stream, error);
  if (stream.submitted > 0) {
    if (hwinfer_error* error = wait_timeline(stream.device, stream.timeline->semaphore,
                                             stream.submitted, "stream_synchronize")) {
      remember(&stream, error);
    }
  }
  // Event waits not yet followed by work are part of the stream too: the host waits for them.
  for (const auto& [timeline, value] : stream.pending_waits) {
    if (hwinfer_error* error =
            wait_timeline(stream.device, timeline->semaphore, value, "stream_synchronize")) {
      remember(&stream, error);
    }
  }
  stream.pending_waits.clear();
  retire(&stream);
  hwinfer_error* error = stream.pending_error;
  stream.pending_error = nullptr;
  return error;
}

void VulkanBackend::destroy_stream(hwinfer_stream& stream) {
  if (hwinfer_error* error = synchronize(stream)) error->destroy(error);
  hwinfer_device* device = stream.device;
  for (Submission& submission : stream.pending) release_submission(&stream, submission);
  stream.pending.clear();           // left only when a flush failed
  if (!stream.in_flight.empty()) {  // the wait failed: make sure nothing runs any more
    device->fn.vkDeviceWaitIdle(device->device);
    for (Submission& submission : stream.in_flight) release_submission(&stream, submission);
    stream.in_flight.clear();
    finish_host_copies(device);
  }
  stream.pending_waits.clear();
  stream.timeline.reset();  // destroyed here unless an event still refers to it
  device->fn.vkDestroyCommandPool(device->device, stream.command_pool, nullptr);
}

hwinfer_error* VulkanBackend::copy_h2d(hwinfer_stream& stream, const void* src, hwinfer_buffer& dst,
                                       uint64_t dst_offset, uint64_t size_bytes) {
  retire(&stream);
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("copy_h2d"));
  hwinfer_buffer* staging = nullptr;
  HWINFER_KIT_RETURN_IF_ERROR(
      recording.transient(size_bytes, HWINFER_MEMORY_HOST_VISIBLE, &staging));
  std::memcpy(staging->mapped, src, size_bytes);
  VkBufferCopy region{0, dst_offset, size_bytes};
  recording.fn().vkCmdCopyBuffer(recording.command_buffer(), staging->buffer, dst.buffer, 1,
                                 &region);
  return recording.submit();
}

hwinfer_error* VulkanBackend::copy_d2h(hwinfer_stream& stream, hwinfer_buffer& src,
                                       uint64_t src_offset, void* dst, uint64_t size_bytes) {
  retire(&stream);
  hwinfer_buffer* staging = nullptr;
  HWINFER_KIT_RETURN_IF_ERROR(
      allocate_buffer(stream.device, size_bytes, HWINFER_MEMORY_HOST_VISIBLE, &staging));
  Recording recording(&stream);
  hwinfer_error* error = recording.begin("copy_d2h");
  if (error == nullptr) {
    VkBufferCopy region{src_offset, 0, size_bytes};
    recording.fn().vkCmdCopyBuffer(recording.command_buffer(), src.buffer, staging->buffer, 1,
                                   &region);
    error = recording.submit();
  }
  if (error == nullptr) error = flush(&stream);  // the copy's timeline value is known now
  if (error != nullptr) {
    release_buffer(staging);
    return error;
  }
  // The host's half runs once the timeline passes stream.submitted (finish_host_copies).
  std::lock_guard<std::mutex> lock(stream.device->host_copy_mutex);
  stream.device->host_copies.push_back(
      HostCopy{stream.timeline, stream.submitted, staging, dst, size_bytes});
  return nullptr;
}

hwinfer_error* VulkanBackend::copy_d2d(hwinfer_stream& stream, hwinfer_buffer& src,
                                       uint64_t src_offset, hwinfer_buffer& dst,
                                       uint64_t dst_offset, uint64_t size_bytes) {
  retire(&stream);
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("copy_d2d"));
  VkBufferCopy region{src_offset, dst_offset, size_bytes};
  recording.fn().vkCmdCopyBuffer(recording.command_buffer(), src.buffer, dst.buffer, 1, &region);
  return recording.submit();
}

}  // namespace hwinfer::vulkan
