// hwinfer/bench_config.h — the sections of a config file that describe a benchmark (model,
// workload, scheduler, metrics, output), beside the runtime section (hwinfer/config.h) that picks
// backends and devices. One YAML file holds both; this parser reads only its own keys and, like the
// runtime parser, rejects unknown keys and bad values with file:line:column and the expected form.
//
//   model:
//     path: models/x.gguf           # a GGUF file, or:
//     shape: small                  # a configs/models name or a *.yaml path, with
//     type: q8_0                    #   f32 | f16 | bf16 | q8_0 | q4_0 (default f16)
//     weights: synthesize           #   synthesize: random weights written once to `cache_dir`
//                                   #     (reused afterwards) | dummy: no file, weights left as the
//                                   #     device initialises them (for simulated/large shapes)
//     cache_dir: ~/.cache/hwinfer   #   optional; default $XDG_CACHE_HOME/hwinfer or
//     ~/.cache/hwinfer
//   workload:                       # hwinfer/workload.h
//     num_requests: 32
//     arrivals: offline | poisson | gamma
//     rate: 4.0                     # requests/s
//     burstiness: 1.0
//     max_concurrency: 0
//     input: 128 | {dist: uniform, min: 16, max: 256} | {dist: normal, mean: 128, std: 32, min: 1,
//     max: 512} output: 64 | {...} file: requests.jsonl          # optional; lengths from the file
//     (num_requests then
//                                   #   defaults to 0 = every line)
//     dataset: sharegpt:conversations.json  # optional: prompt texts from a file
//                                   #   (hwinfer/dataset.h): sharegpt:FILE | jsonl:FILE | random
//                                   #   (default); no `input` or `file` then, num_requests
//                                   #   defaults to 0 = every prompt, `output` if given overrides
//                                   #   the dataset's output lengths
//     shuffle: true                 # dataset prompts in a seeded random order (false: file order)
//     seed: 0
//   scheduler:                      # hwinfer/scheduler.h + executor options
//     mode: continuous | dynamic | static
//     kv_reservation: paged         # | max_length: each admitted request reserves the KV blocks
//                                   #   of the model's whole context at once (scheduler.h)
//     max_batch_tokens: 512
//     max_sequences: 16
//     batch_timeout_ms: 50
//     ageing_s: 1.0
//     kv_block_size: 16
//     kv_dtype: f16 | i8
//     decode_graphs: true           # replay captured decode graphs where the device can
//     tp_collectives: auto          # --tp: all-reduces on the devices where they can | host |
//                                   #   device (hwinfer/llama_executor.h, TpCollectives)
//     devices: [cpu:0, vulkan:0]    # one model replica per device (docs/multi-device.md); each
//                                   #   request goes to one: routing least_tokens | round_robin
//     routing: least_tokens
//     split: replicas               # | layers: the devices run one model together, a range of
//     layer_split: [11, 11]         #   layers each (default: by free memory); routing unused
//     kv_cache_tokens: 0            # 0 = fit `memory_utilization` of the device memory after the
//     memory_utilization: 0.9       #   weights and activations (capped by the workload, see
//     bench_runner.h)
//   metrics:
//     slo: {ttft_ms: 500, tpot_ms: 50, e2el_ms: 0}   # goodput; 0 = no limit
//   output:
//     json: results/run.json        # optional; also --json
//     csv: results/run              # optional prefix: <prefix>_requests.csv, <prefix>_steps.csv
//     markdown: results/run.md      # optional
//     tokens: results/run.tokens.jsonl  # optional; also --tokens: every request's output token ids
//     save_texts: false             # also --save-texts: the JSON gets `generated_texts` (each
//                                   #   request's output detokenized; needs the model's tokenizer)
//   backend: cpu                    # optional: which loaded backend's first device to run on
//   device: cpu:0                   # optional: an exact device (backend:index)
// Relative paths resolve against the config file's folder. Every section is optional; omitted
// keys keep the defaults of the structs below (WorkloadSpec, SchedulerOptions, SloTargets, ...);
// the values shown above are examples. A `model:` section needs exactly one of path and shape.
// `shape: NAME` is looked up as <config dir>/models/NAME.yaml, <config dir>/../configs/models/
// NAME.yaml, then <prefix>/share/hwinfer/models/NAME.yaml (NotFound lists the paths tried).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwinfer/collective.h"
#include "hwinfer/metrics.h"
#include "hwinfer/replica_routing.h"
#include "hwinfer/scheduler.h"
#include "hwinfer/status.h"
#include "hwinfer/workload.h"

namespace hwinfer {

struct ModelSource {
  std::string path;          // GGUF file (exclusive with shape)
  std::string shape;         // configs/models name or yaml path
  std::string type = "f16";  // weight type for shape
  enum class Weights { kSynthesize, kDummy };
  Weights weights = Weights::kSynthesize;
  std::string cache_dir;  // resolved; "" = default
};

struct BenchConfig {
  std::string file;
  ModelSource model;
  WorkloadSpec workload;
  SchedulerOptions scheduler;
  int32_t kv_block_size = 16;
  std::string kv_dtype = "f16";
  bool decode_graphs = true;
  TpCollectives tp_collectives = TpCollectives::kAuto;
  int64_t kv_cache_tokens = 0;
  double memory_utilization = 0.9;
  SloTargets slo;
  std::string json_out, csv_prefix, markdown_out, tokens_out;
  bool save_texts = false;  // `generated_texts` in the result JSON
  std::string backend, device;
  // scheduler.devices: one replica per device (each a selector as `device:` takes); empty = the
  // one device that backend/device pick.
  std::vector<std::string> devices;
  ReplicaRouting routing = ReplicaRouting::kLeastTokens;
  // scheduler.split: layers = one model over |devices|, layer_split layers each (empty: by free
  // memory; LlamaExecutor::CreateSplit); false = one replica per device.
  bool split_layers = false;
  std::vector<int64_t> layer_split;
};

// Reads the benchmark sections of |path| (the runtime section is left to LoadRuntimeConfig).
StatusOr<BenchConfig> LoadBenchConfig(const std::string& path);
StatusOr<BenchConfig> ParseBenchConfig(const std::string& yaml_text,
                                       const std::string& display_name,
                                       const std::string& base_dir = ".");

}  // namespace hwinfer
