// bench_runner_test.cpp — the benchmark loop end to end: on the CPU backend with the shared tiny
// Llama (tokens must equal each request generated alone; the JSON must be complete and agree with
// the per-request records), and on the simulated backend (deterministic; preemption must not
// change any output; continuous batching must beat static batching on a mixed workload; max_length
// KV reservation caps the batch by memory).
#include "hwinfer/bench_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gguf_edit.h"
#include "hwinfer/dataset.h"
#include "hwinfer/generate.h"
#include "hwinfer/gguf.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/registry.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

std::string DataFile(const std::string& name) {
  return std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + name;
}

// A fresh registry per device so the plugin's threads end with the test (see
// llama_executor_test.cpp).
std::shared_ptr<Device> OpenDevice(const std::string& id) {
  auto registry = Registry::FromSearchPaths({HWINFER_PLUGIN_BUILD_DIR});
  EXPECT_TRUE(registry.ok()) << registry.status().ToString();
  if (!registry.ok()) return nullptr;
  auto found = registry->Find(id);
  EXPECT_TRUE(found.ok()) << found.status().ToString();
  if (!found.ok()) return nullptr;
  auto device = registry->Open(**found);
  EXPECT_TRUE(device.ok()) << device.status().ToString();
  return device.ok() ? *device : nullptr;
}

// A mixed workload on the tiny model: 10 requests, prompts 4..40 tokens, outputs 1..12 tokens.
BenchConfig MixedConfig(const std::string& model_file) {
  BenchConfig config;
  config.file = "test";
  config.model.path = DataFile(model_file);
  config.workload.num_requests = 10;
  config.workload.input.kind = LengthDistribution::Kind::kUniform;
  config.workload.input.min = 4;
  config.workload.input.max = 40;
  config.workload.output.kind = LengthDistribution::Kind::kUniform;
  config.workload.output.min = 1;
  config.workload.output.max = 12;
  config.workload.seed = 7;
  config.scheduler.max_batch_tokens = 32;  // forces chunked prefill of the longer prompts
  config.scheduler.max_sequences = 4;
  return config;
}

BenchRunOptions FixedPeaks() {
  BenchRunOptions options;
  options.measured_bandwidth_bytes_per_s = 1e10;  // skip the probe: the test checks bookkeeping
  options.measured_flops = 1e11;
  return options;
}

TEST(BenchRunner, CpuTokensEqualEachRequestAlone) {
  const BenchConfig config = MixedConfig("tiny-llama-f32.gguf");
  auto device = OpenDevice("cpu:0");
  ASSERT_NE(device, nullptr);
  auto result = RunBench(config, device, FixedPeaks());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto workload = GenerateWorkload(config.workload, 512);
  ASSERT_TRUE(workload.ok());
  ASSERT_EQ(result->outputs.size(), workload->size());

  auto model = LlamaModel::Open(config.model.path);
  ASSERT_TRUE(model.ok());
  auto executor = LlamaExecutor::Create(device, *model, ExecutorOptions{});
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  for (const WorkloadRequest& w : *workload) {
    auto alone = Generate(**executor, {w.prompt}, w.output_len, SamplingParams{},
                          /*first_sequence=*/1000 + w.id);
    ASSERT_TRUE(alone.ok()) << alone.status().ToString();
    EXPECT_EQ(result->outputs[static_cast<size_t>(w.id)], alone->tokens[0]) << "request " << w.id;
  }
}

