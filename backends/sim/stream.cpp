// stream.cpp — streams of a simulated device, their virtual clocks, and copies.
//
// A stream is a time cursor (ns). Every copy runs at once on the caller's thread (memmove between
// backed memory; virtual buffers as README.md says) and advances the cursor by its modelled time:
//   h2d, d2h: size / peak bandwidth + launch overhead;  d2d: 2 x size (read + write) likewise.
// The device clock is the max over its streams' cursors; a new stream starts at it.
// Must not read a real clock or sleep.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstring>

#include "sim_internal.h"

namespace hwinfer::sim {

namespace {

hwinfer_error* check_same_device(const hwinfer_stream* stream, const hwinfer_buffer* buffer,
                                 const char* what) {
  if (buffer->device == stream->device) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "sim %s: the buffer belongs to another device than the stream", what);
}

}  // namespace

void advance_clock(hwinfer_stream* stream, double duration_ns) {
  stream->now_ns += duration_ns;
  hwinfer_device* device = stream->device;
  std::lock_guard<std::mutex> lock(device->mutex);
  device->clock_ns = std::max(device->clock_ns, stream->now_ns);
}

double transfer_ns(const hwinfer_plugin& plugin, double bytes) {
  const double bandwidth = plugin.spec.peak_bandwidth_bytes_per_s;
  const double move_s = bandwidth > 0 ? bytes / bandwidth : 0.0;
  return (move_s + plugin.spec.launch_overhead_s) * 1e9;
}

hwinfer_error* stream_create(hwinfer_device* device, hwinfer_stream** out) {
  return guarded("stream_create", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(device, "stream_create: device")) return error;
    if (hwinfer_error* error = require_non_null(out, "stream_create: out")) return error;
    auto* stream = new hwinfer_stream;
    stream->device = device;
    {
      std::lock_guard<std::mutex> lock(device->mutex);
      stream->now_ns = device->clock_ns;
    }
    device->live_streams.fetch_add(1);
    *out = stream;
    return nullptr;
  });
}

void stream_destroy(hwinfer_stream* stream) {
  if (stream == nullptr) return;
  if (stream->pending_error != nullptr) stream->pending_error->destroy(stream->pending_error);
  stream->device->live_streams.fetch_sub(1);
  delete stream;
}

hwinfer_error* stream_synchronize(hwinfer_stream* stream) {
  if (hwinfer_error* error = require_non_null(stream, "stream_synchronize: stream")) return error;
  hwinfer_error* pending = stream->pending_error;  // everything already ran
  stream->pending_error = nullptr;
  return pending;
}

hwinfer_error* copy_h2d(hwinfer_stream* stream, const void* src, hwinfer_buffer* dst,
                        uint64_t dst_offset, uint64_t size_bytes) {
  return guarded("copy_h2d", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "copy_h2d: stream")) return error;
    if (hwinfer_error* error = require_non_null(dst, "copy_h2d: dst")) return error;
    if (size_bytes > 0) {
      if (hwinfer_error* error = require_non_null(src, "copy_h2d: src")) return error;
    }
    if (hwinfer_error* error = check_same_device(stream, dst, "copy_h2d")) return error;
    if (hwinfer_error* error = check_buffer_range(dst, dst_offset, size_bytes, "copy_h2d")) {
      return error;
    }
    if (size_bytes == 0) return nullptr;
    // A virtual destination accepts the copy and keeps nothing.
    if (dst->backed()) std::memmove(dst->data + dst_offset, src, static_cast<size_t>(size_bytes));
    advance_clock(stream, transfer_ns(*stream->device->plugin, static_cast<double>(size_bytes)));
    return nullptr;
  });
}

hwinfer_error* copy_d2h(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset, void* dst,
                        uint64_t size_bytes) {
  return guarded("copy_d2h", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "copy_d2h: stream")) return error;
    if (hwinfer_error* error = require_non_null(src, "copy_d2h: src")) return error;
    if (size_bytes > 0) {
      if (hwinfer_error* error = require_non_null(dst, "copy_d2h: dst")) return error;
    }
    if (hwinfer_error* error = check_same_device(stream, src, "copy_d2h")) return error;
    if (hwinfer_error* error = check_buffer_range(src, src_offset, size_bytes, "copy_d2h")) {
      return error;
    }
    if (size_bytes == 0) return nullptr;
    if (src->backed()) {
      std::memmove(dst, src->data + src_offset, static_cast<size_t>(size_bytes));
    } else {
      std::memset(dst, 0, static_cast<size_t>(size_bytes));  // a virtual buffer reads as zeros
    }
    advance_clock(stream, transfer_ns(*stream->device->plugin, static_cast<double>(size_bytes)));
    return nullptr;
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
    if (src == dst && src_offset < dst_offset + size_bytes &&
        dst_offset < src_offset + size_bytes) {
      return hwinfer_make_error(
          HWINFER_STATUS_INVALID_ARGUMENT,
          "sim copy_d2d: source and destination ranges of one buffer overlap");
    }
    const auto size = static_cast<size_t>(size_bytes);
    if (dst->backed()) {
      if (src->backed()) {
        std::memmove(dst->data + dst_offset, src->data + src_offset, size);
      } else {
        std::memset(dst->data + dst_offset, 0, size);
      }
    }
    advance_clock(stream, transfer_ns(*stream->device->plugin, 2.0 * static_cast<double>(size)));
    return nullptr;
  });
}

}  // namespace hwinfer::sim
