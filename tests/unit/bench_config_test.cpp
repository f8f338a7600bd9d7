// bench_config_test.cpp — pins the benchmark config parser (hwinfer/bench_config.h): a full file
// reads into the documented fields and units, omitted keys keep the struct defaults, runtime keys
// are left alone, model shapes are found beside the config, and every bad input is one error
// naming file:line:column, the key and the expected form.
#include "hwinfer/bench_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace hwinfer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kConfigsDir = std::string(HWINFER_SOURCE_DIR) + "/configs";

StatusOr<BenchConfig> Parse(const std::string& text) {
  return ParseBenchConfig(text, "bench.yaml", kConfigsDir);
}

void ExpectInvalid(const std::string& text, const std::string& message) {
  const StatusOr<BenchConfig> config = Parse(text);
  ASSERT_FALSE(config.ok()) << text;
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument) << text;
  EXPECT_THAT(config.status().message(), HasSubstr(message)) << text;
}

TEST(BenchConfigTest, ReadsAFullFile) {
  const StatusOr<BenchConfig> config = Parse(R"(plugin_paths: []
backends:
  - name: cpu
backend: cpu
device: cpu:0
model:
  shape: small
  type: q8_0
  weights: dummy
  cache_dir: cache
workload:
  num_requests: 32
  arrivals: gamma
  rate: 4.0
  burstiness: 0.5
  max_concurrency: 8
  input: {dist: uniform, min: 16, max: 256}
  output: {dist: normal, mean: 64, std: 16, min: 1, max: 128}
  seed: 3
scheduler:
  mode: dynamic
  kv_reservation: max_length
  max_batch_tokens: 1024
  max_sequences: 8
  batch_timeout_ms: 20
  ageing_s: 2
  kv_block_size: 32
  kv_dtype: i8
  kv_cache_tokens: 4096
  memory_utilization: 0.5
  decode_graphs: false
  tp_collectives: host
metrics:
  slo: {ttft_ms: 500, tpot_ms: 50, e2el_ms: 0}
output:
  json: results/run.json
  csv: results/run
  markdown: /tmp/run.md
  tokens: /tmp/run.tokens.jsonl
)");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->file, "bench.yaml");
  EXPECT_EQ(config->backend, "cpu");
  EXPECT_EQ(config->device, "cpu:0");
  EXPECT_EQ(config->model.shape, kConfigsDir + "/models/small.yaml");
  EXPECT_EQ(config->model.path, "");
  EXPECT_EQ(config->model.type, "q8_0");
  EXPECT_EQ(config->model.weights, ModelSource::Weights::kDummy);
  EXPECT_EQ(config->model.cache_dir, kConfigsDir + "/cache");
  const WorkloadSpec& w = config->workload;
  EXPECT_EQ(w.num_requests, 32);
  EXPECT_EQ(w.arrivals, WorkloadSpec::Arrivals::kGamma);
  EXPECT_EQ(w.rate, 4.0);
  EXPECT_EQ(w.burstiness, 0.5);
  EXPECT_EQ(w.max_concurrency, 8);
  EXPECT_EQ(w.input.kind, LengthDistribution::Kind::kUniform);
  EXPECT_EQ(w.input.min, 16);
  EXPECT_EQ(w.input.max, 256);
  EXPECT_EQ(w.output.kind, LengthDistribution::Kind::kNormal);
  EXPECT_EQ(w.output.mean, 64);
  EXPECT_EQ(w.output.std, 16);
  EXPECT_EQ(w.output.max, 128);
  EXPECT_EQ(w.seed, 3u);
  EXPECT_EQ(config->scheduler.mode, BatchingMode::kDynamic);
  EXPECT_EQ(config->scheduler.kv_reservation, KvReservation::kMaxLength);
  EXPECT_EQ(config->scheduler.max_batch_tokens, 1024);
  EXPECT_EQ(config->scheduler.max_sequences, 8);
  EXPECT_DOUBLE_EQ(config->scheduler.batch_timeout_s, 0.020);
  EXPECT_EQ(config->scheduler.ageing_s, 2.0);
  EXPECT_EQ(config->kv_block_size, 32);
  EXPECT_EQ(config->kv_dtype, "i8");
  EXPECT_EQ(config->kv_cache_tokens, 4096);
  EXPECT_EQ(config->memory_utilization, 0.5);
  EXPECT_FALSE(config->decode_graphs);
  EXPECT_EQ(config->tp_collectives, TpCollectives::kHost);
  EXPECT_EQ(config->slo.ttft_ms, 500);
  EXPECT_EQ(config->slo.tpot_ms, 50);
  EXPECT_EQ(config->slo.e2el_ms, 0);
  EXPECT_EQ(config->json_out, kConfigsDir + "/results/run.json");
  EXPECT_EQ(config->csv_prefix, kConfigsDir + "/results/run");
  EXPECT_EQ(config->markdown_out, "/tmp/run.md");
  EXPECT_EQ(config->tokens_out, "/tmp/run.tokens.jsonl");
}