TEST(BenchRunner, CpuJsonIsCompleteAndConsistent) {
  const BenchConfig config = MixedConfig("tiny-llama-q8_0.gguf");
  auto result = RunBench(config, OpenDevice("cpu:0"), FixedPeaks());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const nlohmann::json& j = result->json;
  for (const char* key : {"duration",
                          "completed",
                          "failed",
                          "total_input_tokens",
                          "total_output_tokens",
                          "request_throughput",
                          "output_throughput",
                          "total_token_throughput",
                          "mean_ttft_ms",
                          "median_ttft_ms",
                          "p99_ttft_ms",
                          "mean_tpot_ms",
                          "median_tpot_ms",
                          "p99_itl_ms",
                          "mean_e2el_ms",
                          "phases",
                          "env",
                          "model",
                          "workload",
                          "scheduler",
                          "hardware"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["completed"].get<int64_t>(), 10);
  EXPECT_EQ(j["failed"].get<int64_t>(), 0);
  EXPECT_EQ(j["env"]["backend"].get<std::string>(), "cpu");

  // Per request: E2E = TTFT + TPOT x (n_out - 1), and the JSON's totals and means agree.
  int64_t outputs = 0, inputs = 0;
  double e2e_sum = 0;
  for (const RequestRecord& r : result->requests) {
    ASSERT_FALSE(r.failed) << r.error;
    ASSERT_EQ(r.output_tokens, static_cast<int64_t>(r.token_times_s.size()));
    ASSERT_TRUE(std::is_sorted(r.token_times_s.begin(), r.token_times_s.end()));
    const double ttft = r.token_times_s.front() - r.arrival_s;
    const double e2e = r.token_times_s.back() - r.arrival_s;
    if (r.output_tokens > 1) {
      const double tpot = (e2e - ttft) / static_cast<double>(r.output_tokens - 1);
      EXPECT_NEAR(e2e, ttft + tpot * static_cast<double>(r.output_tokens - 1), 1e-9);
    }
    EXPECT_GE(r.first_scheduled_s, r.arrival_s);
    EXPECT_LE(r.first_scheduled_s, r.token_times_s.front());
    outputs += r.output_tokens;
    inputs += r.input_tokens;
    e2e_sum += e2e;
  }
  EXPECT_EQ(j["total_output_tokens"].get<int64_t>(), outputs);
  EXPECT_EQ(j["total_input_tokens"].get<int64_t>(), inputs);
  EXPECT_NEAR(j["mean_e2el_ms"].get<double>(), 1e3 * e2e_sum / 10, 1e-6);
  // E2E ~ TTFT + TPOT x (n_out - 1) also holds for the means within the spread of n_out.
  EXPECT_GT(j["mean_e2el_ms"].get<double>(), j["mean_ttft_ms"].get<double>());
  // Every token came from a step, and the steps' byte counts are real.
  int64_t step_tokens = 0;
  for (const StepRecord& s : result->steps) {
    EXPECT_GT(s.bytes, 0);
    EXPECT_GT(s.flops, 0);
    EXPECT_LE(s.prefill_tokens + s.decode_tokens, config.scheduler.max_batch_tokens);
    EXPECT_LE(s.sequences, config.scheduler.max_sequences);
    step_tokens += s.prefill_tokens + s.decode_tokens;
  }
  // Each request feeds its prompt plus every output token but the last.
  EXPECT_EQ(step_tokens, inputs + outputs - 10);
  EXPECT_GT(j["phases"]["decode"]["mbu_measured"].get<double>(), 0);
  // The hardware section says which peaks the utilisations are against: here given by the caller
  // (no probe) for the model's q8_0 matmuls.
  EXPECT_EQ(j["hardware"]["measured_flops_dtype"], "q8_0");
  EXPECT_EQ(j["hardware"]["measured_flops_probe"]["m"], 0);
  EXPECT_DOUBLE_EQ(j["hardware"]["measured_flops"].get<double>(), 1e11);
  EXPECT_EQ(result->summary.peaks.flops_weight_dtype, HWINFER_DTYPE_Q8_0);
}

TEST(BenchPeaks, SpecPeaksUseTheFigureOfTheDtypeTheWorkComputesIn) {
  DeviceInfo spec;
  spec.spec_peak_bandwidth_bytes_per_s = 5e11;
  spec.spec_peak_flops_f32 = 1e12;
  spec.spec_peak_flops_f16 = 2e12;
  spec.spec_peak_flops_bf16 = 3e12;
  spec.spec_peak_flops_int8 = 4e12;
  spec.spec_source = "x.yaml";
  const struct {
    uint32_t weights, figure;
    double flops;
  } cases[] = {
      {HWINFER_DTYPE_F32, HWINFER_DTYPE_F32, 1e12},   {HWINFER_DTYPE_F16, HWINFER_DTYPE_F16, 2e12},
      {HWINFER_DTYPE_BF16, HWINFER_DTYPE_BF16, 3e12}, {HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_I8, 4e12},
      {HWINFER_DTYPE_Q4_0, HWINFER_DTYPE_I8, 4e12},   {HWINFER_DTYPE_Q4_K, HWINFER_DTYPE_I8, 4e12},
      {HWINFER_DTYPE_Q6_K, HWINFER_DTYPE_I8, 4e12}};
  for (const auto& c : cases) {
    const PeakRates peaks = SpecPeaks(spec, c.weights);
    EXPECT_EQ(peaks.flops_weight_dtype, c.weights) << DtypeName(c.weights);
    EXPECT_EQ(peaks.spec_flops_dtype, c.figure) << DtypeName(c.weights);
    EXPECT_EQ(peaks.spec_flops, c.flops) << DtypeName(c.weights);
    EXPECT_EQ(peaks.spec_bandwidth_bytes_per_s, 5e11);
    EXPECT_EQ(peaks.spec_source, "x.yaml");
  }
  // No int8 figure: block-quantized work is read against f16 (a dequantizing device), and says so.
  spec.spec_peak_flops_int8 = 0;
  const PeakRates q4 = SpecPeaks(spec, HWINFER_DTYPE_Q4_0);
  EXPECT_EQ(q4.spec_flops_dtype, HWINFER_DTYPE_F16);
  EXPECT_EQ(q4.spec_flops, 2e12);
  EXPECT_THAT(PeakDescription(q4, PeakKind::kSpecFlops), ::testing::HasSubstr("no int8 figure"));
  // Only an f32 figure (a CPU's spec): every dtype falls back to it, as the simulator prices them.
  DeviceInfo cpu;
  cpu.spec_peak_flops_f32 = 1e12;
  for (const uint32_t weights : {HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16, HWINFER_DTYPE_Q8_0}) {
    const PeakRates fallback = SpecPeaks(cpu, weights);
    EXPECT_EQ(fallback.spec_flops_dtype, HWINFER_DTYPE_F32) << DtypeName(weights);
    EXPECT_EQ(fallback.spec_flops, 1e12) << DtypeName(weights);
  }
  EXPECT_EQ(PeakDescription(SpecPeaks(cpu, HWINFER_DTYPE_BF16), PeakKind::kSpecFlops),
            "spec f32 peak 1.00 TFLOP/s (no bf16 figure for bf16 weights)");
  // No spec at all: the figure the work would need is named, and is unknown.
  const PeakRates unknown = SpecPeaks(DeviceInfo{}, HWINFER_DTYPE_Q8_0);
  EXPECT_EQ(unknown.spec_flops_dtype, HWINFER_DTYPE_I8);
  EXPECT_EQ(unknown.spec_flops, 0);
  EXPECT_EQ(PeakDescription(unknown, PeakKind::kSpecFlops), "spec int8 peak unknown");
}

TEST(BenchPeaks, TheProbedFlopsPeakIsTheMatmulOfTheModelsOwnWeightDtype) {
  auto device = OpenDevice("cpu:0");
  ASSERT_NE(device, nullptr);
  for (const auto& [file, dtype] : {std::pair{"tiny-llama-q8_0.gguf", HWINFER_DTYPE_Q8_0},
                                    std::pair{"tiny-llama-f16.gguf", HWINFER_DTYPE_F16}}) {
    SCOPED_TRACE(file);
    auto model = LlamaModel::Open(DataFile(file));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    auto peaks = ModelPeaks(device, **model, std::nullopt, /*probe=*/true, 0, 0);
    ASSERT_TRUE(peaks.ok()) << peaks.status().ToString();
    EXPECT_EQ(peaks->flops_weight_dtype, dtype);
    EXPECT_GT(peaks->measured_flops, 0);
    // At the model's prefill shape: 512 tokens x d_model x d_model.
    EXPECT_EQ(peaks->measured_flops_probe.m, 512);
    EXPECT_EQ(peaks->measured_flops_probe.n, (*model)->shape().d_model);
    EXPECT_EQ(peaks->measured_flops_probe.k, (*model)->shape().d_model);
    EXPECT_GT(peaks->measured_bandwidth_bytes_per_s, 0);
    EXPECT_EQ(peaks->measured_bandwidth_probe_bytes, 64ull << 20);
    EXPECT_THAT(PeakDescription(*peaks, PeakKind::kMeasuredFlops),
                ::testing::HasSubstr(std::string("measured ") + DtypeName(dtype) + " matmul peak"));
  }
  // Given peaks are kept and not probed.
  auto model = LlamaModel::Open(DataFile("tiny-llama-q4_0.gguf"));
  ASSERT_TRUE(model.ok());
  auto given = ModelPeaks(device, **model, std::nullopt, /*probe=*/true, 1e10, 2e10);
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ(given->measured_bandwidth_bytes_per_s, 1e10);
  EXPECT_EQ(given->measured_flops, 2e10);
  EXPECT_EQ(given->measured_flops_probe.m, 0);
  EXPECT_EQ(given->flops_weight_dtype, HWINFER_DTYPE_Q4_0);
}

TEST(BenchRunner, EveryModeCompletesOnCpu) {
  for (BatchingMode mode : {BatchingMode::kStatic, BatchingMode::kDynamic}) {
    BenchConfig config = MixedConfig("tiny-llama-q4_0.gguf");
    config.scheduler.mode = mode;
    auto result = RunBench(config, OpenDevice("cpu:0"), FixedPeaks());
    ASSERT_TRUE(result.ok()) << BatchingModeName(mode) << ": " << result.status().ToString();
    EXPECT_EQ(result->summary.completed, 10) << BatchingModeName(mode);
  }
}

TEST(BenchRunner, RequestThatCanNeverFitIsRecordedAsFailed) {
  BenchConfig config = MixedConfig("tiny-llama-f32.gguf");
  config.workload.input.kind = LengthDistribution::Kind::kFixed;
  config.workload.input.value = 600;  // over the tiny model's 512-token context
  config.workload.num_requests = 2;
  auto result = RunBench(config, OpenDevice("cpu:0"), FixedPeaks());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->summary.failed, 2);
  EXPECT_EQ(result->summary.completed, 0);
  EXPECT_THAT(result->requests[0].error, ::testing::HasSubstr("600"));
  EXPECT_EQ(result->json["input_lens"], nlohmann::json({600, 600}));
  EXPECT_EQ(result->json["output_lens"], nlohmann::json({0, 0}));
  EXPECT_FALSE(result->json.contains("generated_texts"));
}

