// kernel_bench.cpp — microbenchmarks of the kernels a backend has today (f32 GEMM/GEMV and the
// bandwidth probe), launched through the ABI and timed between device events. Counters report
// FLOP/s and bytes/s as Google Benchmark rates. Usage:
//   hwinfer_kernel_bench [--backend=cpu] [--benchmark_repetitions=5 ...]
// Must not assert correctness: the conformance suite does that.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>

#include "bench_common.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

using bench::Allocate;
using bench::BenchDevice;
using bench::TimeKernel;
using bench::Upload;

Buffer RandomBuffer(benchmark::State& state, Device& device, Stream& stream, size_t n_floats) {
  std::vector<float> host(n_floats);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : host) v = dist(rng);
  return Upload(state, device, stream, host.data(), n_floats * sizeof(float));
}

// C[m,n] = A[m,k] B[n,k]^T in f32. Arguments: m, n, k.
void BM_GemmF32(benchmark::State& state) {
  auto device = BenchDevice(state);
  if (!device) return;
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  Stream stream = std::move(device->CreateStream()).value();
  Buffer a = RandomBuffer(state, *device, stream, static_cast<size_t>(m * k));
  Buffer b = RandomBuffer(state, *device, stream, static_cast<size_t>(n * k));
  Buffer c = Allocate(state, *device, static_cast<uint64_t>(m * n) * sizeof(float));
  hwinfer_gemm_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_GEMM;
  desc.m = m;
  desc.n = n;
  desc.k = k;
  desc.b_transposed = 1;
  desc.alpha = 1.0f;
  desc.a = ContiguousView(a, 0, HWINFER_DTYPE_F32, {m, k});
  desc.b = ContiguousView(b, 0, HWINFER_DTYPE_F32, {n, k});
  desc.c = ContiguousView(c, 0, HWINFER_DTYPE_F32, {m, n});
  TimeKernel(state, *device, stream, AsKernelDesc(desc));
  const double flops = 2.0 * static_cast<double>(m * n * k);
  const double bytes = 4.0 * static_cast<double>(m * k + n * k + m * n);
  state.counters["FLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmF32)
    ->Args({64, 64, 64})
    ->Args({256, 256, 256})
    ->Args({512, 512, 512})
    ->Args({1, 4096, 4096})    // GEMV: one decode token through a 4096x4096 layer
    ->Args({128, 4096, 4096})  // a 128-token prefill chunk
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// Bandwidth probe. Arguments: mode (HWINFER_PROBE_*), MiB.
void BM_BandwidthProbe(benchmark::State& state) {
  auto device = BenchDevice(state);
  if (!device) return;
  const auto mode = static_cast<uint32_t>(state.range(0));
  const uint64_t size = static_cast<uint64_t>(state.range(1)) << 20;
  const auto n = static_cast<int64_t>(size);
  Stream stream = std::move(device->CreateStream()).value();
  Buffer src = RandomBuffer(state, *device, stream, size / sizeof(float));
  Buffer dst = RandomBuffer(state, *device, stream, size / sizeof(float));
  Buffer sink = Allocate(state, *device, 64);
  hwinfer_bandwidth_probe_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_BANDWIDTH_PROBE;
  desc.mode = mode;
  desc.iterations = 1;
  desc.size_bytes = size;
  desc.src = ContiguousView(src, 0, HWINFER_DTYPE_I8, {n});
  desc.dst = ContiguousView(dst, 0, HWINFER_DTYPE_I8, {n});
  desc.sink = ContiguousView(sink, 0, HWINFER_DTYPE_I8, {64});
  TimeKernel(state, *device, stream, AsKernelDesc(desc));
  const double bytes = (mode == HWINFER_PROBE_COPY ? 2.0 : 1.0) * static_cast<double>(size);
  state.counters["bytes/s"] =
      benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_BandwidthProbe)
    ->ArgNames({"mode", "MiB"})
    ->Args({HWINFER_PROBE_READ, 256})
    ->Args({HWINFER_PROBE_COPY, 256})
    ->Args({HWINFER_PROBE_WRITE, 256})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hwinfer

int main(int argc, char** argv) { return hwinfer::bench::BenchMain(argc, argv); }
