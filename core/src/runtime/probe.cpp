// probe.cpp — measured bandwidth and matmul FLOP/s per weight dtype of a device through its own
// kernels, timed with device events. The core decides the bytes and FLOPs each launch is worth
// (from the descriptor), never the plugin. Medians of several repetitions after one warm-up launch.
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

// |count| bytes each in [0x30, 0x3b]: read as any F32, F16 or BF16 value (a byte of this range is
// the high byte) or as the f16 scales of a GGUF block, every value is finite, normal and at most
// 1 in magnitude; read as int8 quants, small positive integers. So every weight dtype's probe runs
// on valid numbers (no NaN, no denormal slow path) without a quantizer in the core.
std::vector<uint8_t> WeightBytes(uint64_t count) {
  std::vector<uint8_t> bytes(count);
  uint32_t state = 12345;
  for (uint8_t& b : bytes) {
    state = state * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(0x30 + (state >> 24) % 12);
  }
  return bytes;
}

// a / x [m, k] F32 activations, uniform in [-1, 1).
std::vector<uint8_t> ActivationBytes(int64_t m, int64_t k) {
  std::vector<float> values(static_cast<size_t>(m * k));
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : values) v = dist(rng);
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Times |peak|'s matmul (kernel, weight dtype and shape already set) on freshly filled buffers.
StatusOr<MatmulPeak> TimeMatmul(Device& device, MatmulPeak peak, const ProbeOptions& options) {
  const int64_t m = peak.m, n = peak.n, k = peak.k;
  // The descriptor the executor launches for this weight dtype (MakeWeightMatmul).
  auto matmul = [&](hwinfer_buffer* x, hwinfer_buffer* w, hwinfer_buffer* y) {
    return MakeWeightMatmul(ContiguousView(x, 0, HWINFER_DTYPE_F32, {m, k}),
                            ContiguousView(w, 0, peak.weight_dtype, {n, k}),
                            ContiguousView(y, 0, HWINFER_DTYPE_F32, {m, n}));
  };
  HWINFER_ASSIGN_OR_RETURN(KernelSupport support,
                           device.QueryKernel(matmul(nullptr, nullptr, nullptr).desc()));
  if (!support.supported) {
    peak.flops.reason = support.reason.empty() ? "unsupported" : support.reason;
    return peak;
  }
  HWINFER_ASSIGN_OR_RETURN(Stream stream, device.CreateStream());
  HWINFER_ASSIGN_OR_RETURN(Buffer x, FilledBuffer(device, stream, ActivationBytes(m, k)));
  HWINFER_ASSIGN_OR_RETURN(Buffer w, FilledBuffer(device, stream,
                                                  WeightBytes(static_cast<uint64_t>(n) *
                                                              RowBytes(peak.weight_dtype, k))));
  HWINFER_ASSIGN_OR_RETURN(Buffer y, device.Allocate(static_cast<uint64_t>(m * n) * sizeof(float)));
  const WeightMatmul launch = matmul(x.handle(), w.handle(), y.handle());
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  HWINFER_ASSIGN_OR_RETURN(peak.flops,
                           TimeLaunches(device, stream, options.repetitions, flops, launch.desc()));
  return peak;
}

}  // namespace

uint64_t BandwidthProbeBytes(const Device& device, const ProbeOptions& options) {
  const uint64_t max_bytes = device.info().max_allocation_bytes;
  return max_bytes > 0 ? std::min(options.bandwidth_bytes, max_bytes) : options.bandwidth_bytes;
}

StatusOr<ProbeMeasurement> MeasureBandwidth(const std::shared_ptr<Device>& device, uint32_t mode,
                                            const ProbeOptions& options) {
  const uint64_t size = BandwidthProbeBytes(*device, options);
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

std::vector<uint32_t> DefaultMatmulProbeDtypes() {
  return {HWINFER_DTYPE_F32,  HWINFER_DTYPE_F16,  HWINFER_DTYPE_BF16,
          HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0, HWINFER_DTYPE_Q4_K};
}

MatmulPeak MeasureMatmulPeak(const std::shared_ptr<Device>& device, uint32_t weight_dtype,
                             const ProbeOptions& options) {
  MatmulPeak peak;
  peak.weight_dtype = weight_dtype;
  peak.kernel =
      IsPlainFloatDtype(weight_dtype) ? HWINFER_KERNEL_GEMM : HWINFER_KERNEL_MATMUL_QUANTIZED;
  const int64_t width =
      std::max<int64_t>(1, options.matmul_width > 0 ? options.matmul_width : options.gemm_size);
  const int64_t block = DtypeBlockValues(weight_dtype);
  peak.m = std::max<int64_t>(1, options.gemm_size);
  peak.n = width;
  peak.k = (width + block - 1) / block * block;
  if (!IsPlainFloatDtype(weight_dtype) && hwinfer_dtype_block_bytes(weight_dtype) == 0) {
    peak.flops.reason = std::string("not a weight dtype: ") + DtypeName(weight_dtype);
    return peak;
  }
  StatusOr<MatmulPeak> timed = TimeMatmul(*device, peak, options);
  if (!timed.ok()) {  // one dtype failing never fails the others
    peak.flops.reason = timed.status().message();
    return peak;
  }
  return *timed;
}

const MatmulPeak* ProbeResult::Matmul(uint32_t weight_dtype) const {
  for (const MatmulPeak& peak : matmul) {
    if (peak.weight_dtype == weight_dtype) return &peak;
  }
  return nullptr;
}

StatusOr<ProbeResult> ProbeDevice(const std::shared_ptr<Device>& device,
                                  const ProbeOptions& options) {
  ProbeResult result;
  HWINFER_ASSIGN_OR_RETURN(result.read_bandwidth,
                           MeasureBandwidth(device, HWINFER_PROBE_READ, options));
  HWINFER_ASSIGN_OR_RETURN(result.copy_bandwidth,
                           MeasureBandwidth(device, HWINFER_PROBE_COPY, options));
  for (const uint32_t dtype : options.matmul_dtypes) {
    result.matmul.push_back(MeasureMatmulPeak(device, dtype, options));
  }
  return result;
}

}  // namespace hwinfer