TEST(BenchRunner, SimulatedPreemptionChangesNoOutput) {
  BenchConfig roomy = MixedConfig("tiny-llama-f16.gguf");
  roomy.workload.num_requests = 24;
  roomy.workload.output.max = 40;
  roomy.scheduler.max_sequences = 8;
  roomy.kv_cache_tokens = 8 * 512;
  BenchConfig tight = roomy;
  tight.kv_cache_tokens = 160;  // 10 blocks of 16: far too few for 8 sequences -> preemption
  auto a = RunBench(roomy, OpenDevice("sim:0"), FixedPeaks());
  auto b = RunBench(tight, OpenDevice("sim:0"), FixedPeaks());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(a->summary.preemptions, 0);
  EXPECT_GT(b->summary.preemptions, 0);
  EXPECT_EQ(a->outputs, b->outputs);
  // Pseudo-tokens depend on the token history: not all the same token.
  std::vector<int32_t> all;
  for (const auto& o : a->outputs) all.insert(all.end(), o.begin(), o.end());
  std::sort(all.begin(), all.end());
  EXPECT_GT(std::unique(all.begin(), all.end()) - all.begin(), 10);
  // The virtual clock is deterministic: the same run twice takes the same time.
  auto again = RunBench(roomy, OpenDevice("sim:0"), FixedPeaks());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->summary.duration_s, a->summary.duration_s);
  EXPECT_TRUE(a->json["env"]["virtual_clock"].get<bool>());
}

