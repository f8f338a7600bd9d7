// template_buffer.cpp — device memory: allocate, free, map, import host memory.
//
// TEMPLATE: replace `template` with your backend's name. The template's memory is host memory
// from posix_memalign, so both memory kinds are mappable and importing host memory is free.
// A discrete GPU allocates device-local memory for HWINFER_MEMORY_DEVICE (not mappable:
// buffer_map answers FAILED_PRECONDITION) and pinned host memory for HOST_VISIBLE.
#include <cstdint>
#include <cstdlib>
#include <new>

#include "template_internal.h"

namespace hwinfer_template {

hwinfer_error* check_buffer_range(const hwinfer_buffer* buffer, uint64_t offset, uint64_t size,
                                  const char* what) {
  // Written so it cannot overflow: offset + size might wrap around 2^64.
  if (offset > buffer->size_bytes || size > buffer->size_bytes - offset) {
    return hwinfer_make_error(
        HWINFER_STATUS_OUT_OF_RANGE,
        "%s: range [%llu, %llu + %llu) lies outside the %llu-byte buffer", what,
        static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset),
        static_cast<unsigned long long>(size), static_cast<unsigned long long>(buffer->size_bytes));
  }
  return nullptr;
}

hwinfer_error* buffer_alloc(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                            hwinfer_buffer** out) {
  if (device == nullptr || out == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "buffer_alloc: device and out must not be NULL");
  }
  if (size_bytes == 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "buffer_alloc: size_bytes is 0");
  }
  // Unknown enum values are UNSUPPORTED, never undefined behaviour: a newer host may pass a kind
  // this plugin predates.
  if (memory_kind != HWINFER_MEMORY_DEVICE && memory_kind != HWINFER_MEMORY_HOST_VISIBLE) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED, "buffer_alloc: unknown memory kind %u",
                              memory_kind);
  }
  // Enforce the limit device_get_info reports: asking the OS for more than exists might even
  // "succeed" under memory overcommit and fail later, far from the cause.
  if (device->max_allocation_bytes != 0 && size_bytes > device->max_allocation_bytes) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                              "buffer_alloc: %llu bytes exceed max_allocation_bytes (%llu)",
                              static_cast<unsigned long long>(size_bytes),
                              static_cast<unsigned long long>(device->max_allocation_bytes));
  }
  if constexpr (sizeof(size_t) < sizeof(uint64_t)) {  // 32-bit hosts only
    if (size_bytes > SIZE_MAX) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                "buffer_alloc: %llu bytes do not fit this process's address space",
                                static_cast<unsigned long long>(size_bytes));
    }
  }
  hwinfer_buffer* buffer = new (std::nothrow) hwinfer_buffer();
  if (buffer == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "buffer_alloc: out of memory");
  }
  // DRIVER: cuMemAlloc / vkAllocateMemory here, choosing the memory type by |memory_kind|.
  void* data = nullptr;
  if (posix_memalign(&data, 64, static_cast<size_t>(size_bytes)) != 0 || data == nullptr) {
    delete buffer;
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                              "buffer_alloc: could not allocate %llu bytes",
                              static_cast<unsigned long long>(size_bytes));
  }
  buffer->device = device;
  buffer->data = data;
  buffer->size_bytes = size_bytes;
  buffer->memory_kind = memory_kind;
  buffer->owns_data = true;
  device->live_buffers.fetch_add(1);
  *out = buffer;
  return nullptr;
}

void buffer_free(hwinfer_buffer* buffer) {
  if (buffer == nullptr) return;
  // The ABI makes the host wait for queued work that uses the buffer; with a synchronous stream
  // there never is any. DRIVER: cuMemFree / vkFreeMemory.
  if (buffer->owns_data) std::free(buffer->data);
  buffer->device->live_buffers.fetch_sub(1);
  delete buffer;
}

hwinfer_error* buffer_map(hwinfer_buffer* buffer, void** out_host_ptr) {
  if (buffer == nullptr || out_host_ptr == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "buffer_map: buffer and out_host_ptr must not be NULL");
  }
  // Host memory: always mappable, the pointer is valid until buffer_free. DRIVER: a device-local
  // buffer on a discrete GPU returns FAILED_PRECONDITION here instead.
  *out_host_ptr = buffer->data;
  return nullptr;
}

hwinfer_error* buffer_import_host(hwinfer_device* device, void* host_ptr, uint64_t size_bytes,
                                  hwinfer_buffer** out) {
  if (device == nullptr || host_ptr == nullptr || out == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "buffer_import_host: device, host_ptr and out must not be NULL");
  }
  if (size_bytes == 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "buffer_import_host: size_bytes is 0");
  }
  hwinfer_buffer* buffer = new (std::nothrow) hwinfer_buffer();
  if (buffer == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "buffer_import_host: out of memory");
  }
  // No copy: the buffer wraps the host's memory, which the host keeps alive and frees itself.
  // DRIVER: cuMemHostRegister / VK_EXT_external_memory_host, or leave the slot NULL.
  buffer->device = device;
  buffer->data = host_ptr;
  buffer->size_bytes = size_bytes;
  buffer->memory_kind = HWINFER_MEMORY_HOST_VISIBLE;
  buffer->owns_data = false;
  device->live_buffers.fetch_add(1);
  *out = buffer;
  return nullptr;
}

}  // namespace hwinfer_template
