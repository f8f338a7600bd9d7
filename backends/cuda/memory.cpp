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

hwinfer_error* allocate_memory(hwinfer_buffer* buffer, uint64_t size_bytes) {
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

hwinfer_error* GpuBackend::allocate(hwinfer_device& device, hwinfer_buffer& buffer) {
  GPU_RETURN_IF_ERROR(use_device(&device, "buffer_alloc"));
  return allocate_memory(&buffer, buffer.size_bytes);
}

void GpuBackend::release(hwinfer_buffer& buffer) {
  if (!use_device_quietly(buffer.device, "buffer_free")) return;
  if (buffer.host_ptr != nullptr) {
    (void)host_free(buffer.host_ptr);
  } else {
    (void)GPU(Free)(buffer.device_ptr);
  }
}

hwinfer_error* GpuBackend::map(hwinfer_buffer& buffer, void** out_host_ptr) {
  if (buffer.host_ptr == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s buffer_map: this DEVICE buffer lives in GPU memory the host "
                              "cannot map; allocate HOST_VISIBLE memory or copy it",
                              kPluginName);
  }
  *out_host_ptr = buffer.host_ptr;
  return nullptr;
}

}  // namespace hwinfer::gpu