// Preemption by recompute prefills a request's prompt and output so far again, through the
// prefill kernels where they first ran through decode ones: the same math, not the same order of
// operations. On F32 weights the greedy tokens come out equal; on Q8_0 a recomputed request may
// take the other of two candidates whose logits tie to within rounding (README, "Scheduler"),
// never a clear winner.
TEST(BenchRunner, CpuPreemptionKeepsOutputsUpToNearTies) {
  for (const char* file : {"tiny-llama-f32.gguf", "tiny-llama-q8_0.gguf"}) {
    SCOPED_TRACE(file);
    BenchConfig roomy = MixedConfig(file);
    roomy.workload.num_requests = 16;
    roomy.workload.output.max = 32;
    roomy.scheduler.max_sequences = 8;
    roomy.kv_cache_tokens = 8 * 512;
    BenchConfig tight = roomy;
    tight.kv_cache_tokens = 160;  // 10 blocks of 16 for 8 sequences: preemption
    BenchRunOptions options = FixedPeaks();
    options.top_logits = 2;
    auto a = RunBench(roomy, OpenDevice("cpu:0"), options);
    auto b = RunBench(tight, OpenDevice("cpu:0"), options);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(a->summary.preemptions, 0);
    EXPECT_GT(b->summary.preemptions, 0);
    int differing = 0;
    for (size_t r = 0; r < a->outputs.size(); ++r) {
      const auto& x = a->outputs[r];
      const auto& y = b->outputs[r];
      const size_t p = static_cast<size_t>(
          std::mismatch(x.begin(), x.end(), y.begin(), y.end()).first - x.begin());
      if (p == x.size() && x.size() == y.size()) continue;
      ++differing;
      ASSERT_LT(p, std::min(x.size(), y.size())) << "request " << r << " changed length";
      for (const auto* top : {&a->top_logits[r][p], &b->top_logits[r][p]}) {
        ASSERT_EQ(top->size(), 2u);
        EXPECT_LE((*top)[0].logit - (*top)[1].logit, 0.01f)
            << "request " << r << " position " << p << " diverged at a clear winner";
      }
    }
    if (std::string(file) == "tiny-llama-f32.gguf") {
      EXPECT_EQ(differing, 0);
    }
    std::printf("%s: %d of %zu outputs differ under preemption, each at a near-tie\n", file,
                differing, a->outputs.size());
  }
}

