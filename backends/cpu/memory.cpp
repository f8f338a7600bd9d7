// memory.cpp — buffers of the CPU device: 64-byte aligned host memory for both memory kinds
// (HWINFER_MEMORY_DEVICE and HOST_VISIBLE are the same thing here, and both map), plus imported
// host memory that the buffer wraps without owning.
//
// Must not throw (allocation failure is OUT_OF_MEMORY) and must not touch buffer contents (they are
// undefined after alloc, as the ABI says).
#include <cinttypes>
#include <cstdint>
#include <cstdlib>

#include "cpu_internal.h"

namespace hwinfer::cpu {

namespace {

constexpr size_t kAlignmentBytes = 64;

hwinfer_error* check_memory_kind(uint32_t memory_kind, const char* what) {
  if (memory_kind == HWINFER_MEMORY_DEVICE || memory_kind == HWINFER_MEMORY_HOST_VISIBLE) {
    return nullptr;
  }
  return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                            "cpu %s: unknown memory kind %" PRIu32
                            " (the cpu device has DEVICE=0 and HOST_VISIBLE=1)",
                            what, memory_kind);
}

}  // namespace

hwinfer_error* buffer_alloc(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                            hwinfer_buffer** out) {
  return guarded("buffer_alloc", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(device, "buffer_alloc: device")) return error;
    if (hwinfer_error* error = require_non_null(out, "buffer_alloc: out")) return error;
    if (size_bytes == 0) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu buffer_alloc: size_bytes must be > 0");
    }
    if (hwinfer_error* error = check_memory_kind(memory_kind, "buffer_alloc")) return error;

    if (device->max_allocation_bytes != 0 && size_bytes > device->max_allocation_bytes) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                "cpu buffer_alloc: %" PRIu64
                                " bytes exceed the device's max_allocation_bytes (%" PRIu64
                                ", the machine's physical memory)",
                                size_bytes, device->max_allocation_bytes);
    }
    void* data = nullptr;
    if (size_bytes > SIZE_MAX - kAlignmentBytes ||
        posix_memalign(&data, kAlignmentBytes, static_cast<size_t>(size_bytes)) != 0) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                "cpu buffer_alloc: cannot allocate %" PRIu64 " bytes", size_bytes);
    }
    auto* buffer = new (std::nothrow) hwinfer_buffer;
    if (buffer == nullptr) {
      std::free(data);
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "cpu buffer_alloc: out of memory");
    }
    buffer->device = device;
    buffer->data = static_cast<uint8_t*>(data);
    buffer->size_bytes = size_bytes;
    buffer->memory_kind = memory_kind;
    buffer->owns_data = true;
    device->live_buffers.fetch_add(1);
    *out = buffer;
    return nullptr;
  });
}

void buffer_free(hwinfer_buffer* buffer) {
  if (buffer == nullptr) return;
  if (buffer->owns_data) std::free(buffer->data);
  buffer->device->live_buffers.fetch_sub(1);
  delete buffer;
}

hwinfer_error* buffer_map(hwinfer_buffer* buffer, void** out_host_ptr) {
  if (hwinfer_error* error = require_non_null(buffer, "buffer_map: buffer")) return error;
  if (hwinfer_error* error = require_non_null(out_host_ptr, "buffer_map: out_host_ptr")) {
    return error;
  }
  *out_host_ptr = buffer->data;  // every cpu buffer is host memory
  return nullptr;
}

hwinfer_error* buffer_import_host(hwinfer_device* device, void* host_ptr, uint64_t size_bytes,
                                  hwinfer_buffer** out) {
  return guarded("buffer_import_host", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(device, "buffer_import_host: device")) return error;
    if (hwinfer_error* error = require_non_null(host_ptr, "buffer_import_host: host_ptr")) {
      return error;
    }
    if (hwinfer_error* error = require_non_null(out, "buffer_import_host: out")) return error;
    if (size_bytes == 0) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu buffer_import_host: size_bytes must be > 0");
    }
    auto* buffer = new (std::nothrow) hwinfer_buffer;
    if (buffer == nullptr) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                "cpu buffer_import_host: out of memory");
    }
    buffer->device = device;
    buffer->data = static_cast<uint8_t*>(host_ptr);
    buffer->size_bytes = size_bytes;
    buffer->memory_kind = HWINFER_MEMORY_HOST_VISIBLE;
    buffer->owns_data = false;
    device->live_buffers.fetch_add(1);
    *out = buffer;
    return nullptr;
  });
}

backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers) {
  static const backend::BufferInfoFn kBuffers = {
      [](const hwinfer_buffer* buffer) -> uint64_t { return buffer->size_bytes; },
      [](const hwinfer_buffer* buffer) -> const hwinfer_device* { return buffer->device; },
      [](const hwinfer_buffer* buffer) { return reinterpret_cast<uintptr_t>(buffer->data); }};
  return {kPluginName, &kBuffers, device, require_buffers, nullptr, backend::kWeightDtypesAll};
}

}  // namespace hwinfer::cpu