TEST(BenchConfigTest, OmittedKeysKeepTheDefaults) {
  const StatusOr<BenchConfig> config =
      Parse("backends: [{name: cpu}]\nmodel: {path: m.gguf}\nworkload: {input: 7}\n");
  ASSERT_TRUE(config.ok()) << config.status().message();
  const BenchConfig defaults;
  EXPECT_EQ(config->model.path, kConfigsDir + "/m.gguf");
  EXPECT_EQ(config->model.type, "f16");
  EXPECT_EQ(config->model.weights, ModelSource::Weights::kSynthesize);
  EXPECT_EQ(config->model.cache_dir, "");
  EXPECT_EQ(config->workload.input.kind, LengthDistribution::Kind::kFixed);
  EXPECT_EQ(config->workload.input.value, 7);
  EXPECT_EQ(config->workload.num_requests, defaults.workload.num_requests);
  EXPECT_EQ(config->workload.arrivals, WorkloadSpec::Arrivals::kOffline);
  EXPECT_EQ(config->workload.output.value, defaults.workload.output.value);
  EXPECT_EQ(config->scheduler.mode, BatchingMode::kContinuous);
  EXPECT_EQ(config->scheduler.kv_reservation, KvReservation::kPaged);
  EXPECT_EQ(config->scheduler.max_batch_tokens, defaults.scheduler.max_batch_tokens);
  EXPECT_EQ(config->scheduler.max_sequences, defaults.scheduler.max_sequences);
  EXPECT_EQ(config->kv_block_size, 16);
  EXPECT_EQ(config->kv_dtype, "f16");
  EXPECT_EQ(config->memory_utilization, 0.9);
  EXPECT_TRUE(config->decode_graphs) << "decode graphs are on unless turned off";
  EXPECT_EQ(config->tp_collectives, TpCollectives::kAuto);
  EXPECT_FALSE(config->slo.any());
  EXPECT_EQ(config->json_out, "");
  EXPECT_EQ(config->backend, "");
}

TEST(BenchConfigTest, ShapeByNameIsFoundFromAConfigOutsideConfigs) {
  // <dir>/../configs/models/NAME.yaml: a config in e.g. benchmarks/ or examples/.
  const StatusOr<BenchConfig> config = ParseBenchConfig("model: {shape: small}\n", "x.yaml",
                                                        std::string(HWINFER_SOURCE_DIR) + "/tools");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->model.shape, std::string(HWINFER_SOURCE_DIR) + "/configs/models/small.yaml");
}

TEST(BenchConfigTest, UnknownShapeListsThePathsTried) {
  const StatusOr<BenchConfig> config = Parse("model:\n  shape: gpt9\n");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(config.status().message(), HasSubstr("bench.yaml:2:10: unknown model shape 'gpt9'; "
                                                   "tried " +
                                                   kConfigsDir + "/models/gpt9.yaml, "));
  EXPECT_THAT(config.status().message(), HasSubstr("configs/models/gpt9.yaml"));
}

