// tools/cli/main.cpp — the `hwinfer` command line: global options, every subcommand's flags and
// their checks, and dispatch to the subcommand's Run* function (commands.h). The only file that
// includes CLI11: it is header-only and costs ~10 s of compile time (~17 s under the sanitizers)
// in every file that does, so the subcommands' own files do without it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "hwinfer/chat_template.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/text_escape.h"
#include "hwinfer/workload.h"
#include "mpi_ranks.h"
#include "quant_recipe.h"

namespace hwinfer::cli {
namespace {

// CLI11 checks whose messages name the bound and the value as given ("expected an integer in
// [1, 4096]; got '100000'"), instead of CLI11's "Value 0 not in range 0.000000 to 1.8e308".
CLI::Validator IntegerIn(int64_t min, int64_t max) {
  const std::string range = fmt::format("[{}, {}]", min, max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const std::optional<int64_t> value = ParseDecimal(text);
        if (value && *value >= min && *value <= max) return "";
        return "expected an integer in " + range + "; got '" + EscapeControlCharacters(text) + "'";
      },
      "INT in " + range);
}

CLI::Validator SeedValue() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (!text.empty() && error == std::errc() && stop == end) return "";
        return "expected an integer in [0, 18446744073709551615]; got '" +
               EscapeControlCharacters(text) + "'";
      },
      "SEED >= 0");
}

// --tp, --tp-timeout and --tp-collectives (generate, bench-model, eval, bench, sweep, serve).
void AddTensorParallelFlags(CLI::App* command, int64_t& tp, double& timeout_s,
                            std::string& collectives) {
  command
      ->add_option("--tp", tp,
                   "Tensor parallelism over N ranks, one MPI process each: mpirun -np N hwinfer "
                   "... --tp N (each rank uses --device, or its entry of --devices)")
      ->check(IntegerIn(1, 256));
  command
      ->add_option("--tp-timeout", timeout_s,
                   "With --tp: seconds a rank waits for the others before it reports them dead "
                   "or hung and stops the run")
      ->check(CLI::Range(0.1, 86400.0));
  command
      ->add_option("--tp-collectives", collectives,
                   "With --tp: where the all-reduces run: auto (on the devices where every rank's "
                   "plugin can, else through host memory; the default), host, or device")
      ->check(CLI::IsMember({"auto", "host", "device"}));
}

// -m/--model, --backend, --device, --devices, --split, --layer-split, --kv-dtype,
// --max-batch-tokens and --no-decode-graphs (generate, bench-model).
void AddModelRunOptions(CLI::App* command, ModelRunOptions& options) {
  command->add_option("-m,--model", options.model_path, "GGUF model file (llama architecture)")
      ->required();
  CLI::Option* backend =
      command->add_option("--backend", options.backend, "Run on this backend's first device");
  CLI::Option* device =
      command
          ->add_option("--device", options.device, "Run on this device (cpu:0, a name or a UUID)")
          ->excludes(backend);
  command
      ->add_option("--devices", options.devices,
                   "Run one model over several devices, comma-separated (cpu:0,vulkan:0), with "
                   "--split layers")
      ->excludes(backend)
      ->excludes(device);
  command->add_option("--split", options.split, "With --devices: layers (a range of layers each)")
      ->check(CLI::IsMember({"layers"}));
  command->add_option("--layer-split", options.layer_split,
                      "Layers per device with --split layers, comma-separated (default: in "
                      "proportion to each device's free memory)");
  command->add_option("--kv-dtype", options.kv_dtype, "KV cache type: f16 or i8")
      ->check(CLI::IsMember({"f16", "i8"}));
  command
      ->add_option("--max-batch-tokens", options.max_batch_tokens,
                   "Tokens per executor step (prefill chunk size)")
      ->check(IntegerIn(1, kMaxBatchTokens));
  command->add_flag("!--no-decode-graphs", options.decode_graphs,
                    "Launch every decode step's kernels one by one instead of replaying a captured "
                    "graph (where the device can capture)");
  AddTensorParallelFlags(command, options.tp, options.tp_timeout_s, options.tp_collectives);
}

