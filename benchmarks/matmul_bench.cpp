// matmul_bench.cpp — microbenchmarks of the matmuls a Llama model runs, per weight dtype (F32,
// F16, BF16 through gemm with b_transposed = 1; every GGUF block type through matmul_quantized),
// launched through the ABI and timed between device events:
//   BM_Gemv     m = 1 (decode), 8 launches per timed iteration: "weight_bytes/s" (the weight
//               matrix bytes per second; the reported time is per 8 GEMVs); TinyLlama shapes
//   BM_GemvLlama2_7b  the same at the llama2-7b shapes (F16, Q8_0, Q4_0), for the GPU targets
//   BM_DecodeBatch  m = 1..64 (batched decode) at the ffn_up shape, weights from DRAM: "rows/s"
//   BM_Matmul   m = 128 (a prefill chunk):  counter "FLOP/s" (2 m n k per launch)
//   BM_PrefillTinyLlama  the 7 matmuls of one TinyLlama-1.1B layer at m = 128, launched back to
//                        back: "FLOP/s", "layers_tok/s" (128 tokens / 22 layer times) and
//                        "output_ms" (the 32000 x 2048 output projection, median of 5)
// Weights: x [m, k] F32, w [n, k], y [m, n] F32 (TinyLlama: d_model 2048, ffn 5632, vocab 32000,
// 4 KV heads of 64). GEMV weights rotate over copies worth >= 256 MiB so that every launch reads
// them from DRAM, as decode does (one copy would sit in the 32 MiB L3). Usage:
//   hwinfer_matmul_bench [--backend=cpu] [--benchmark_repetitions=5 ...]
// Must not assert correctness: the conformance suite does that.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "hwinfer/tensor_view.h"
#include "reference/weight_blocks.h"

