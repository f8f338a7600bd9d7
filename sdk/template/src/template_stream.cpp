// template_stream.cpp — streams and the copies enqueued on them.
//
// TEMPLATE: replace `template` with your backend's name. A template stream executes each item
// synchronously inside the enqueue call: when copy_h2d returns, the bytes are there. That is a
// valid in-order stream (the ABI only promises order and completion by the next synchronize), and
// the simplest correct thing to start from. DRIVER: record into a real queue (cuMemcpyAsync on a
// CUstream, vkCmdCopyBuffer into a command buffer) and return at once; stream_synchronize waits.
// Every argument is checked before anything is touched: the caller gets INVALID_ARGUMENT for NULL
// handles and OUT_OF_RANGE for a range outside a buffer, never a crash.
#include <cstring>
#include <new>

#include "template_internal.h"

namespace hwinfer_template {
namespace {

// A copy may only touch buffers of the stream's own device.
hwinfer_error* check_same_device(const hwinfer_stream* stream, const hwinfer_buffer* buffer,
                                 const char* what) {
  if (buffer->device != stream->device) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s: the buffer belongs to another device than the stream", what);
  }
  return nullptr;
}

}  // namespace

hwinfer_error* stream_create(hwinfer_device* device, hwinfer_stream** out) {
  if (device == nullptr || out == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "stream_create: device and out must not be NULL");
  }
  hwinfer_stream* stream = new (std::nothrow) hwinfer_stream();
  if (stream == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "stream_create: out of memory");
  }
  stream->device = device;  // DRIVER: cuStreamCreate / a VkQueue + command pool
  device->live_streams.fetch_add(1);
  *out = stream;
  return nullptr;
}

void stream_destroy(hwinfer_stream* stream) {
  if (stream == nullptr) return;
  // The ABI says destroy waits for queued work first. Ours has none left. DRIVER: synchronise,
  // then cuStreamDestroy.
  stream->device->live_streams.fetch_sub(1);
  delete stream;
}

hwinfer_error* stream_synchronize(hwinfer_stream* stream) {
  if (stream == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "stream_synchronize: stream is NULL");
  }
  // Everything already ran at enqueue time, and any error was returned then. DRIVER: wait for the
  // queue, then return (and clear) the first error a queued item hit since the last synchronize.
  return nullptr;
}

hwinfer_error* copy_h2d(hwinfer_stream* stream, const void* src, hwinfer_buffer* dst,
                        uint64_t dst_offset, uint64_t size_bytes) {
  if (stream == nullptr || dst == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "copy_h2d: stream and dst must not be NULL");
  }
  if (hwinfer_error* error = check_same_device(stream, dst, "copy_h2d")) return error;
  if (hwinfer_error* error = check_buffer_range(dst, dst_offset, size_bytes, "copy_h2d dst")) {
    return error;
  }
  if (size_bytes == 0) return nullptr;  // the ABI defines size 0 as a no-op
  if (src == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "copy_h2d: src is NULL");
  }
  std::memcpy(static_cast<char*>(dst->data) + dst_offset, src, static_cast<size_t>(size_bytes));
  return nullptr;
}

hwinfer_error* copy_d2h(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset, void* dst,
                        uint64_t size_bytes) {
  if (stream == nullptr || src == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "copy_d2h: stream and src must not be NULL");
  }
  if (hwinfer_error* error = check_same_device(stream, src, "copy_d2h")) return error;
  if (hwinfer_error* error = check_buffer_range(src, src_offset, size_bytes, "copy_d2h src")) {
    return error;
  }
  if (size_bytes == 0) return nullptr;
  if (dst == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "copy_d2h: dst is NULL");
  }
  std::memcpy(dst, static_cast<const char*>(src->data) + src_offset,
              static_cast<size_t>(size_bytes));
  return nullptr;
}

hwinfer_error* copy_d2d(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                        hwinfer_buffer* dst, uint64_t dst_offset, uint64_t size_bytes) {
  if (stream == nullptr || src == nullptr || dst == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "copy_d2d: stream, src and dst must not be NULL");
  }
  if (hwinfer_error* error = check_same_device(stream, src, "copy_d2d src")) return error;
  if (hwinfer_error* error = check_same_device(stream, dst, "copy_d2d dst")) return error;
  if (hwinfer_error* error = check_buffer_range(src, src_offset, size_bytes, "copy_d2d src")) {
    return error;
  }
  if (hwinfer_error* error = check_buffer_range(dst, dst_offset, size_bytes, "copy_d2d dst")) {
    return error;
  }
  if (size_bytes == 0) return nullptr;
  // Both ranges may lie in one buffer, but must not overlap (the ABI says so; memcpy needs it).
  if (src == dst && src_offset < dst_offset + size_bytes && dst_offset < src_offset + size_bytes) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "copy_d2d: source and destination ranges overlap in one buffer");
  }
  std::memcpy(static_cast<char*>(dst->data) + dst_offset,
              static_cast<const char*>(src->data) + src_offset, static_cast<size_t>(size_bytes));
  return nullptr;
}

}  // namespace hwinfer_template
