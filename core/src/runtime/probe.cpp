// probe.cpp — measured bandwidth and GEMM FLOP/s of a device through its own kernels, timed with
// device events. The core decides the bytes and FLOPs each launch is worth (from the descriptor),
// never the plugin. Medians of several repetitions after one warm-up launch.
#include "hwinfer/probe.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Times |launch| |repetitions| times between two events on |stream|; returns |work| / seconds.
StatusOr<ProbeMeasurement> TimeLaunches(Device& device, Stream& stream, int repetitions,
                                        double work, const hwinfer_kernel_desc& desc) {
  HWINFER_ASSIGN_OR_RETURN(Event start, device.CreateEvent());
  HWINFER_ASSIGN_OR_RETURN(Event end, device.CreateEvent());
  HWINFER_RETURN_IF_ERROR(stream.Launch(desc));  // warm-up: page faults, caches, clocks
  HWINFER_RETURN_IF_ERROR(stream.Synchronize());
  ProbeMeasurement measurement;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    HWINFER_RETURN_IF_ERROR(start.Record(stream));
    HWINFER_RETURN_IF_ERROR(stream.Launch(desc));
    HWINFER_RETURN_IF_ERROR(end.Record(stream));
    HWINFER_RETURN_IF_ERROR(stream.Synchronize());
    HWINFER_ASSIGN_OR_RETURN(uint64_t elapsed_ns, Event::ElapsedNs(start, end));
    if (elapsed_ns == 0) elapsed_ns = 1;
    measurement.samples.push_back(work / (static_cast<double>(elapsed_ns) * 1e-9));
  }
  measurement.measured = true;
  measurement.value = Median(measurement.samples);
  return measurement;
}

StatusOr<Buffer> FilledBuffer(Device& device, Stream& stream, const std::vector<uint8_t>& bytes) {
  HWINFER_ASSIGN_OR_RETURN(Buffer buffer, device.Allocate(bytes.size()));
  HWINFER_RETURN_IF_ERROR(stream.CopyH2D(bytes.data(), buffer, 0, bytes.size()));
  HWINFER_RETURN_IF_ERROR(stream.Synchronize());
  return buffer;
}

}  // namespace

StatusOr<ProbeMeasurement> MeasureBandwidth(const std::shared_ptr<Device>& device, uint32_t mode,
                                            const ProbeOptions& options) {
  // A device whose buffers are smaller (lavapipe: 128 MiB) probes with the largest it allows.
  const uint64_t max_bytes = device->info().max_allocation_bytes;
  const uint64_t size =
      max_bytes > 0 ? std::min(options.bandwidth_bytes, max_bytes) : options.bandwidth_bytes;
  hwinfer_bandwidth_probe_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_BANDWIDTH_PROBE;
  desc.mode = mode;
  desc.iterations = options.bandwidth_iterations;
  desc.size_bytes = size;
  const auto i64 = static_cast<int64_t>(size);
  desc.src = ContiguousView(nullptr, 0, HWINFER_DTYPE_I8, {i64});
  desc.dst = desc.src;
  desc.sink = ContiguousView(nullptr, 0, HWINFER_DTYPE_I8, {64});

  HWINFER_ASSIGN_OR_RETURN(KernelSupport support, device->QueryKernel(AsKernelDesc(desc)));
  if (!support.supported) {
    ProbeMeasurement skipped;
    skipped.reason = support.reason;
    return skipped;
  }
  HWINFER_ASSIGN_OR_RETURN(Stream stream, device->CreateStream());
  // Only the operands the mode uses are allocated; each is filled so no page reads as the shared
  // zero page (which would make a read probe measure a cache, not memory).
  std::vector<uint8_t> pattern(size);
  for (uint64_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 131 + 7);
  Buffer src, dst;
  if (mode != HWINFER_PROBE_WRITE) {
    HWINFER_ASSIGN_OR_RETURN(src, FilledBuffer(*device, stream, pattern));
    desc.src = ContiguousView(src, 0, HWINFER_DTYPE_I8, {i64});
  } else {
    desc.src = NoView();
  }
  if (mode != HWINFER_PROBE_READ) {
    HWINFER_ASSIGN_OR_RETURN(dst, FilledBuffer(*device, stream, pattern));
    desc.dst = ContiguousView(dst, 0, HWINFER_DTYPE_I8, {i64});
  } else {
    desc.dst = NoView();
  }
  pattern = {};
  HWINFER_ASSIGN_OR_RETURN(Buffer sink, device->Allocate(64));
  desc.sink = ContiguousView(sink, 0, HWINFER_DTYPE_I8, {64});
  const double bytes_per_pass =
      mode == HWINFER_PROBE_COPY ? 2.0 * static_cast<double>(size) : static_cast<double>(size);
  return TimeLaunches(*device, stream, options.repetitions,
                      bytes_per_pass * options.bandwidth_iterations, AsKernelDesc(desc));
}

StatusOr<ProbeMeasurement> MeasureGemmF32(const std::shared_ptr<Device>& device,
                                          const ProbeOptions& options) {
  const int64_t n = options.gemm_size;
  const uint64_t matrix_bytes = static_cast<uint64_t>(n * n) * sizeof(float);
  hwinfer_gemm_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_GEMM;
  desc.m = desc.n = desc.k = n;
  desc.b_transposed = 1;
  desc.alpha = 1.0f;
  desc.beta = 0.0f;
  desc.a = ContiguousView(nullptr, 0, HWINFER_DTYPE_F32, {n, n});
  desc.b = desc.a;
  desc.c = desc.a;
  HWINFER_ASSIGN_OR_RETURN(KernelSupport support, device->QueryKernel(AsKernelDesc(desc)));
  if (!support.supported) {
    ProbeMeasurement skipped;
    skipped.reason = support.reason;
    return skipped;
  }
  HWINFER_ASSIGN_OR_RETURN(Stream stream, device->CreateStream());
  std::vector<float> values(static_cast<size_t>(n * n));
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : values) v = dist(rng);
  std::vector<uint8_t> bytes(matrix_bytes);
  std::memcpy(bytes.data(), values.data(), matrix_bytes);
  HWINFER_ASSIGN_OR_RETURN(Buffer a, FilledBuffer(*device, stream, bytes));
  HWINFER_ASSIGN_OR_RETURN(Buffer b, FilledBuffer(*device, stream, bytes));
  HWINFER_ASSIGN_OR_RETURN(Buffer c, device->Allocate(matrix_bytes));
  desc.a = ContiguousView(a, 0, HWINFER_DTYPE_F32, {n, n});
  desc.b = ContiguousView(b, 0, HWINFER_DTYPE_F32, {n, n});
  desc.c = ContiguousView(c, 0, HWINFER_DTYPE_F32, {n, n});
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return TimeLaunches(*device, stream, options.repetitions, flops, AsKernelDesc(desc));
}

StatusOr<ProbeResult> ProbeDevice(const std::shared_ptr<Device>& device,
                                  const ProbeOptions& options) {
  ProbeResult result;
  HWINFER_ASSIGN_OR_RETURN(result.read_bandwidth,
                           MeasureBandwidth(device, HWINFER_PROBE_READ, options));
  HWINFER_ASSIGN_OR_RETURN(result.copy_bandwidth,
                           MeasureBandwidth(device, HWINFER_PROBE_COPY, options));
  HWINFER_ASSIGN_OR_RETURN(result.gemm_f32, MeasureGemmF32(device, options));
  return result;
}

}  // namespace hwinfer