TEST(BenchConfigTest, LoadResolvesAgainstTheFileFolder) {
  const fs::path dir =
      fs::temp_directory_path() / ("hwinfer_bench_config_" + std::to_string(::getpid()));
  fs::create_directories(dir / "models");
  fs::copy_file(kConfigsDir + "/models/small.yaml", dir / "models" / "small.yaml",
                fs::copy_options::overwrite_existing);
  std::ofstream(dir / "bench.yaml") << "model: {shape: small}\nworkload: {file: r.jsonl}\n";
  const StatusOr<BenchConfig> config = LoadBenchConfig((dir / "bench.yaml").string());
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->model.shape, (dir / "models" / "small.yaml").string());
  EXPECT_EQ(config->workload.jsonl_file, (dir / "r.jsonl").string());
  EXPECT_EQ(config->workload.num_requests, 0) << "a file without num_requests sends every line";
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  const StatusOr<BenchConfig> missing = LoadBenchConfig((dir / "bench.yaml").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(BenchConfigErrorTest, UnknownKeysNameTheSectionAndSuggest) {
  ExpectInvalid("modle: {path: m.gguf}\n",
                "bench.yaml:1:1: unknown key 'modle' in top-level config; did you mean 'model'?");
  ExpectInvalid("scheduler:\n  max_batch_tokns: 4\n",
                "bench.yaml:2:3: unknown key 'max_batch_tokns' in 'scheduler'; did you mean "
                "'max_batch_tokens'?");
  ExpectInvalid("workload: {input: {dist: uniform, min: 1, max: 4, mean: 2}}\n",
                "'mean' does not apply to dist uniform; expected only: min, max");
}

TEST(BenchConfigErrorTest, WrongTypesAndRangesNameKeyAndForm) {
  ExpectInvalid("scheduler:\n  max_batch_tokens: 0\n",
                "bench.yaml:2:21: 'max_batch_tokens' must be an integer in [1, 1048576] (tokens "
                "per step); got '0'");
  ExpectInvalid("scheduler:\n  max_sequences: -4\n",
                "'max_sequences' must be an integer in [1, 4096]");
  ExpectInvalid("scheduler: {decode_graphs: sometimes}\n",
                "'decode_graphs' must be true or false; got 'sometimes'");
  ExpectInvalid("scheduler: {tp_collectives: nccl}\n", "'nccl'");
  ExpectInvalid("scheduler: {max_sequences: many}\n",
                "'max_sequences' must be an integer in [1, 4096] (sequences per step); got 'many'");
  ExpectInvalid("workload:\n  num_requests: 0\n",
                "bench.yaml:2:17: 'num_requests' must be an integer > 0");
  ExpectInvalid("workload: {rate: -1}\n", "'rate' must be a number > 0 (requests/s); got '-1'");
  ExpectInvalid("workload: {arrivals: poisson}\n",
                "'workload' has arrivals: poisson but no 'rate'");
  ExpectInvalid("workload: {input: [1]}\n",
                "'input' must be an integer in [1, 2147483647] (tokens)");
  ExpectInvalid("workload: {output: {dist: uniform, min: 9, max: 3}}\n",
                "output.max must be in [output.min (9), 2147483647]; got 3");
  ExpectInvalid("workload: {input: {min: 1}}\n", "'input' is missing required key 'dist'");
  ExpectInvalid("metrics:\n  slo: {ttft_ms: -5}\n",
                "bench.yaml:2:18: 'ttft_ms' must be a number >= 0 (milliseconds; 0 = no limit); "
                "got '-5'");
  ExpectInvalid("scheduler: {memory_utilization: 1.5}\n",
                "'memory_utilization' must be a number in (0, 1]");
  ExpectInvalid("backend: [cpu]\nbackends: [{name: cpu}]\n", "'backend' must be a string");
}

// Every number that sizes memory, or a wait, has an upper bound the error names (a value past it
// used to abort the run with std::bad_alloc, or wrap around).
TEST(BenchConfigErrorTest, ValuesThatSizeMemoryOrWaitsAreBounded) {
  ExpectInvalid("workload:\n  num_requests: 1000000000000\n",
                "bench.yaml:2:17: 'num_requests' must be an integer in [0, 1000000] (requests; 0 = "
                "every file line); got '1000000000000'");
  ExpectInvalid("workload: {input: 10000000000}\n",
                "'input' must be an integer in [1, 2147483647] (tokens)");
  ExpectInvalid("workload: {output: {dist: fixed, value: 9223372036854775807}}\n",
                "'value' must be an integer in [1, 2147483647] (tokens)");
  ExpectInvalid("workload: {max_concurrency: 99999999999}\n",
                "'max_concurrency' must be an integer in [0, 1000000]");
  ExpectInvalid("scheduler: {kv_cache_tokens: 9223372036854775807}\n",
                "'kv_cache_tokens' must be an integer in [0, 2147483647]");
  ExpectInvalid("scheduler: {kv_block_size: 1000000}\n",
                "'kv_block_size' must be an integer in [1, 4096]");
  ExpectInvalid("scheduler: {max_batch_tokens: 9223372036854775807}\n",
                "'max_batch_tokens' must be an integer in [1, 1048576]");
  ExpectInvalid("scheduler: {batch_timeout_ms: 1e300}\n",
                "'batch_timeout_ms' must be a number in [0, 86400000]");
}

TEST(BenchConfigErrorTest, UnknownNamesListTheChoices) {
  ExpectInvalid("scheduler:\n  mode: continous\n",
                "bench.yaml:2:9: 'mode' must be one of: continuous, dynamic, static; got "
                "'continous'; did you mean 'continuous'?");
  const StatusOr<BenchConfig> typo = Parse("scheduler: {mode: continous}\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message().back(), '?') << "no trailing space";
  ExpectInvalid("scheduler: {kv_dtype: f8}\n", "'kv_dtype' must be one of: f16, i8; got 'f8'");
  ExpectInvalid("scheduler:\n  kv_reservation: contiguous\n",
                "bench.yaml:2:19: 'kv_reservation' must be one of: paged, max_length; got "
                "'contiguous'");
  ExpectInvalid("scheduler: {kv_reservation: max_len}\n",
                "'kv_reservation' must be one of: paged, max_length; got 'max_len'; did you mean "
                "'max_length'?");
  ExpectInvalid("scheduler: {kv_reservation: [paged]}\n",
                "'kv_reservation' must be one of: paged, max_length; got a list");
  ExpectInvalid("model: {shape: small, type: q5_k}\n",
                "'type' must be one of: f32, f16, bf16, q8_0, q4_0; got 'q5_k'");
  ExpectInvalid("model: {shape: small, weights: random}\n",
                "'weights' must be one of: synthesize, dummy");
  ExpectInvalid("workload: {arrivals: bursty}\n",
                "'arrivals' must be one of: offline, poisson, gamma; got 'bursty'");
  ExpectInvalid("workload: {input: {dist: zipf}}\n",
                "'dist' must be one of: fixed, uniform, normal; got 'zipf'");
}

TEST(BenchConfigErrorTest, ModelNeedsExactlyOneOfPathAndShape) {
  ExpectInvalid("model:\n  path: m.gguf\n  shape: small\n",
                "bench.yaml:3:3: 'model' has both 'path' and 'shape'; expected exactly one");
  ExpectInvalid("model: {type: f16}\n",
                "'model' needs 'path' (a GGUF file) or 'shape' (a configs/models name or *.yaml "
                "path); got neither");
  ExpectInvalid("model: {path: m.gguf, type: q8_0}\n", "'type' applies only with 'shape'");
}

TEST(BenchConfigTest, DatasetReadsKindFileOrderAndOverride) {
  const StatusOr<BenchConfig> config = Parse(
      "workload: {dataset: 'sharegpt:data/conv.json', shuffle: false}\n"
      "output: {save_texts: true}\n");
  ASSERT_TRUE(config.ok()) << config.status().message();
  const WorkloadSpec& w = config->workload;
  EXPECT_EQ(w.dataset.kind, DatasetSpec::Kind::kShareGpt);
  EXPECT_EQ(w.dataset.file, kConfigsDir + "/data/conv.json");  // relative to the config
  EXPECT_FALSE(w.dataset.shuffle);
  EXPECT_FALSE(w.dataset.override_output);
  EXPECT_EQ(w.num_requests, 0);  // every prompt
  EXPECT_TRUE(config->save_texts);

  const StatusOr<BenchConfig> overridden =
      Parse("workload: {dataset: 'jsonl:/p.jsonl', output: 32, num_requests: 5}\n");
  ASSERT_TRUE(overridden.ok()) << overridden.status().message();
  EXPECT_EQ(overridden->workload.dataset.file, "/p.jsonl");
  EXPECT_TRUE(overridden->workload.dataset.shuffle);
  EXPECT_TRUE(overridden->workload.dataset.override_output);
  EXPECT_EQ(overridden->workload.output.value, 32);
  EXPECT_EQ(overridden->workload.num_requests, 5);

  const StatusOr<BenchConfig> random = Parse("workload: {dataset: random, input: 8}\n");
  ASSERT_TRUE(random.ok()) << random.status().message();
  EXPECT_EQ(random->workload.dataset.kind, DatasetSpec::Kind::kRandom);
  EXPECT_EQ(random->workload.num_requests, 16);
  EXPECT_FALSE(random->save_texts);
}

TEST(BenchConfigErrorTest, DatasetExcludesInputAndLengthsFile) {
  ExpectInvalid("workload: {dataset: 'foo:x.json'}\n",
                "bench.yaml:1:21: unknown dataset 'foo:x.json'; expected sharegpt:FILE, "
                "jsonl:FILE or random");
  ExpectInvalid("workload: {dataset: 'jsonl:'}\n", "names no file; expected jsonl:FILE");
  ExpectInvalid("workload:\n  dataset: sharegpt:c.json\n  input: 8\n",
                "bench.yaml:3:3: 'input' does not apply with dataset sharegpt:");
  ExpectInvalid("workload:\n  file: r.jsonl\n  dataset: sharegpt:c.json\n",
                "bench.yaml:2:3: 'file' does not apply with dataset sharegpt:");
  ExpectInvalid("workload: {shuffle: 3}\n", "'shuffle' must be");
  ExpectInvalid("output: {save_texts: maybe}\n", "'save_texts' must be");
}

}  // namespace
}  // namespace hwinfer