TEST(BenchRunner, SimulatedContinuousBatchingBeatsStatic) {
  BenchConfig config = MixedConfig("tiny-llama-f16.gguf");
  config.workload.num_requests = 32;
  config.workload.output.min = 1;
  config.workload.output.max = 64;
  config.scheduler.max_sequences = 8;
  config.scheduler.max_batch_tokens = 256;
  BenchConfig fixed = config;
  fixed.scheduler.mode = BatchingMode::kStatic;
  auto continuous = RunBench(config, OpenDevice("sim:0"), FixedPeaks());
  auto static_batch = RunBench(fixed, OpenDevice("sim:0"), FixedPeaks());
  ASSERT_TRUE(continuous.ok()) << continuous.status().ToString();
  ASSERT_TRUE(static_batch.ok()) << static_batch.status().ToString();
  EXPECT_GT(continuous->summary.output_throughput, 1.2 * static_batch->summary.output_throughput);
}

int64_t MostSequencesInAStep(const BenchResult& result) {
  int64_t most = 0;
  for (const StepRecord& step : result.steps) most = std::max(most, step.sequences);
  return most;
}

// The article's memory argument on one KV cache of 100 blocks of 16 tokens: under max_length
// reservation every admitted request holds the blocks of the tiny model's whole 512-token context
// (32 blocks), so a dynamic batch runs 3 requests where paged runs all 8; the reserved blocks
// count as used, the tokens held stay those of the requests.
TEST(BenchRunner, SimulatedMaxLengthReservationCapsTheBatchByMemory) {
  BenchConfig paged = MixedConfig("tiny-llama-f16.gguf");
  paged.workload.num_requests = 24;
  paged.scheduler.mode = BatchingMode::kDynamic;
  paged.scheduler.max_sequences = 8;
  paged.scheduler.max_batch_tokens = 512;  // a whole batch's prompts in one step
  paged.kv_cache_tokens = 3 * 512 + 64;
  BenchConfig reserved = paged;
  reserved.scheduler.kv_reservation = KvReservation::kMaxLength;
  auto a = RunBench(paged, OpenDevice("sim:0"), FixedPeaks());
  auto b = RunBench(reserved, OpenDevice("sim:0"), FixedPeaks());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(a->json["scheduler"]["kv_reservation"], "paged");
  EXPECT_EQ(b->json["scheduler"]["kv_reservation"], "max_length");
  EXPECT_EQ(a->summary.kv_capacity_blocks, 100);
  EXPECT_EQ(b->summary.kv_capacity_blocks, 100);
  EXPECT_EQ(MostSequencesInAStep(*a), 8);
  EXPECT_EQ(MostSequencesInAStep(*b), 3);
  EXPECT_EQ(b->summary.peak_kv_blocks, 3 * 32);
  EXPECT_LE(b->summary.peak_kv_tokens, 3 * 51);  // prompts <= 40, outputs <= 12 tokens
  EXPECT_LE(a->summary.peak_kv_blocks, 8 * 4);   // <= 51 tokens: 4 blocks a request
  EXPECT_EQ(b->summary.preemptions, 0);
  EXPECT_EQ(a->outputs, b->outputs);
  EXPECT_GT(a->summary.output_throughput, 1.5 * b->summary.output_throughput);
}