// --config, --backend, --device, --devices, --routing, --hardware, --mode, --kv-reservation,
// --num-requests,
// --max-sequences, --dataset, --output-len, --seed, --disable-shuffle, --no-progress and
// --no-probe (bench, sweep).
void AddBenchFlags(CLI::App* command, BenchFlags& flags) {
  command
      ->add_option("--config", flags.config_file,
                   "Config YAML: runtime section (backends) and bench sections (model, ...)")
      ->check(CLI::ExistingFile);
  command->add_option("--backend", flags.backend, "Run on this backend's first device");
  command->add_option("--device", flags.device, "Run on this device (cpu:0, a name or a UUID)");
  command->add_option("--devices", flags.devices,
                      "One model replica per device, comma-separated (cpu:0,vulkan:0); each "
                      "request runs on one (docs/multi-device.md)");
  command
      ->add_option("--split", flags.split,
                   "With several devices: replicas (one model each, the default) | layers (one "
                   "model over all, a range of layers each)")
      ->check(CLI::IsMember({"replicas", "layers"}));
  command->add_option("--layer-split", flags.layer_split,
                      "Layers per device with --split layers, comma-separated (default: in "
                      "proportion to each device's free memory)");
  command
      ->add_option("--routing", flags.routing,
                   "Which replica a request goes to: least_tokens (fewest outstanding tokens) "
                   "| round_robin")
      ->check(CLI::IsMember({"least_tokens", "round_robin"}));
  AddTensorParallelFlags(command, flags.tp, flags.tp_timeout_s, flags.tp_collectives);
  command->add_option(
      "--hardware", flags.hardware_file,
      "Hardware spec YAML (configs/hardware/*.yaml): spec peaks for MBU/MFU; also "
      "the simulated device for the sim backend");  // a missing file: LoadHardwareSpec's error
  command->add_option("--mode", flags.mode, "Batching: continuous | dynamic | static")
      ->check(CLI::IsMember({"continuous", "dynamic", "static"}));
  command
      ->add_option("--kv-reservation", flags.kv_reservation,
                   "KV memory per request: paged (blocks as tokens come) | max_length (the "
                   "model's whole context reserved on admission, as servers with contiguous "
                   "KV buffers do)")
      ->check(CLI::IsMember({"paged", "max_length"}));
  command
      ->add_option("--num-requests,--num-prompts", flags.num_requests,
                   "Requests to send (default: the config's num_requests; a dataset named in the "
                   "config sends every usable prompt)")
      ->check(IntegerIn(1, kMaxWorkloadRequests));
  command->add_option("--dataset", flags.dataset,
                      "Prompts: sharegpt:FILE (ShareGPT JSON), jsonl:FILE ({\"prompt\": ...} per "
                      "line) or random (token ids); text is tokenized with the model's tokenizer");
  command
      ->add_option("--output-len", flags.output_len,
                   "Output tokens per request (overrides a dataset's output lengths)")
      ->check(IntegerIn(1, kMaxRequestTokens));
  command
      ->add_option_function<uint64_t>(
          "--seed", [&flags](const uint64_t& seed) { flags.seed = seed; },
          "Workload seed: arrivals, lengths, random prompts, a dataset's order")
      ->check(SeedValue());
  command->add_flag("--disable-shuffle", flags.disable_shuffle,
                    "Take a dataset's prompts in file order (default: a seeded random order)");
  command->add_option("--max-sequences", flags.max_sequences, "Sequences per step (batch size)")
      ->check(IntegerIn(1, kMaxSequences));
  command->add_flag("--no-progress", flags.no_progress, "Do not draw the progress line");
  command->add_flag("--no-probe", flags.no_probe,
                    "Do not measure the device's peak bandwidth and FLOP/s (MBU and MFU against "
                    "the measured peaks are then reported as 0); spec peaks still apply");
}

// Each subcommand: its flags on |app|; when chosen, its callback sets |exit_code|.
void AddDevicesCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* command = app.add_subcommand("devices", "List plugins and devices");
  command->add_flag("--json", options->json, "Print JSON");
  command->add_flag("--no-probe", options->no_probe, "Skip the quick read-bandwidth measurement");
  command->callback([&global, &exit_code, options] { exit_code = RunDevices(global, *options); });
}

void AddProbeCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<ProbeCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "probe", "Measure read/copy bandwidth and matmul FLOP/s per weight dtype per device");
  command->add_option("--device", options->device, "Index, backend:ordinal, name or UUID");
  command->add_flag("--json", options->json, "Print JSON");
  command->add_option("--size-mib", options->size_mib, "Bandwidth working set in MiB")
      ->check(IntegerIn(1, 65536));
  command->add_option("--gemm-size", options->gemm_size, "Matmul m = n = k (prefill-shaped)")
      ->check(IntegerIn(1, 16384));
  command->add_option("--repetitions", options->repetitions, "Timed launches (median reported)")
      ->check(IntegerIn(1, 1000));
  command->callback([&global, &exit_code, options] { exit_code = RunProbe(global, *options); });
}

void AddPluginCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  CLI::App* plugin = app.add_subcommand("plugin", "Inspect plugin files");
  plugin->require_subcommand(1);
  auto options = std::make_shared<PluginCheckOptions>();
  CLI::App* check = plugin->add_subcommand(
      "check", "Load one plugin file and report everything about it, or why it fails");
  check->add_option("path", options->path, "Plugin shared library")->required();
  check->add_option("--option", options->options, "plugin_init option KEY=VALUE (repeatable)");
  check->add_flag("--json", options->json, "Print JSON");
  check
      ->add_option("--timeout", options->timeout_s,
                   "Seconds each step of the plugin may take before the check is stopped")
      ->check(CLI::Range(0.1, 3600.0));
  check->callback([&global, &exit_code, options] { exit_code = RunPluginCheck(global, *options); });
}

void AddConfigCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  CLI::App* config = app.add_subcommand("config", "Work with config files");
  config->require_subcommand(1);
  auto file = std::make_shared<std::string>();
  CLI::App* check = config->add_subcommand("check", "Validate a config file");
  check->add_option("file", *file, "Config YAML")->required();
  check->callback([&global, &exit_code, file] { exit_code = RunConfigCheck(global, *file); });
}

void AddConformanceCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<ConformanceCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "conformance",
      "Run the backend conformance suite (GoogleTest; --gtest_filter=..., --gtest_output=..., "
      "--gtest_list_tests pass through). Exits non-zero on any failure or when zero cases ran.");
  CLI::Option* backend = command->add_option(
      "--backend", options->backend,
      "Test only this backend (found on the plugin search path or in --config)");
  CLI::Option* plugin = command->add_option("--plugin", options->plugin,
                                            "Test exactly this plugin file (any file name)");
  plugin->excludes(backend);
  command->add_option("--expectations", options->expectations,
                      "Unsupported / expected-failure declarations (YAML) for the backend(s) "
                      "under test, instead of the in-tree or installed <backend>.yaml");
  command
      ->add_option("--option", options->plugin_options,
                   "A plugin option KEY=VALUE passed to every plugin's plugin_init (repeatable; "
                   "e.g. --option gemm=builtin for the GPU plugins)")
      ->allow_extra_args(false);
  command->allow_extras();
  command->callback([&global, &exit_code, options, command] {
    exit_code = RunConformanceCommand(global, *options, command->remaining());
  });
}

void AddKvSizeCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<KvSizeOptions>();
  CLI::App* command = app.add_subcommand("kv-size", "Print the KV-cache size table of a model");
  command
      ->add_option("--model", options->model, "Model shape: a YAML file or a configs/models name")
      ->required();
  command->add_option("--batch", options->batches, "Batch sizes")
      ->delimiter(',')
      ->check(IntegerIn(1, int64_t{1} << 40));
  command
      ->add_option("--seqlen", options->seqlens, "Sequence lengths (default: the context length)")
      ->delimiter(',')
      ->check(IntegerIn(1, int64_t{1} << 40));
  command->add_flag("--json", options->json, "Print JSON");
  command->callback([&exit_code, options] { exit_code = RunKvSize(*options); });
}

