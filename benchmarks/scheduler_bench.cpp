// scheduler_bench.cpp — host cost of the scheduler and the per-step metrics bookkeeping, the part
// of every step that is not the model (issue 4's target: below 2% of the step time at batch 256 on
// the simulated backend, where a llama2-7b f16 decode step at batch 256 on H100 SXM takes ~40 ms
// of virtual time; numbers in docs/PERFORMANCE.md).
//
// BM_SchedulerDecodeStep/B: B running requests (plus 4 x B waiting behind them, refilled as
// requests finish); one iteration = Schedule + the executor's KV appends + Complete + recording
// each token's time and the step record, as bench_runner.cpp does. No device: the model's time is
// not included.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "hwinfer/kv_block_manager.h"
#include "hwinfer/metrics.h"
#include "hwinfer/scheduler.h"

namespace {

using namespace hwinfer;

void BM_SchedulerDecodeStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  const int64_t prompt = 512;  // + 1500 outputs = 2012 tokens: a full cache of long sequences
  KvBlockManager kv(static_cast<int32_t>(batch * 2048 / 16), 16);
  SchedulerOptions options;
  options.max_sequences = batch;
  options.max_batch_tokens = 8192;
  options.max_model_len = 2048;
  auto scheduler = Scheduler::Create(options, &kv);
  if (!scheduler.ok()) {
    state.SkipWithError(scheduler.status().ToString().c_str());
    return;
  }
  // Every finished request is replaced by a new one, so the load never drains: B running and
  // 4 x B waiting at all times.
  int64_t next_id = 0;
  std::vector<RequestRecord> records;
  auto add_request = [&] {
    Request r;
    r.id = next_id++;
    r.prompt.assign(static_cast<size_t>(prompt), 7);
    r.max_new_tokens = 1500;
    records.emplace_back();
    return (*scheduler)->Add(std::move(r));
  };
  for (int64_t i = 0; i < 5 * batch; ++i) {
    if (Status added = add_request(); !added.ok()) {
      state.SkipWithError(added.ToString().c_str());
      return;
    }
  }
  std::vector<StepRecord> steps;
  double now = 0;
  auto step = [&] {
    StepPlan plan = (*scheduler)->Schedule(now, false);
    for (const SequenceChunk& c : plan.chunks) {
      (void)kv.Append(c.sequence, static_cast<int64_t>(c.tokens.size()));
    }
    const std::vector<int32_t> sampled(plan.chunks.size(), 11);
    now += 0.006;
    for (const TokenEvent& e : (*scheduler)->Complete(plan, sampled)) {
      records[static_cast<size_t>(e.request)].token_times_s.push_back(now);
      if (e.finished) (void)add_request();
    }
    StepRecord s;
    s.end_s = now;
    s.decode_tokens = plan.decode_tokens;
    s.prefill_tokens = plan.prefill_tokens;
    s.kv_used_blocks = kv.num_used_blocks();
    steps.push_back(s);
    return plan.decode_tokens;
  };
  // Warm up until the whole batch is decoding.
  for (int i = 0; i < 1000 && step() < batch; ++i) {
  }
  int64_t tokens = 0;
  for (auto _ : state) tokens += step();
  state.counters["decode_tokens_per_step"] =
      benchmark::Counter(static_cast<double>(tokens) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_SchedulerDecodeStep)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
