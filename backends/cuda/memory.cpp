// memory.cpp — the GPU plugins' buffers: DEVICE memory from GPU(Malloc), HOST_VISIBLE memory from
// mapped pinned host memory (kernels and copies reach it through its device pointer, the host
// through buffer_map).
//
// Must not keep a cache of freed memory: the runtime's allocator is the one allocator.
#include <cinttypes>
#include <memory>

#include "gpu_internal.h"

namespace hwinfer::gpu {

namespace {

hwinfer_error* allocate(hwinfer_buffer* buffer, uint64_t size_bytes) {
  if (buffer->memory_kind == HWINFER_MEMORY_DEVICE) {
    void* pointer = nullptr;
    GPU_CHECK("buffer_alloc", GPU(Malloc)(&pointer, size_bytes));
    buffer->device_ptr = static_cast<uint8_t*>(pointer);
    return nullptr;
  }
  void* host = nullptr;
  GPU_CHECK("buffer_alloc", host_alloc(&host, size_bytes));
  void* device = nullptr;
  if (hwinfer_error* error = check_runtime(GPU(HostGetDevicePointer)(&device, host, 0),
                                           "buffer_alloc", "HostGetDevicePointer")) {
    (void)host_free(host);
    return error;
  }
  buffer->host_ptr = static_cast<uint8_t*>(host);
  buffer->device_ptr = static_cast<uint8_t*>(device);
  return nullptr;
}

}  // namespace

hwinfer_error* buffer_alloc(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                            hwinfer_buffer** out) {
  return guarded("buffer_alloc", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(device, "buffer_alloc: device"));
    GPU_RETURN_IF_ERROR(require_non_null(out, "buffer_alloc: out"));
    if (size_bytes == 0) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s buffer_alloc: size_bytes must be > 0", kPluginName);
    }
    if (memory_kind != HWINFER_MEMORY_DEVICE && memory_kind != HWINFER_MEMORY_HOST_VISIBLE) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "%s buffer_alloc: unknown memory kind %" PRIu32
                                " (the %s backend has DEVICE=0, HOST_VISIBLE=1)",
                                kPluginName, memory_kind, kPluginName);
    }
    GPU_RETURN_IF_ERROR(use_device(device, "buffer_alloc"));
    auto buffer = std::make_unique<hwinfer_buffer>();
    buffer->device = device;
    buffer->size_bytes = size_bytes;
    buffer->memory_kind = memory_kind;
    GPU_RETURN_IF_ERROR(allocate(buffer.get(), size_bytes));
    ++device->live_buffers;
    *out = buffer.release();
    return nullptr;
  });
}

void buffer_free(hwinfer_buffer* buffer) {
  if (buffer == nullptr) return;
  try {
    if (use_device(buffer->device, "buffer_free") == nullptr) {
      if (buffer->host_ptr != nullptr) {
        (void)host_free(buffer->host_ptr);
      } else {
        (void)GPU(Free)(buffer->device_ptr);
      }
    }
    --buffer->device->live_buffers;
    delete buffer;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

hwinfer_error* buffer_map(hwinfer_buffer* buffer, void** out_host_ptr) {
  return guarded("buffer_map", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(buffer, "buffer_map: buffer"));
    GPU_RETURN_IF_ERROR(require_non_null(out_host_ptr, "buffer_map: out_host_ptr"));
    if (buffer->host_ptr == nullptr) {
      return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                "%s buffer_map: this DEVICE buffer lives in GPU memory the host "
                                "cannot map; allocate HOST_VISIBLE memory or copy it",
                                kPluginName);
    }
    *out_host_ptr = buffer->host_ptr;
    return nullptr;
  });
}

}  // namespace hwinfer::gpu
