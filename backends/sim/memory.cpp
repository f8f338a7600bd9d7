// memory.cpp — buffers of a simulated device. A buffer of at most backed_limit_bytes is backed by
// zero-initialised, page-aligned host memory from an anonymous mapping (copies and kernels really
// move its bytes, and it maps); pages are only materialised when touched, and the kernels touch
// one element per row, so a multi-GiB activation or KV buffer costs little host memory. A bigger
// one is VIRTUAL: only its size exists, so a model far larger than this machine's memory can be
// "placed"; copies into it are accepted and ignored, reads from it give zeros, kernels skip it, and
// it does not map (UNSUPPORTED).
//
// Every buffer counts against the device's memory_total (OUT_OF_MEMORY past it), backed or not.
#include <sys/mman.h>

#include <cinttypes>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "sim_internal.h"

namespace hwinfer::sim {

namespace {}  // namespace

hwinfer_error* buffer_alloc(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                            hwinfer_buffer** out) {
  return guarded("buffer_alloc", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(device, "buffer_alloc: device")) return error;
    if (hwinfer_error* error = require_non_null(out, "buffer_alloc: out")) return error;
    if (size_bytes == 0) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "sim buffer_alloc: size_bytes must be > 0");
    }
    if (memory_kind != HWINFER_MEMORY_DEVICE && memory_kind != HWINFER_MEMORY_HOST_VISIBLE) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "sim buffer_alloc: unknown memory kind %" PRIu32
                                " (the sim device has DEVICE=0 and HOST_VISIBLE=1)",
                                memory_kind);
    }
    hwinfer_plugin* plugin = device->plugin;
    const uint64_t total = plugin->memory_total_bytes;
    // Reserve the bytes first, so two threads cannot both pass the check.
    {
      std::lock_guard<std::mutex> lock(plugin->mutex);
      uint64_t& allocated = plugin->allocated[device->ordinal];
      if (size_bytes > total - allocated) {
        return hwinfer_make_error(
            HWINFER_STATUS_OUT_OF_MEMORY,
            "sim buffer_alloc: %" PRIu64 " bytes requested, but %" PRIu64
            " of the device's %" PRIu64 " bytes are allocated (%" PRIu64 " free; memory_gib of %s)",
            size_bytes, allocated, total, total - allocated, plugin->spec.file.c_str());
      }
      allocated += size_bytes;
    }
    auto release = [&] {
      std::lock_guard<std::mutex> lock(plugin->mutex);
      plugin->allocated[device->ordinal] -= size_bytes;
    };
    void* data = nullptr;
    if (size_bytes <= plugin->backed_limit_bytes) {
      data = mmap(nullptr, static_cast<size_t>(size_bytes), PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (data == MAP_FAILED) {
        data = nullptr;
        release();
        return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                  "sim buffer_alloc: cannot allocate %" PRIu64
                                  " bytes of host memory to back the buffer",
                                  size_bytes);
      }
    }
    auto* buffer = new (std::nothrow) hwinfer_buffer;
    if (buffer == nullptr) {
      if (data != nullptr) munmap(data, static_cast<size_t>(size_bytes));
      release();
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "sim buffer_alloc: out of memory");
    }
    buffer->device = device;
    buffer->data = static_cast<uint8_t*>(data);
    buffer->size_bytes = size_bytes;
    buffer->memory_kind = memory_kind;
    device->live_buffers.fetch_add(1);
    *out = buffer;
    return nullptr;
  });
}

void buffer_free(hwinfer_buffer* buffer) {
  if (buffer == nullptr) return;
  hwinfer_device* device = buffer->device;
  {
    std::lock_guard<std::mutex> lock(device->plugin->mutex);
    device->plugin->allocated[device->ordinal] -= buffer->size_bytes;
  }
  if (buffer->data != nullptr) munmap(buffer->data, static_cast<size_t>(buffer->size_bytes));
  device->live_buffers.fetch_sub(1);
  delete buffer;
}

hwinfer_error* buffer_map(hwinfer_buffer* buffer, void** out_host_ptr) {
  if (hwinfer_error* error = require_non_null(buffer, "buffer_map: buffer")) return error;
  if (hwinfer_error* error = require_non_null(out_host_ptr, "buffer_map: out_host_ptr")) {
    return error;
  }
  if (!buffer->backed()) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "sim buffer_map: the %" PRIu64
                              "-byte buffer is virtual (larger than backed_limit_mib = %" PRIu64
                              " MiB): it has no memory to map",
                              buffer->size_bytes, buffer->device->plugin->backed_limit_bytes >> 20);
  }
  *out_host_ptr = buffer->data;
  return nullptr;
}

backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers) {
  static const backend::BufferInfoFn kBuffers = {
      [](const hwinfer_buffer* buffer) -> uint64_t { return buffer->size_bytes; },
      [](const hwinfer_buffer* buffer) -> const hwinfer_device* { return buffer->device; },
      [](const hwinfer_buffer* buffer) { return reinterpret_cast<uintptr_t>(buffer->data); }};
  return {kPluginName, &kBuffers, device, require_buffers, nullptr, backend::kWeightDtypesAll};
}

}  // namespace hwinfer::sim