namespace hwinfer {
namespace {

using bench::Allocate;
using bench::BenchDevice;
using bench::Upload;

constexpr uint64_t kRotationBytes = uint64_t{256} << 20;
constexpr size_t kGemvsPerIteration = 8;

// Random weight bytes that decode to finite values of magnitude < 1 in |dtype|.
std::vector<uint8_t> RandomWeights(uint32_t dtype, int64_t n, int64_t k, std::mt19937& rng) {
  const uint64_t bytes = static_cast<uint64_t>(n) * RowBytes(dtype, k);
  std::vector<uint8_t> out(bytes);
  std::uniform_int_distribution<uint32_t> byte(0, 255);
  for (auto& b : out) b = static_cast<uint8_t>(byte(rng));
  auto put16 = [&](size_t at, uint16_t v) { std::memcpy(out.data() + at, &v, 2); };
  switch (dtype) {
    case HWINFER_DTYPE_F32: {
      std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
      for (size_t i = 0; i < bytes; i += 4) {
        const float v = uniform(rng);
        std::memcpy(out.data() + i, &v, 4);
      }
      break;
    }
    case HWINFER_DTYPE_F16:  // exponent 10..14: |value| in [2^-5, 1)
      for (size_t i = 0; i < bytes; i += 2) {
        put16(i, static_cast<uint16_t>((byte(rng) & 0x8000u) | ((10 + byte(rng) % 5) << 10) |
                                       (byte(rng) * 4 % 1024)));
      }
      break;
    case HWINFER_DTYPE_BF16:  // exponent 122..126
      for (size_t i = 0; i < bytes; i += 2) {
        put16(i, static_cast<uint16_t>(((byte(rng) & 1u) << 15) | ((122 + byte(rng) % 5) << 7) |
                                       (byte(rng) % 128)));
      }
      break;
    case HWINFER_DTYPE_Q8_0:
    case HWINFER_DTYPE_Q4_0: {  // random quants, scale 0.01 (f16 0x211f)
      const uint64_t block = DtypeBlockBytes(dtype);
      for (size_t i = 0; i < bytes; i += block) put16(i, 0x211f);
      break;
    }
    default:  // the other block types: random quants and sub-block scales, small f16 scales
      reference::fill_random_blocks(dtype, static_cast<int64_t>(bytes / DtypeBlockBytes(dtype)),
                                    rng(), out.data());
      break;
  }
  return out;
}

// The launch descriptor of y[m,n] = x[m,k] w[n,k]^T for |w_dtype|, as the executor issues it.
using MatmulLaunch = WeightMatmul;
MatmulLaunch MakeLaunch(uint32_t w_dtype, int64_t m, int64_t n, int64_t k, const Buffer& x,
                        const Buffer& w, const Buffer& y) {
  return MakeWeightMatmul(ContiguousView(x, 0, HWINFER_DTYPE_F32, {m, k}),
                          ContiguousView(w, 0, w_dtype, {n, k}),
                          ContiguousView(y, 0, HWINFER_DTYPE_F32, {m, n}));
}

Buffer RandomActivations(benchmark::State& state, Device& device, Stream& stream, int64_t m,
                         int64_t k, std::mt19937& rng) {
  std::vector<float> host(static_cast<size_t>(m * k));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : host) v = uniform(rng);
  return Upload(state, device, stream, host.data(), host.size() * sizeof(float));
}

// Times |launches| (each iteration: one group of them, the groups taken in turn) between two
// events. Skips |state| with the error when a warm-up launch fails.
void TimeGroups(benchmark::State& state, Device& device, Stream& stream,
                const std::vector<std::vector<MatmulLaunch>>& groups) {
  if (state.error_occurred()) return;  // an input did not fit the device
  Event start = std::move(device.CreateEvent()).value();
  Event end = std::move(device.CreateEvent()).value();
  for (const auto& group : groups) {
    for (const MatmulLaunch& launch : group) {
      Status warm = stream.Launch(launch.desc());
      if (warm.ok()) warm = stream.Synchronize();
      if (!warm.ok()) {
        state.SkipWithError(warm.ToString().c_str());
        return;
      }
    }
  }
  size_t next = 0;
  for (auto _ : state) {
    const auto& group = groups[next++ % groups.size()];
    (void)start.Record(stream);
    for (const MatmulLaunch& launch : group) (void)stream.Launch(launch.desc());
    (void)end.Record(stream);
    (void)stream.Synchronize();
    state.SetIterationTime(static_cast<double>(Event::ElapsedNs(start, end).value()) * 1e-9);
  }
}

// y[m, n] = x[m, k] w^T with w streamed from DRAM: each timed iteration launches
// kGemvsPerIteration matmuls back to back (different weight copies), as a decode step queues its
// matmuls, so host round trips between iterations do not count against the kernel.
void TimeStreamedWeights(benchmark::State& state, uint32_t dtype, int64_t m, int64_t n, int64_t k) {
  auto device = BenchDevice(state);
  if (!device) return;
  state.SetLabel(DtypeName(dtype));
  Stream stream = std::move(device->CreateStream()).value();
  std::mt19937 rng(1);
  const uint64_t w_bytes = static_cast<uint64_t>(n) * RowBytes(dtype, k);
  const auto copies =
      std::max<size_t>(kGemvsPerIteration, static_cast<size_t>(kRotationBytes / w_bytes + 1));
  Buffer x = RandomActivations(state, *device, stream, m, k, rng);
  Buffer y = Allocate(state, *device, static_cast<uint64_t>(m * n) * sizeof(float));
  const std::vector<uint8_t> host = RandomWeights(dtype, n, k, rng);
  std::vector<Buffer> weights;
  std::vector<MatmulLaunch> launches;
  for (size_t c = 0; c < copies; ++c) {
    weights.push_back(Upload(state, *device, stream, host.data(), host.size()));
    launches.push_back(MakeLaunch(dtype, m, n, k, x, weights.back(), y));
  }
  std::vector<std::vector<MatmulLaunch>> groups;  // consecutive copies, kGemvsPerIteration each
  for (size_t c = 0; c + kGemvsPerIteration <= copies; c += kGemvsPerIteration) {
    groups.emplace_back(launches.begin() + static_cast<std::ptrdiff_t>(c),
                        launches.begin() + static_cast<std::ptrdiff_t>(c + kGemvsPerIteration));
  }
  TimeGroups(state, *device, stream, groups);
  state.counters["weight_bytes/s"] =
      benchmark::Counter(static_cast<double>(w_bytes * kGemvsPerIteration),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(m * kGemvsPerIteration),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// Arguments: w dtype (HWINFER_DTYPE_*), n, k.  m = 1.
void BM_Gemv(benchmark::State& state) {
  TimeStreamedWeights(state, static_cast<uint32_t>(state.range(0)), 1, state.range(1),
                      state.range(2));
}

constexpr int64_t kF32 = HWINFER_DTYPE_F32, kF16 = HWINFER_DTYPE_F16, kBf16 = HWINFER_DTYPE_BF16,
                  kQ8 = HWINFER_DTYPE_Q8_0, kQ4 = HWINFER_DTYPE_Q4_0;

void GemvArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"dtype", "n", "k"});
  for (int64_t dtype :
       {kF32, kF16, kBf16, kQ8, kQ4, int64_t{HWINFER_DTYPE_Q4_1}, int64_t{HWINFER_DTYPE_Q5_0},
        int64_t{HWINFER_DTYPE_Q5_1}, int64_t{HWINFER_DTYPE_IQ4_NL}, int64_t{HWINFER_DTYPE_Q2_K},
        int64_t{HWINFER_DTYPE_Q3_K}, int64_t{HWINFER_DTYPE_Q4_K}, int64_t{HWINFER_DTYPE_Q5_K},
        int64_t{HWINFER_DTYPE_Q6_K}}) {
    for (auto [n, k] :
         {std::pair<int64_t, int64_t>{2048, 2048}, {5632, 2048}, {2048, 5632}, {32000, 2048}}) {
      b->Args({dtype, n, k});
    }
  }
}
BENCHMARK(BM_Gemv)->Apply(GemvArgs)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The llama2-7b decode GEMVs (d_model 4096, ffn 11008, vocab 32000) in the dtypes issue 6's GPU
// targets name (F16 and Q4_0) plus Q8_0: what tools/gpu-check.sh reports against the measured copy
// bandwidth. A separate name so the CPU's default runs stay on the TinyLlama shapes above.
void GemvLlama2_7bArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"dtype", "n", "k"});
  for (int64_t dtype : {kF16, kQ8, kQ4}) {
    for (auto [n, k] :
         {std::pair<int64_t, int64_t>{4096, 4096}, {11008, 4096}, {4096, 11008}, {32000, 4096}}) {
      b->Args({dtype, n, k});
    }
  }
}
void BM_GemvLlama2_7b(benchmark::State& state) { BM_Gemv(state); }
BENCHMARK(BM_GemvLlama2_7b)
    ->Apply(GemvLlama2_7bArgs)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Batched decode: m sequences' tokens against weights streamed from DRAM, the TinyLlama ffn_up
