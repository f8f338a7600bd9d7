// tools/cli/commands.h — every `hwinfer` subcommand as its options and the function that runs
// it, one implementation file each (devices_command.cpp, ...). The flags that fill these options
// are declared in main.cpp alone: CLI11 is header-only and costs ~10 s of compile time in every
// file that includes it, so only that one does. Each Run* returns the process exit code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench_run.h"
#include "cli_common.h"
#include "hwinfer/sampler.h"
#include "model_run.h"

namespace hwinfer::cli {

// `hwinfer devices`
struct DevicesOptions {
  bool json = false;
  bool no_probe = false;
};
int RunDevices(const GlobalOptions& global, const DevicesOptions& options);

// `hwinfer probe`
struct ProbeCommandOptions {
  std::string device;  // empty = every device
  bool json = false;
  uint64_t size_mib = 256;
  int64_t gemm_size = 512;
  int repetitions = 5;
};
int RunProbe(const GlobalOptions& global, const ProbeCommandOptions& options);

// `hwinfer plugin check`
struct PluginCheckOptions {
  std::string path;
  std::vector<std::string> options;  // KEY=VALUE
  bool json = false;
  double timeout_s = 10;  // per phase
};
int RunPluginCheck(const GlobalOptions& global, const PluginCheckOptions& options);

// `hwinfer config check`
int RunConfigCheck(const GlobalOptions& global, const std::string& file);

// `hwinfer conformance`
struct ConformanceCommandOptions {
  std::string backend;
  std::string plugin;
  std::string expectations;
  std::vector<std::string> plugin_options;  // --option KEY=VALUE
};
int RunConformanceCommand(const GlobalOptions& global, const ConformanceCommandOptions& options,
                          const std::vector<std::string>& gtest_args);

// `hwinfer kv-size`
struct KvSizeOptions {
  std::string model;
  std::vector<int64_t> batches = {1};
  std::vector<int64_t> seqlens;  // empty = the model's context length
  bool json = false;
};
int RunKvSize(const KvSizeOptions& options);

// `hwinfer model synth`
struct SynthCommandOptions {
  std::string shape;
  std::string type = "f16";
  bool pure = false;
  std::string output;
  uint64_t seed = 0;
};
int RunSynth(const SynthCommandOptions& options);

// `hwinfer model quantize`
struct QuantizeCommandOptions {
  std::string input;
  std::string output;
  std::string type;
  bool pure = false;
};
int RunQuantize(const QuantizeCommandOptions& options);

// `hwinfer generate`: the prompt is exactly one of --prompt, --prompt-file, --prompt-tokens.
struct GenerateOptions {
  ModelRunOptions run;
  std::optional<std::string> prompt;         // --prompt TEXT
  std::optional<std::string> prompt_file;    // --prompt-file PATH (its bytes exactly)
  std::optional<std::string> prompt_tokens;  // --prompt-tokens 1,2,3 (ids in, ids out)
  bool chat = false;                         // --chat: the prompt as a user message
  std::optional<std::string> system;         // --system TEXT (with --chat)
  std::string chat_template;                 // --chat-template NAME (empty: the model's)
  int64_t n_new = 32;
  SamplingParams sampling;
  bool ignore_eos = false;
  bool print_ids = false;
  bool timing = false;
};
int RunGenerate(const GlobalOptions& global, const GenerateOptions& options);

// `hwinfer tokenize` / `hwinfer detokenize`
struct TokenizeOptions {
  std::string model;
  std::string text;
  std::string file;
  bool ids_only = false;
  bool no_bos = false;
  bool parse_special = false;
};
int RunTokenize(const TokenizeOptions& options);
struct DetokenizeOptions {
  std::string model;
  std::string ids;
};
int RunDetokenize(const DetokenizeOptions& options);

// `hwinfer serve`
struct ServeOptions {
  ModelRunOptions run;      // -m (or --config's model.path), --device / --backend, executor knobs
  std::string config_file;  // --config: runtime, model, scheduler and KV sections
  std::string devices;      // --devices A,B: one replica per device ("" = the config's, or one)
  std::string routing;      // --routing least_tokens|round_robin ("" = the config's)
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string served_model_name;  // "" = the model's general.name
  std::string chat_template;      // --chat-template NAME overrides the model's
  int64_t max_sequences = 0;      // 0 = the config's (16 without one)
  int64_t kv_cache_tokens = 0;    // 0 = the config's (2 x context without one)
  int64_t max_waiting = 0;        // 0 = 4 x max_sequences
  double drain_timeout_s = 30;
  int http_threads = 128;
  std::string hardware_file;  // --hardware: spec peaks for the hwinfer: MBU/MFU gauges
  bool no_probe = false;      // --no-probe: no measured peaks (those gauges read 0)
};
int RunServe(const GlobalOptions& global, const ServeOptions& options);

// `hwinfer eval`: perplexity over a text (exactly one of --text, --tokens), and KL-divergence
// against a reference run's log-probabilities (docs/evaluation.md).
struct EvalOptions {
  ModelRunOptions run;
  std::optional<std::string> text_file;    // --text
  std::optional<std::string> tokens_file;  // --tokens
  int64_t ctx = 512;
  int64_t max_windows = 0;       // 0: every window
  std::string score = "decode";  // --score decode|prefill (hwinfer/perplexity.h's EvalScoring)
  int64_t parallel = 4;          // --parallel: windows decoded side by side
  std::string save_logits;       // --save-logits FILE
  std::string reference;         // --reference FILE
  bool json = false;
  bool no_progress = false;
};
int RunEval(const GlobalOptions& global, const EvalOptions& options);

// `hwinfer bench-model`
struct BenchModelOptions {
  ModelRunOptions run;
  int64_t prompt_tokens = 128;
  int64_t new_tokens = 64;
  int64_t batch = 1;
  int repetitions = 3;
  uint64_t seed = 0;
  bool json = false;
  bool no_probe = false;  // --no-probe: the read bandwidth is not measured (its MBU reads 0)
};
int RunBenchModel(const GlobalOptions& global, const BenchModelOptions& options);

// `hwinfer bench`
struct BenchOptions {
  BenchFlags flags;
  std::string json_out, csv_prefix, markdown_out, tokens_out;
  bool save_texts = false;  // --save-texts: generated_texts in the result JSON
  // --endpoint URL: the workload is sent to an OpenAI-compatible server instead
  // (bench_endpoint.cpp)
  std::string endpoint;
  std::string api = "completions";  // --api completions | chat
  std::string served_model;         // --model: the name requests carry ("" = the server's first)
  std::string model_file;           // --model-file: the served model's GGUF (tokenizer, sizes)
};
int RunBenchCommand(const GlobalOptions& global, const BenchOptions& options);
int RunBenchEndpoint(const BenchOptions& options);

// `hwinfer sweep`
struct SweepOptions {
  BenchFlags flags;
  std::vector<int64_t> batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  int64_t requests_per_batch = 2;
  std::string json_out, csv_out;
};
int RunSweep(const GlobalOptions& global, const SweepOptions& options);

// `hwinfer compare`
struct CompareOptions {
  std::vector<std::string> files;
  std::string out_dir;
};
int RunCompare(const CompareOptions& options);

}  // namespace hwinfer::cli
