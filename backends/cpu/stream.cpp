// stream.cpp — streams of the CPU device and the copies queued on them. Each stream is a
// StreamWorker (one thread of its own, in order); copies are bounds-checked when queued and run as
// memmove on the worker (memmove, not memcpy: a host pointer may alias a buffer on this device).
//
// Must not run queued work on the caller's thread, and must not block in an enqueue call beyond
// taking the queue's lock.
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "cpu_internal.h"

namespace hwinfer::cpu {

namespace {

hwinfer_error* check_same_device(const hwinfer_stream* stream, const hwinfer_buffer* buffer,
                                 const char* what) {
  if (buffer->device == stream->device) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "cpu %s: the buffer belongs to another device than the stream", what);
}

bool ranges_overlap(const uint8_t* a, const uint8_t* b, uint64_t size) {
  const auto a_begin = reinterpret_cast<uintptr_t>(a);
  const auto b_begin = reinterpret_cast<uintptr_t>(b);
  return a_begin < b_begin + size && b_begin < a_begin + size;
}

// Queues memmove(dst, src, size) on |stream|.
hwinfer_error* enqueue_copy(hwinfer_stream* stream, uint8_t* dst, const uint8_t* src,
                            uint64_t size_bytes) {
  const auto size = static_cast<size_t>(size_bytes);  // <= a buffer's size, so it fits
  return stream->worker.enqueue([dst, src, size]() -> hwinfer_error* {
    std::memmove(dst, src, size);
    return nullptr;
  });
}

}  // namespace

hwinfer_error* stream_create(hwinfer_device* device, hwinfer_stream** out) {
  return guarded("stream_create", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(device, "stream_create: device")) return error;
    if (hwinfer_error* error = require_non_null(out, "stream_create: out")) return error;
    hwinfer_stream* stream = nullptr;
    try {
      stream = new hwinfer_stream;  // starts the stream's worker thread
    } catch (const std::system_error& e) {
      return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE,
                                "cpu stream_create: cannot start the stream's thread: %s",
                                e.what());
    }
    stream->device = device;
    stream->pool = device->plugin->pool.get();
    stream->gemm_isa = device->plugin->gemm_isa;
    device->live_streams.fetch_add(1);
    *out = stream;
    return nullptr;
  });
}

void stream_destroy(hwinfer_stream* stream) {
  if (stream == nullptr) return;
  hwinfer_device* device = stream->device;
  delete stream;  // ~StreamWorker runs what is queued, then joins its thread
  device->live_streams.fetch_sub(1);
}

hwinfer_error* stream_synchronize(hwinfer_stream* stream) {
  if (hwinfer_error* error = require_non_null(stream, "stream_synchronize: stream")) return error;
  return stream->worker.synchronize();
}

hwinfer_error* copy_h2d(hwinfer_stream* stream, const void* src, hwinfer_buffer* dst,
                        uint64_t dst_offset, uint64_t size_bytes) {
  return guarded("copy_h2d", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "copy_h2d: stream")) return error;
    if (hwinfer_error* error = require_non_null(dst, "copy_h2d: dst")) return error;
    if (hwinfer_error* error = check_same_device(stream, dst, "copy_h2d")) return error;
    if (hwinfer_error* error = check_buffer_range(dst, dst_offset, size_bytes, "copy_h2d (dst)")) {
      return error;
    }
    if (size_bytes == 0) return nullptr;
    if (hwinfer_error* error = require_non_null(src, "copy_h2d: src")) return error;
    return enqueue_copy(stream, dst->data + dst_offset, static_cast<const uint8_t*>(src),
                        size_bytes);
  });
}

hwinfer_error* copy_d2h(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset, void* dst,
                        uint64_t size_bytes) {
  return guarded("copy_d2h", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "copy_d2h: stream")) return error;
    if (hwinfer_error* error = require_non_null(src, "copy_d2h: src")) return error;
    if (hwinfer_error* error = check_same_device(stream, src, "copy_d2h")) return error;
    if (hwinfer_error* error = check_buffer_range(src, src_offset, size_bytes, "copy_d2h (src)")) {
      return error;
    }
    if (size_bytes == 0) return nullptr;
    if (hwinfer_error* error = require_non_null(dst, "copy_d2h: dst")) return error;
    return enqueue_copy(stream, static_cast<uint8_t*>(dst), src->data + src_offset, size_bytes);
  });
}

hwinfer_error* copy_d2d(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                        hwinfer_buffer* dst, uint64_t dst_offset, uint64_t size_bytes) {
  return guarded("copy_d2d", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "copy_d2d: stream")) return error;
    if (hwinfer_error* error = require_non_null(src, "copy_d2d: src")) return error;
    if (hwinfer_error* error = require_non_null(dst, "copy_d2d: dst")) return error;
    if (hwinfer_error* error = check_same_device(stream, src, "copy_d2d (src)")) return error;
    if (hwinfer_error* error = check_same_device(stream, dst, "copy_d2d (dst)")) return error;
    if (hwinfer_error* error = check_buffer_range(src, src_offset, size_bytes, "copy_d2d (src)")) {
      return error;
    }
    if (hwinfer_error* error = check_buffer_range(dst, dst_offset, size_bytes, "copy_d2d (dst)")) {
      return error;
    }
    if (size_bytes == 0) return nullptr;
    uint8_t* dst_bytes = dst->data + dst_offset;
    const uint8_t* src_bytes = src->data + src_offset;
    if (ranges_overlap(dst_bytes, src_bytes, size_bytes)) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu copy_d2d: source [offset %" PRIu64 ", size %" PRIu64
                                ") and destination [offset %" PRIu64
                                ", same size) overlap in memory",
                                src_offset, size_bytes, dst_offset);
    }
    return enqueue_copy(stream, dst_bytes, src_bytes, size_bytes);
  });
}

}  // namespace hwinfer::cpu