// Without a configured size the cache holds max_sequences whole contexts under max_length (what
// the run can use), the workload's longest requests under paged; a configured cache smaller than
// one reservation is refused, naming both.
TEST(BenchRunner, MaxLengthReservationSizesTheCacheForWholeContexts) {
  BenchConfig config = MixedConfig("tiny-llama-f16.gguf");
  config.workload.num_requests = 4;
  config.scheduler.mode = BatchingMode::kStatic;
  auto paged = RunBench(config, OpenDevice("sim:0"), FixedPeaks());
  config.scheduler.kv_reservation = KvReservation::kMaxLength;
  auto reserved = RunBench(config, OpenDevice("sim:0"), FixedPeaks());
  ASSERT_TRUE(paged.ok()) << paged.status().ToString();
  ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
  EXPECT_EQ(reserved->json["scheduler"]["kv_cache_tokens"], 4 * 512);
  EXPECT_LE(paged->json["scheduler"]["kv_cache_tokens"].get<int64_t>(), 4 * 64);
  config.kv_cache_tokens = 256;
  auto refused = RunBench(config, OpenDevice("sim:0"), FixedPeaks());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              ::testing::HasSubstr("kv_reservation max_length reserves max_model_len (512 "
                                   "tokens) per sequence, 32 KV blocks of 16 tokens, but the "
                                   "cache holds 16 blocks"));
}

TEST(BenchRunner, MaxConcurrencyCapsRequestsInFlight) {
  BenchConfig config = MixedConfig("tiny-llama-f16.gguf");
  config.workload.num_requests = 12;
  config.workload.max_concurrency = 2;
  config.scheduler.max_sequences = 8;  // the scheduler alone would run up to 8 at once
  auto result = RunBench(config, OpenDevice("sim:0"), FixedPeaks());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->summary.completed, 12);
  // A request is in flight from its first scheduling to its last token; at every step start at
  // most two are.
  for (const StepRecord& step : result->steps) {
    int in_flight = 0;
    for (const RequestRecord& r : result->requests) {
      if (r.first_scheduled_s <= step.start_s && step.start_s < r.token_times_s.back()) ++in_flight;
    }
    EXPECT_LE(in_flight, 2) << "step at " << step.start_s;
  }
  // Offline arrivals: the others wait outside, and their latency counts from t = 0.
  EXPECT_GT(result->summary.queue_ms.max, 0);
}

