// stream.cpp — streams of a simulated device, their virtual clocks, and copies.
//
// A stream is a time cursor (ns). Every copy runs at once on the caller's thread (memmove between
// backed memory; virtual buffers as README.md says) and advances the cursor by its modelled time:
//   h2d, d2h: size / peak bandwidth + launch overhead;  d2d: 2 x size (read + write) likewise.
// The device clock is the max over its streams' cursors; a new stream starts at it.
// Must not read a real clock or sleep.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "sim_internal.h"

namespace hwinfer::sim {

void advance_clock(hwinfer_stream* stream, double duration_ns) {
  stream->now_ns += duration_ns;
  hwinfer_device* device = stream->device;
  std::lock_guard<std::mutex> lock(device->mutex);
  device->clock_ns = std::max(device->clock_ns, stream->now_ns);
}

double transfer_ns(const hwinfer_device& device, double bytes) {
  const HardwareSpec& spec = device.plugin->spec(device.ordinal);
  const double bandwidth = spec.peak_bandwidth_bytes_per_s;
  const double move_s = bandwidth > 0 ? bytes / bandwidth : 0.0;
  return (move_s + spec.launch_overhead_s) * 1e9;
}

hwinfer_error* SimBackend::init_stream(hwinfer_device& device, hwinfer_stream& stream) {
  std::lock_guard<std::mutex> lock(device.mutex);
  stream.now_ns = device.clock_ns;
  return nullptr;
}

hwinfer_error* SimBackend::synchronize(hwinfer_stream& stream) {
  hwinfer_error* pending = stream.pending_error;  // everything already ran
  stream.pending_error = nullptr;
  return pending;
}

hwinfer_error* SimBackend::copy_h2d(hwinfer_stream& stream, const void* src, hwinfer_buffer& dst,
                                    uint64_t dst_offset, uint64_t size_bytes) {
  // A virtual destination accepts the copy and keeps nothing.
  if (dst.backed()) std::memmove(dst.data + dst_offset, src, static_cast<size_t>(size_bytes));
  advance_clock(&stream, transfer_ns(*stream.device, static_cast<double>(size_bytes)));
  return nullptr;
}

hwinfer_error* SimBackend::copy_d2h(hwinfer_stream& stream, hwinfer_buffer& src,
                                    uint64_t src_offset, void* dst, uint64_t size_bytes) {
  if (src.backed()) {
    std::memmove(dst, src.data + src_offset, static_cast<size_t>(size_bytes));
  } else {
    std::memset(dst, 0, static_cast<size_t>(size_bytes));  // a virtual buffer reads as zeros
  }
  advance_clock(&stream, transfer_ns(*stream.device, static_cast<double>(size_bytes)));
  return nullptr;
}

hwinfer_error* SimBackend::copy_d2d(hwinfer_stream& stream, hwinfer_buffer& src,
                                    uint64_t src_offset, hwinfer_buffer& dst, uint64_t dst_offset,
                                    uint64_t size_bytes) {
  const auto size = static_cast<size_t>(size_bytes);
  if (dst.backed()) {
    if (src.backed()) {
      std::memmove(dst.data + dst_offset, src.data + src_offset, size);
    } else {
      std::memset(dst.data + dst_offset, 0, size);
    }
  }
  advance_clock(&stream, transfer_ns(*stream.device, 2.0 * static_cast<double>(size)));
  return nullptr;
}

}  // namespace hwinfer::sim