// shape. "rows/s" (tokens through this matmul per second) must not fall as m grows: a path switch
// that re-reads or re-packs the weights per step shows as a cliff. Arguments: w dtype, m.
void BM_DecodeBatch(benchmark::State& state) {
  TimeStreamedWeights(state, static_cast<uint32_t>(state.range(0)), state.range(1), 5632, 2048);
}
void DecodeBatchArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"dtype", "m"});
  for (int64_t dtype : {kF16, kBf16, kQ8, kQ4, int64_t{HWINFER_DTYPE_Q4_K}}) {
    for (int64_t m : {1, 4, 8, 9, 16, 32, 64}) b->Args({dtype, m});
  }
}
BENCHMARK(BM_DecodeBatch)->Apply(DecodeBatchArgs)->UseManualTime()->Unit(benchmark::kMillisecond);

// Arguments: w dtype, m, n, k.
void BM_Matmul(benchmark::State& state) {
  auto device = BenchDevice(state);
  if (!device) return;
  const auto dtype = static_cast<uint32_t>(state.range(0));
  const int64_t m = state.range(1), n = state.range(2), k = state.range(3);
  state.SetLabel(DtypeName(dtype));
  Stream stream = std::move(device->CreateStream()).value();
  std::mt19937 rng(2);
  Buffer x = RandomActivations(state, *device, stream, m, k, rng);
  Buffer y = Allocate(state, *device, static_cast<uint64_t>(m * n) * sizeof(float));
  const std::vector<uint8_t> host = RandomWeights(dtype, n, k, rng);
  Buffer w = Upload(state, *device, stream, host.data(), host.size());
  TimeGroups(state, *device, stream, {{MakeLaunch(dtype, m, n, k, x, w, y)}});
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * n * k),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void MatmulArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"dtype", "m", "n", "k"});
  for (int64_t dtype : {kF32, kF16, kBf16, kQ8, kQ4}) {
    for (auto [n, k] : {std::pair<int64_t, int64_t>{2048, 2048}, {5632, 2048}, {2048, 5632}}) {
      b->Args({dtype, 128, n, k});
    }
  }
}
BENCHMARK(BM_Matmul)->Apply(MatmulArgs)->UseManualTime()->Unit(benchmark::kMillisecond);

