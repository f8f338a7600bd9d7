// attention_bench.cpp — microbenchmarks of the paged-KV kernels through the plugin ABI, timed
// between device events (manual time): paged decode attention (bytes/s of KV read) and attention
// prefill (FLOP/s), on the TinyLlama-1.1B attention shape (32 heads, 4 KV heads, head_dim 64,
// KV blocks of 16 tokens). Usage:
//   hwinfer_attention_bench [--backend=cpu] [--benchmark_repetitions=5 ...]
// Must not assert correctness: the conformance suite does that.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

using bench::Allocate;
using bench::BenchDevice;
using bench::TimeKernel;
using bench::Upload;

constexpr int64_t kHeads = 32, kKvHeads = 4, kHeadDim = 64, kBlockSize = 16;

// Finite f16 values of magnitude about 2^-5 .. 1 (random sign, exponent and mantissa).
std::vector<uint16_t> RandomHalves(size_t n, std::mt19937& rng) {
  std::vector<uint16_t> values(n);
  for (uint16_t& v : values) {
    const auto r = static_cast<uint32_t>(rng());
    v = static_cast<uint16_t>((r & 0x8000u) | ((10u + (r >> 16) % 5u) << 10) | (r & 0x3ffu));
  }
  return values;
}

// Paged decode. Arguments: batch (sequences), context (tokens each), pool dtype (F16 | I8).
void BM_AttentionDecodePaged(benchmark::State& state) {
  auto device = BenchDevice(state);
  if (!device) return;
  const int64_t batch = state.range(0), context = state.range(1);
  const auto dtype = static_cast<uint32_t>(state.range(2));
  const int64_t blocks_per_seq = (context + kBlockSize - 1) / kBlockSize;
  const int64_t num_blocks = batch * blocks_per_seq;
  const int64_t pool_elems = num_blocks * kBlockSize * kKvHeads * kHeadDim;
  const int64_t elem_bytes = dtype == HWINFER_DTYPE_F16 ? 2 : 1;
  Stream stream = std::move(device->CreateStream()).value();
  std::mt19937 rng(1);
  const std::vector<uint16_t> halves = RandomHalves(static_cast<size_t>(pool_elems), rng);
  // I8 pools reuse the same random bytes (any int8 is valid), with scale 0.01.
  const size_t pool_bytes = static_cast<size_t>(pool_elems * elem_bytes);
  Buffer k_cache = Upload(state, *device, stream, halves.data(), pool_bytes);
  Buffer v_cache = Upload(state, *device, stream, halves.data(), pool_bytes);
  const std::vector<float> scales(static_cast<size_t>(num_blocks * kKvHeads), 0.01f);
  Buffer k_scales = Upload(state, *device, stream, scales.data(), scales.size() * sizeof(float));
  Buffer v_scales = Upload(state, *device, stream, scales.data(), scales.size() * sizeof(float));
  std::vector<int32_t> tables(static_cast<size_t>(num_blocks));
  std::iota(tables.begin(), tables.end(), 0);
  std::shuffle(tables.begin(), tables.end(), rng);
  Buffer block_tables =
      Upload(state, *device, stream, tables.data(), tables.size() * sizeof(int32_t));
  const std::vector<int32_t> lens(static_cast<size_t>(batch), static_cast<int32_t>(context));
  Buffer context_lens = Upload(state, *device, stream, lens.data(), lens.size() * sizeof(int32_t));
  const std::vector<float> q_f32(static_cast<size_t>(batch * kHeads * kHeadDim), 0.5f);
  Buffer q = Upload(state, *device, stream, q_f32.data(), q_f32.size() * sizeof(float));
  Buffer out = Allocate(state, *device, q_f32.size() * sizeof(float));

  hwinfer_attention_decode_paged_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_ATTENTION_DECODE_PAGED;
  desc.n_seqs = batch;
  desc.n_heads = kHeads;
  desc.n_kv_heads = kKvHeads;
  desc.head_dim = kHeadDim;
  desc.block_size = kBlockSize;
  desc.max_blocks_per_seq = blocks_per_seq;
  desc.scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  desc.q = ContiguousView(q, 0, HWINFER_DTYPE_F32, {batch, kHeads, kHeadDim});
  desc.out = ContiguousView(out, 0, HWINFER_DTYPE_F32, {batch, kHeads, kHeadDim});
  desc.k_cache = ContiguousView(k_cache, 0, dtype, {num_blocks, kBlockSize, kKvHeads, kHeadDim});
  desc.v_cache = ContiguousView(v_cache, 0, dtype, {num_blocks, kBlockSize, kKvHeads, kHeadDim});
  if (dtype == HWINFER_DTYPE_I8) {
    desc.k_scales = ContiguousView(k_scales, 0, HWINFER_DTYPE_F32, {num_blocks, kKvHeads});
    desc.v_scales = ContiguousView(v_scales, 0, HWINFER_DTYPE_F32, {num_blocks, kKvHeads});
  }
  desc.block_tables = ContiguousView(block_tables, 0, HWINFER_DTYPE_I32, {batch, blocks_per_seq});
  desc.context_lens = ContiguousView(context_lens, 0, HWINFER_DTYPE_I32, {batch});
  TimeKernel(state, *device, stream, AsKernelDesc(desc));
  // KV bytes read: K and V of every context token, every KV head.
  const double kv_bytes =
      2.0 * static_cast<double>(batch * context * kKvHeads * kHeadDim * elem_bytes);
  state.counters["kv_bytes/s"] =
      benchmark::Counter(kv_bytes, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_AttentionDecodePaged)
    ->ArgNames({"batch", "context", "dtype"})
    ->ArgsProduct({{1, 16}, {512, 4096}, {HWINFER_DTYPE_F16, HWINFER_DTYPE_I8}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// Causal prefill of one sequence, f32 q/k/v/out. Argument: tokens.
void BM_AttentionPrefill(benchmark::State& state) {
  auto device = BenchDevice(state);
  if (!device) return;
  const int64_t tokens = state.range(0);
  Stream stream = std::move(device->CreateStream()).value();
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> q_values(static_cast<size_t>(tokens * kHeads * kHeadDim));
  std::vector<float> kv_values(static_cast<size_t>(tokens * kKvHeads * kHeadDim));
  for (float& v : q_values) v = dist(rng);
  for (float& v : kv_values) v = dist(rng);
  Buffer q = Upload(state, *device, stream, q_values.data(), q_values.size() * sizeof(float));
  Buffer k = Upload(state, *device, stream, kv_values.data(), kv_values.size() * sizeof(float));
  Buffer v = Upload(state, *device, stream, kv_values.data(), kv_values.size() * sizeof(float));
  Buffer out = Allocate(state, *device, q_values.size() * sizeof(float));
  const std::vector<int32_t> starts = {0, static_cast<int32_t>(tokens)};
  Buffer query_start =
      Upload(state, *device, stream, starts.data(), starts.size() * sizeof(int32_t));
  hwinfer_attention_prefill_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_ATTENTION_PREFILL;
  desc.n_tokens = tokens;
  desc.n_seqs = 1;
  desc.n_heads = kHeads;
  desc.n_kv_heads = kKvHeads;
  desc.head_dim = kHeadDim;
  desc.scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  desc.causal = 1;
  desc.q = ContiguousView(q, 0, HWINFER_DTYPE_F32, {tokens, kHeads, kHeadDim});
  desc.k = ContiguousView(k, 0, HWINFER_DTYPE_F32, {tokens, kKvHeads, kHeadDim});
  desc.v = ContiguousView(v, 0, HWINFER_DTYPE_F32, {tokens, kKvHeads, kHeadDim});
  desc.out = ContiguousView(out, 0, HWINFER_DTYPE_F32, {tokens, kHeads, kHeadDim});
  desc.query_start = ContiguousView(query_start, 0, HWINFER_DTYPE_I32, {2});
  desc.k_cache = desc.v_cache = desc.k_scales = desc.v_scales = desc.block_tables =
      desc.context_lens = NoView();
  TimeKernel(state, *device, stream, AsKernelDesc(desc));
  // Causal: T (T + 1) / 2 query-key pairs per head, 2 * head_dim FLOPs each for QK^T and for PV.
  const double pairs = static_cast<double>(tokens) * static_cast<double>(tokens + 1) / 2.0;
  const double flops = 4.0 * pairs * static_cast<double>(kHeads * kHeadDim);
  state.counters["FLOP/s"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_AttentionPrefill)
    ->ArgNames({"tokens"})
    ->Arg(128)
    ->Arg(512)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hwinfer

int main(int argc, char** argv) { return hwinfer::bench::BenchMain(argc, argv); }
