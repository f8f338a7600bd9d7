// bandwidth_probe.cpp — bandwidth_probe: the READ, COPY and WRITE streams the memory ceiling is
// measured with. Everything a kernel kind needs besides its kernels, in one file
// (docs/plugin-kit.md): its descriptor check (the one every backend's enqueue slot and kernel_query
// run), its cost (the bytes and FLOPs the core counts for MBU and MFU) and its samples (what
// `hwinfer plugin check` asks a device about). Listed in hwinfer/kernel_kinds.def; found by the
// kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- bandwidth probe ---------------------------------------------------------------------------
//   src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8
//   (READ)
// Operands a mode does not use are ignored. All used views must be contiguous; COPY's src and dst
// must not overlap.

namespace {

constexpr int64_t kSinkMinBytes = 64;

}  // namespace

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_bandwidth_probe_desc& d) {
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), "bandwidth_probe")) {
    return error;
  }
  if (d.mode != HWINFER_PROBE_READ && d.mode != HWINFER_PROBE_COPY &&
      d.mode != HWINFER_PROBE_WRITE) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s bandwidth_probe: unknown mode %" PRIu32
                              " (the %s backend has READ=0, COPY=1, WRITE=2)",
                              plugin, d.mode, plugin);
  }
  if (d.size_bytes == 0 || d.size_bytes > static_cast<uint64_t>(INT64_MAX)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s bandwidth_probe: size_bytes must be in [1, 2^63); got %" PRIu64,
                              plugin, d.size_bytes);
  }
  const auto size = static_cast<int64_t>(d.size_bytes);
  const bool uses_src = d.mode != HWINFER_PROBE_WRITE;
  const bool uses_dst = d.mode != HWINFER_PROBE_READ;
  const bool uses_sink = d.mode == HWINFER_PROBE_READ;
  ViewExpectation src =
      expect_view("bandwidth_probe", "src", HWINFER_DTYPE_I8, "[size_bytes]", {size});
  ViewExpectation dst =
      expect_view("bandwidth_probe", "dst", HWINFER_DTYPE_I8, "[size_bytes]", {size});
  src.contiguous = dst.contiguous = true;
  dst.is_output = true;
  if (uses_src) {
    if (hwinfer_error* error = check_view(context, d.src, src)) return error;
  }
  if (uses_dst) {
    if (hwinfer_error* error = check_view(context, d.dst, dst)) return error;
  }
  if (uses_sink) {
    // The sink may be longer than 64 bytes: check it against its own length, then the minimum.
    const int64_t sink_bytes =
        d.sink.struct_size >= sizeof(hwinfer_tensor_view) && d.sink.rank == 1 ? d.sink.shape[0] : 0;
    ViewExpectation sink = expect_view("bandwidth_probe", "sink", HWINFER_DTYPE_I8, "[>= 64]",
                                       {std::max(sink_bytes, kSinkMinBytes)});
    sink.contiguous = true;
    sink.is_output = true;
    if (hwinfer_error* error = check_view(context, d.sink, sink)) return error;
  }
  if (d.mode == HWINFER_PROBE_COPY &&
      byte_ranges_overlap(context, d.src.buffer, d.src.offset_bytes, d.size_bytes, d.dst.buffer,
                          d.dst.offset_bytes, d.size_bytes)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s bandwidth_probe: COPY src and dst overlap in memory", plugin);
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_BANDWIDTH_PROBE, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// bandwidth_probe: size x iterations per direction the mode moves; no flops.
KernelCost count_cost(const hwinfer_bandwidth_probe_desc& d, const IntArrayReader& /*read_ints*/) {
  const double moved = static_cast<double>(d.size_bytes) * d.iterations;
  KernelCost cost;
  if (d.mode == HWINFER_PROBE_READ || d.mode == HWINFER_PROBE_COPY) cost.bytes_read = moved;
  if (d.mode == HWINFER_PROBE_WRITE || d.mode == HWINFER_PROBE_COPY) cost.bytes_written = moved;
  return cost;
}

namespace {

KernelSample Probe(uint32_t mode, const char* name) {
  auto d = blank_desc<hwinfer_bandwidth_probe_desc>(HWINFER_KERNEL_BANDWIDTH_PROBE);
  d->mode = mode;
  d->iterations = 1;
  d->size_bytes = 1 << 20;
  d->src = mode == HWINFER_PROBE_WRITE ? no_view() : sample_view(HWINFER_DTYPE_I8, {1 << 20});
  d->dst = mode == HWINFER_PROBE_READ ? no_view() : sample_view(HWINFER_DTYPE_I8, {1 << 20});
  d->sink = sample_view(HWINFER_DTYPE_I8, {64});
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_bandwidth_probe_desc*) {
  return {Probe(HWINFER_PROBE_READ, "bandwidth_probe read"),
          Probe(HWINFER_PROBE_COPY, "bandwidth_probe copy"),
          Probe(HWINFER_PROBE_WRITE, "bandwidth_probe write")};
}

}  // namespace hwinfer::kit