// One TinyLlama-1.1B layer's matmuls at m = 128 (q, k, v, o, gate, up, down), then separately the
// output projection; tok/s = 128 / (22 * layer time + output time). Argument: w dtype.
void BM_PrefillTinyLlama(benchmark::State& state) {
  auto device = BenchDevice(state);
  if (!device) return;
  const auto dtype = static_cast<uint32_t>(state.range(0));
  state.SetLabel(DtypeName(dtype));
  constexpr int64_t m = 128, d_model = 2048, d_kv = 256, d_ffn = 5632, vocab = 32000;
  constexpr int64_t kLayers = 22;
  struct Shape {
    int64_t n, k;
  };
  const Shape layer[] = {{d_model, d_model}, {d_kv, d_model},  {d_kv, d_model}, {d_model, d_model},
                         {d_ffn, d_model},   {d_ffn, d_model}, {d_model, d_ffn}};
  Stream stream = std::move(device->CreateStream()).value();
  std::mt19937 rng(3);
  Buffer x = RandomActivations(state, *device, stream, m, d_ffn, rng);  // big enough for every k
  Buffer y = Allocate(state, *device, static_cast<uint64_t>(m * vocab) * sizeof(float));
  std::vector<Buffer> weights;
  std::vector<MatmulLaunch> layer_launches;
  double layer_flops = 0;
  for (const Shape& s : layer) {
    const std::vector<uint8_t> host = RandomWeights(dtype, s.n, s.k, rng);
    weights.push_back(Upload(state, *device, stream, host.data(), host.size()));
    layer_launches.push_back(MakeLaunch(dtype, m, s.n, s.k, x, weights.back(), y));
    layer_flops += 2.0 * m * static_cast<double>(s.n * s.k);
  }
  const std::vector<uint8_t> host = RandomWeights(dtype, vocab, d_model, rng);
  Buffer output = Upload(state, *device, stream, host.data(), host.size());
  const MatmulLaunch output_launch = MakeLaunch(dtype, m, vocab, d_model, x, output, y);
  const double output_flops = 2.0 * m * static_cast<double>(vocab * d_model);

  // The output projection, timed once up front (median of 5) for the projection.
  Event start = std::move(device->CreateEvent()).value();
  Event end = std::move(device->CreateEvent()).value();
  std::vector<double> output_s;
  for (int r = 0; r < 6; ++r) {
    (void)start.Record(stream);
    (void)stream.Launch(output_launch.desc());
    (void)end.Record(stream);
    (void)stream.Synchronize();
    if (r > 0) output_s.push_back(static_cast<double>(Event::ElapsedNs(start, end).value()) * 1e-9);
  }
  std::sort(output_s.begin(), output_s.end());
  TimeGroups(state, *device, stream, {layer_launches});
  state.counters["FLOP/s"] =
      benchmark::Counter(layer_flops, benchmark::Counter::kIsIterationInvariantRate);
  // "layers_tok/s": 128 tokens per 22 layers' time (without the output projection);
  // whole-model tok/s = 128 / (22 * layer time + output_ms).
  state.counters["output_ms"] = output_s[output_s.size() / 2] * 1e3;
  state.counters["layers_tok/s"] = benchmark::Counter(
      static_cast<double>(m) / kLayers, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["output_GFLOP/s"] = output_flops / output_s[output_s.size() / 2] * 1e-9;
}
BENCHMARK(BM_PrefillTinyLlama)
    ->ArgNames({"dtype"})
    ->Arg(kF32)
    ->Arg(kF16)
    ->Arg(kBf16)
    ->Arg(kQ8)
    ->Arg(kQ4)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hwinfer

int main(int argc, char** argv) { return hwinfer::bench::BenchMain(argc, argv); }