void AddModelCommand(CLI::App& app, int& exit_code) {
  CLI::App* model = app.add_subcommand("model", "Work with model files");
  model->require_subcommand(1);
  auto options = std::make_shared<SynthCommandOptions>();
  CLI::App* synth = model->add_subcommand("synth", "Write a random-weight GGUF model of a shape");
  synth->add_option("--shape", options->shape, "Model shape: a YAML file or a configs/models name")
      ->required();
  const std::string type_help = std::string("Weight type, one of llama.cpp's recipes: ") +
                                QuantRecipeNames() +
                                " (types mixed per tensor as its quantize tool mixes them)";
  const std::string pure_help = "Every matrix in the recipe's base type (llama.cpp's --pure)";
  synth->add_option("--type", options->type, type_help);
  synth->add_flag("--pure", options->pure, pure_help);
  synth->add_option("-o,--output", options->output, "Output .gguf file")->required();
  synth->add_option("--seed", options->seed, "Random seed")->check(SeedValue());
  synth->callback([&exit_code, options] { exit_code = RunSynth(*options); });

  auto quantize_options = std::make_shared<QuantizeCommandOptions>();
  CLI::App* quantize =
      model->add_subcommand("quantize", "Convert an F32/F16/BF16 GGUF model to a weight type");
  quantize->add_option("input", quantize_options->input, "Input .gguf file")->required();
  quantize->add_option("output", quantize_options->output, "Output .gguf file")->required();
  quantize->add_option("--type", quantize_options->type, type_help)->required();
  quantize->add_flag("--pure", quantize_options->pure, pure_help);
  quantize->callback(
      [&exit_code, quantize_options] { exit_code = RunQuantize(*quantize_options); });
}

void AddTokenizeCommands(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* tokenize = app.add_subcommand("tokenize", "Text to token ids with a model's tokenizer");
  tokenize->add_option("-m,--model", options->model, "GGUF file (a vocabulary-only one will do)")
      ->required();
  CLI::Option* text = tokenize->add_option("text", options->text, "Text to tokenize");
  CLI::Option* file =
      tokenize->add_option("--file", options->file, "Tokenize this file's bytes exactly");
  text->excludes(file);
  tokenize->add_flag("--ids", options->ids_only, "Print only the ids, as a list");
  tokenize->add_flag("--no-bos", options->no_bos, "Do not add BOS / EOS");
  tokenize->add_flag("--parse-special", options->parse_special,
                     "Turn the texts of control tokens (<s>, ...) into those tokens");
  tokenize->callback([&exit_code, options] { exit_code = RunTokenize(*options); });

  auto detokenize_options = std::make_shared<DetokenizeOptions>();
  CLI::App* detokenize = app.add_subcommand("detokenize", "Token ids to text");
  detokenize->add_option("-m,--model", detokenize_options->model, "GGUF file")->required();
  detokenize->add_option("ids", detokenize_options->ids, "Token ids, comma-separated")->required();
  detokenize->callback(
      [&exit_code, detokenize_options] { exit_code = RunDetokenize(*detokenize_options); });
}

// Sets |target| when the flag is given (so `--prompt ""` is a prompt, and no flag is none).
void AddOptionalString(CLI::App* command, const std::string& flags,
                       std::optional<std::string>& target, const std::string& help) {
  command->add_option_function<std::string>(
      flags, [&target](const std::string& value) { target = value; }, help);
}

void AddGenerateCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand(
      "generate",
      "Generate text (or token ids) from a GGUF model: the text streams to stdout, ids and "
      "timing go to stderr");
  AddModelRunOptions(command, options->run);
  AddOptionalString(command, "-p,--prompt", options->prompt,
                    "Prompt text (UTF-8), tokenized with the model's tokenizer");
  AddOptionalString(command, "--prompt-file", options->prompt_file,
                    "Read the prompt text from this file (its bytes exactly)");
  AddOptionalString(command, "--prompt-tokens", options->prompt_tokens,
                    "Prompt token ids, comma-separated (e.g. 1,15043,3186): prints generated ids, "
                    "not text");
  command->add_flag("--chat", options->chat,
                    "Render the prompt as a user message with the model's chat template");
  AddOptionalString(command, "--system", options->system, "System message (with --chat)");
  command->add_option("--chat-template", options->chat_template,
                      fmt::format("Chat template instead of the model's (with --chat): {}",
                                  fmt::join(ChatTemplate::Names(), ", ")));
  command->add_option("-n,--n-predict", options->n_new, "Most tokens to generate")
      ->check(IntegerIn(1, kMaxRequestTokens));
  command->add_flag("--ignore-eos", options->ignore_eos,
                    "Go on past end-of-generation tokens (EOS, EOT) up to -n tokens");
  command->add_flag("--print-ids", options->print_ids,
                    "Also print the prompt's and the generated token ids (to stderr)");
  command->add_option("--seed", options->sampling.seed, "Sampling seed")->check(SeedValue());
  command->add_option("--temperature", options->sampling.temperature, "0 = greedy");
  command->add_option("--top-k", options->sampling.top_k, "0 = no limit");
  command->add_option("--top-p", options->sampling.top_p, "1 = no limit");
  command->add_flag("--timing", options->timing, "Print TTFT and TPOT to stderr");
  command->callback([&global, &exit_code, options] { exit_code = RunGenerate(global, *options); });
}

void AddBenchModelCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<BenchModelOptions>();
  CLI::App* command = app.add_subcommand(
      "bench-model", "Prefill and decode speed, TPOT and decode MBU of a GGUF model on one device");
  AddModelRunOptions(command, options->run);
  command->add_option("-p,--prompt-tokens", options->prompt_tokens, "Prompt length")
      ->check(IntegerIn(1, kMaxRequestTokens));
  command->add_option("-n,--new-tokens", options->new_tokens, "Tokens generated per sequence")
      ->check(IntegerIn(1, kMaxRequestTokens));
  command->add_option("-b,--batch", options->batch, "Sequences decoded together")
      ->check(IntegerIn(1, kMaxSequences));
  command->add_option("-r,--repetitions", options->repetitions, "Timed runs (median reported)")
      ->check(IntegerIn(1, 1000));
  command->add_option("--seed", options->seed, "Seed of the random prompts")->check(SeedValue());
  command->add_flag("--json", options->json, "Print one JSON object");
  command->add_flag("--no-probe", options->no_probe,
                    "Skip the read-bandwidth measurement (MBU only against the spec bandwidth)");
  command->callback(
      [&global, &exit_code, options] { exit_code = RunBenchModel(global, *options); });
}

void AddEvalCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<EvalOptions>();
  CLI::App* command = app.add_subcommand(
      "eval",
      "Perplexity of a GGUF model over a text, and its KL-divergence from a reference run's "
      "next-token distributions (what a weight type, KV dtype or backend costs in quality)");
  AddModelRunOptions(command, options->run);
  AddOptionalString(command, "--text", options->text_file,
                    "Text file (UTF-8), tokenized with the model's tokenizer");
  AddOptionalString(command, "--tokens", options->tokens_file,
                    "File of token ids separated by commas or white space (as hwinfer tokenize "
                    "--ids prints them)");
  command
      ->add_option("-c,--ctx", options->ctx,
                   "Tokens per window; positions ctx/2 .. ctx-2 of each are scored")
      ->check(IntegerIn(4, 1 << 20));
  command->add_option("--max-windows", options->max_windows, "Score only the first N windows")
      ->check(IntegerIn(1, 1 << 24));
  command
      ->add_option("--score", options->score,
                   "decode: each scored token as generation computes it, attending through the "
                   "KV cache (default); prefill: the window in prefill chunks (faster; a chunk's "
                   "own K and V are not rounded to the KV dtype)")
      ->check(CLI::IsMember({"decode", "prefill"}));
  command
      ->add_option("--parallel", options->parallel,
                   "With --score decode: windows decoded side by side (the decode batch)")
      ->check(IntegerIn(1, kMaxSequences));
  command->add_option("--save-logits", options->save_logits,
                      "Save the scored positions' log-probabilities here, as a reference");
  command->add_option("--reference", options->reference,
                      "Compare with the reference saved by --save-logits: KL-divergence, top-1 "
                      "agreement, perplexity ratio");
  command->add_flag("--json", options->json, "Print one JSON object");
  command->add_flag("--no-progress", options->no_progress, "No progress line on stderr");
  command->callback([&global, &exit_code, options] { exit_code = RunEval(global, *options); });
}

void AddBenchCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand(
      "bench", "Serve a workload on one device and report latency, throughput, MBU and MFU");
  AddBenchFlags(command, options->flags);
  command->add_option("--json", options->json_out, "Write the result JSON here");
  command->add_option("--csv", options->csv_prefix,
                      "Write PREFIX_requests.csv and PREFIX_steps.csv");
  command->add_option("--markdown", options->markdown_out, "Write the summary as Markdown here");
  command->add_option("--tokens", options->tokens_out,
                      "Write every request's output token ids here (JSON Lines)");
  command->add_option("--endpoint", options->endpoint,
                      "Send the workload to this OpenAI-compatible server (http://HOST:PORT)");
  command->add_option("--api", options->api, "With --endpoint: completions or chat")
      ->check(CLI::IsMember({"completions", "chat"}));
  command->add_option("--model", options->served_model,
                      "With --endpoint: the model name to request (default: the server's first)");
  command->add_option("--model-file", options->model_file,
                      "With --endpoint: the served model's GGUF (its tokenizer and sizes)");
  command->add_flag("--save-texts", options->save_texts,
                    "Add generated_texts (each output detokenized) to the result JSON");
  command->callback(
      [&global, &exit_code, options] { exit_code = RunBenchCommand(global, *options); });
}

void AddSweepCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* command = app.add_subcommand(
      "sweep", "Run the bench at several batch sizes: the throughput-latency curve");
  AddBenchFlags(command, options->flags);
  command->add_option("--batch", options->batches, "Batch sizes (max_sequences), e.g. 1,2,4,8")
      ->delimiter(',')
      ->check(IntegerIn(1, kMaxSequences));
  command
      ->add_option("--requests-per-batch", options->requests_per_batch,
                   "Requests per point = batch x K (default 2)")
      ->check(IntegerIn(1, kMaxWorkloadRequests));
  command->add_option("--json", options->json_out, "Write {config, points} JSON here");
  command->add_option("--csv", options->csv_out, "Write one CSV row per point here");
  command->callback([&global, &exit_code, options] { exit_code = RunSweep(global, *options); });
}

void AddServeCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve", "Serve a GGUF model over an OpenAI-compatible HTTP API (with /metrics)");
  CLI::Option* model =
      command->add_option("-m,--model", options->run.model_path, "GGUF model file (llama)");
  command
      ->add_option("--config", options->config_file,
                   "Config YAML: runtime (backends), model.path, scheduler and KV sections")
      ->check(CLI::ExistingFile);
  CLI::Option* backend = command->add_option("--backend", options->run.backend,
                                             "Serve on this backend's first device");
  CLI::Option* device =
      command->add_option("--device", options->run.device, "Serve on this device (cpu:0, a name)")
          ->excludes(backend);
  command
      ->add_option("--devices", options->devices,
                   "One model replica per device, comma-separated (cpu:0,vulkan:0); each request "
                   "runs on one (docs/multi-device.md)")
      ->excludes(backend)
      ->excludes(device);
  command
      ->add_option("--routing", options->routing,
                   "Which replica a request goes to: least_tokens | round_robin")
      ->check(CLI::IsMember({"least_tokens", "round_robin"}));
  command->add_option("--kv-dtype", options->run.kv_dtype, "KV cache type: f16 or i8")
      ->check(CLI::IsMember({"f16", "i8"}));
  command
      ->add_option("--max-batch-tokens", options->run.max_batch_tokens,
                   "Tokens per executor step (prefill chunk size)")
      ->check(IntegerIn(1, kMaxBatchTokens));
  command->add_option("--host", options->host, "Address to listen on (default 127.0.0.1)");
  command->add_option("--port", options->port, "Port to listen on (0: any free port)")
      ->check(IntegerIn(0, 65535));
  command->add_option("--served-model-name", options->served_model_name,
                      "The model's name in the API (default: its general.name)");
  command->add_option("--chat-template", options->chat_template,
                      "Chat template family to use instead of the model's own");
  command->add_option("--max-sequences", options->max_sequences, "Sequences decoded together")
      ->check(IntegerIn(1, kMaxSequences));
  AddTensorParallelFlags(command, options->run.tp, options->run.tp_timeout_s,
                         options->run.tp_collectives);
  command
      ->add_option("--kv-cache-tokens", options->kv_cache_tokens,
                   "KV cache capacity in tokens (default: 2 x the context)")
      ->check(IntegerIn(1, kMaxKvCacheTokens));
  command
      ->add_option("--max-waiting", options->max_waiting,
                   "Queued requests before answering 503 (default 4 x max sequences)")
      ->check(IntegerIn(1, kMaxWorkloadRequests));
  command
      ->add_option("--drain-timeout", options->drain_timeout_s,
                   "Seconds in-flight requests get to finish on SIGINT/SIGTERM")
      ->check(CLI::Range(0.0, 3600.0));
  command
      ->add_option("--hardware", options->hardware_file,
                   "Hardware spec YAML: spec peaks for the hwinfer: MBU/MFU gauges of /metrics")
      ->check(CLI::ExistingFile);
  command->add_flag(
      "--no-probe", options->no_probe,
      "Skip the startup probe of the device (the gauges against measured peaks read 0)");
  command
      ->add_option("--http-threads", options->http_threads,
                   "HTTP worker threads (one per open connection)")
      ->check(IntegerIn(4, 4096));
  command->callback([&global, &exit_code, options, model] {
    if (options->config_file.empty() && model->count() == 0) {
      exit_code = ReportError(InvalidArgument("serve: give -m MODEL.gguf or --config FILE"));
      return;
    }
    exit_code = RunServe(global, *options);
  });
}

void AddCompareCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* command = app.add_subcommand(
      "compare", "Compare bench results and sweeps side by side; plot them with -o");
  command->add_option("files", options->files, "Result JSONs (hwinfer bench/sweep --json)")
      ->required();
  command->add_option("-o,--out", options->out_dir,
                      "Write throughput_latency, roofline and mbu plots (.png, .svg) here");
  command->callback([&exit_code, options] { exit_code = RunCompare(*options); });
}

}  // namespace
}  // namespace hwinfer::cli

int main(int argc, char** argv) {
  using namespace hwinfer::cli;
  CLI::App app{"hwinfer — LLM inference runtime for heterogeneous hardware"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("hwinfer ") + HWINFER_CLI_VERSION);
  GlobalOptions global;
  app.add_option("--config", global.config_file, "Runtime config YAML (backends and devices)")
      ->check(CLI::ExistingFile);
  app.add_option("--plugin-path", global.plugin_paths, "Extra folder to search for plugins first");
  app.add_option("--log-level", global.log_level, "debug | info | warning | error");

  int exit_code = 0;
  AddDevicesCommand(app, global, exit_code);
  AddProbeCommand(app, global, exit_code);
  AddPluginCommand(app, global, exit_code);
  AddConfigCommand(app, global, exit_code);
  AddConformanceCommand(app, global, exit_code);
  AddKvSizeCommand(app, exit_code);
  AddModelCommand(app, exit_code);
  AddGenerateCommand(app, global, exit_code);
  AddTokenizeCommands(app, exit_code);
  AddBenchModelCommand(app, global, exit_code);
  AddEvalCommand(app, global, exit_code);
  AddBenchCommand(app, global, exit_code);
  AddSweepCommand(app, global, exit_code);
  AddServeCommand(app, global, exit_code);
  AddCompareCommand(app, exit_code);

  CLI11_PARSE(app, argc, argv);
  // With --tp: MPI_Finalize after success; after an error MPI_Abort, so no rank waits on this one.
  return LeaveMpiRanks(exit_code);
}