namespace hwinfer {
namespace {

TEST(BenchConfigTest, DevicesAndRoutingReadIntoTheReplicaFields) {
  const StatusOr<BenchConfig> config =
      Parse("scheduler:\n  devices: [cpu:0, vulkan:0]\n  routing: round_robin\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->devices, (std::vector<std::string>{"cpu:0", "vulkan:0"}));
  EXPECT_EQ(config->routing, ReplicaRouting::kRoundRobin);
  const StatusOr<BenchConfig> defaults = Parse("scheduler: {mode: static}\n");
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->devices.empty());
  EXPECT_EQ(defaults->routing, ReplicaRouting::kLeastTokens);
  EXPECT_FALSE(defaults->split_layers);
  const StatusOr<BenchConfig> split =
      Parse("scheduler:\n  devices: [cpu:0, vulkan:0]\n  split: layers\n  layer_split: [3, 1]\n");
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_TRUE(split->split_layers);
  EXPECT_EQ(split->layer_split, (std::vector<int64_t>{3, 1}));
}

TEST(BenchConfigErrorTest, DeviceListsAreNonEmptyListsWithoutRepeats) {
  ExpectInvalid("scheduler:\n  devices: [cpu:0, vulkan:0, cpu:0]\n",
                "bench.yaml:2:30: 'devices' names 'cpu:0' twice; each device runs one replica");
  ExpectInvalid("scheduler: {devices: []}\n",
                "'devices' must be a non-empty list of devices, e.g. [cpu:0, vulkan:0]; got a "
                "list");
  ExpectInvalid("scheduler: {devices: cpu:0}\n",
                "'devices' must be a non-empty list of devices, e.g. [cpu:0, vulkan:0]; got "
                "'cpu:0'");
  ExpectInvalid("scheduler: {devices: [cpu:0, {a: 1}]}\n", "got an item a map");
  ExpectInvalid("scheduler: {split: pipeline}\n",
                "'split' must be one of: replicas, layers; got 'pipeline'");
  ExpectInvalid("scheduler: {layer_split: [2, 0]}\n",
                "'layer_split' must be a non-empty list of layer counts (integers >= 1), one per "
                "device, e.g. [11, 11]; got an item '0'");
  ExpectInvalid("scheduler: {routing: random}\n",
                "'routing' must be one of: least_tokens, round_robin; got 'random'");
}

}  // namespace
}  // namespace hwinfer
