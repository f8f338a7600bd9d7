// tools/cli/model_run.h — what `hwinfer generate` and `hwinfer bench-model` share: the options
// that pick the model file, the device and the executor's settings, and opening all three.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "cli_common.h"
#include "hwinfer/llama_executor.h"

namespace hwinfer::cli {

struct ModelRunOptions {
  std::string model_path;  // -m
  std::string backend;     // --backend NAME: its first device
  std::string device;      // --device SELECTOR ("cpu:0", a name, a UUID)
  std::string kv_dtype = "f16";
  int64_t max_batch_tokens = 512;
  bool decode_graphs = true;  // --no-decode-graphs turns decode-graph replay off
};

// Registers -m/--model, --backend, --device, --kv-dtype, --max-batch-tokens and
// --no-decode-graphs on |command|.
void AddModelRunOptions(CLI::App* command, ModelRunOptions& options);

struct OpenedModel {
  Registry registry;
  std::shared_ptr<Device> device;
  std::unique_ptr<LlamaExecutor> executor;
};

// Loads the registry, the model (validated) and the executor with |max_sequences| sequences and
// room for |kv_tokens| tokens in the KV cache (0 = the executor's default).
StatusOr<std::unique_ptr<OpenedModel>> OpenModel(const GlobalOptions& global,
                                                 const ModelRunOptions& options,
                                                 int64_t max_sequences, int64_t kv_tokens = 0);

}  // namespace hwinfer::cli