const std::string kTextModel =
    std::string(HWINFER_SOURCE_DIR) + "/tests/data/text/tiny-llama-spm-text-q8_0.gguf";

// The first requests of the ShareGPT sample in file order on the text model (full Llama 2
// vocabulary), with the generated texts.
BenchConfig ShareGptConfig(int64_t num_requests) {
  BenchConfig config;
  config.file = "test";
  config.model.path = kTextModel;
  config.workload.num_requests = num_requests;
  config.workload.dataset.kind = DatasetSpec::Kind::kShareGpt;
  config.workload.dataset.file =
      std::string(HWINFER_SOURCE_DIR) + "/tests/data/datasets/sharegpt-sample.json";
  config.workload.dataset.shuffle = false;
  config.save_texts = true;
  config.scheduler.max_batch_tokens = 64;
  config.scheduler.max_sequences = 2;
  return config;
}

TEST(BenchRunner, ShareGptRequestsAreTheTokenizedConversations) {
  const BenchConfig config = ShareGptConfig(3);
  auto result = RunBench(config, OpenDevice("cpu:0"), FixedPeaks());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto gguf = GgufFile::Open(kTextModel);
  ASSERT_TRUE(gguf.ok());
  auto tokenizer = Tokenizer::FromGguf(**gguf);
  ASSERT_TRUE(tokenizer.ok());
  auto file = ReadDataset(config.workload.dataset);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const nlohmann::json& j = result->json;
  ASSERT_EQ(j["input_lens"].size(), 3u);
  ASSERT_EQ(j["generated_texts"].size(), 3u);
  EXPECT_EQ(j["workload"]["dataset"], "sharegpt:" + config.workload.dataset.file);
  EXPECT_EQ(j["workload"]["dataset_stats"]["requests"], 3);
  for (size_t i = 0; i < 3; ++i) {  // the sample's first three conversations pass every filter
    const DatasetEntry& entry = file->entries[i];
    EXPECT_EQ(j["input_lens"][i], (*tokenizer)->Encode(entry.prompt, true, false).size());
    const size_t answer_tokens = (*tokenizer)->Encode(entry.answer, false, false).size();
    EXPECT_EQ(j["output_lens"][i], answer_tokens);
    EXPECT_EQ(result->outputs[i].size(), answer_tokens);
    // The output's pieces in order (a character left incomplete as U+FFFD).
    std::string pieces;
    for (const int32_t id : result->outputs[i]) pieces += (*tokenizer)->Piece(id, false);
    EXPECT_EQ(
        j["generated_texts"][i].dump(),
        nlohmann::json(pieces).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  EXPECT_NO_THROW((void)j.dump());
}

TEST(BenchRunner, TextNeedsTheModelsTokenizer) {
  const std::string path =
      ::testing::TempDir() + "/no-tokenizer-" + std::to_string(::getpid()) + ".gguf";
  ASSERT_TRUE(test::WriteEditedGguf(
                  DataFile("tiny-llama-q8_0.gguf"),
                  [](test::Metadata& kvs, std::vector<test::TensorCopy>&) {
                    std::erase_if(
                        kvs, [](const auto& kv) { return kv.first.starts_with("tokenizer."); });
                  },
                  path)
                  .ok());
  BenchConfig config = ShareGptConfig(2);
  config.model.path = path;
  auto result = RunBench(config, OpenDevice("cpu:0"), FixedPeaks());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(
      result.status().message(),
      ::testing::AllOf(::testing::HasSubstr("dataset sharegpt:"),
                       ::testing::HasSubstr("needs the model's tokenizer"),
                       ::testing::HasSubstr(path), ::testing::HasSubstr("tokenizer.ggml.model")));
  config = MixedConfig("tiny-llama-q8_0.gguf");
  config.model.path = path;
  config.save_texts = true;
  result = RunBench(config, OpenDevice("cpu:0"), FixedPeaks());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              ::testing::HasSubstr("output.save_texts needs the model's tokenizer"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hwinfer
