// model_run.cpp — see model_run.h.
#include "model_run.h"

#include <fmt/format.h>

#include <algorithm>

namespace hwinfer::cli {

void AddModelRunOptions(CLI::App* command, ModelRunOptions& options) {
  command->add_option("-m,--model", options.model_path, "GGUF model file (llama architecture)")
      ->required();
  CLI::Option* backend =
      command->add_option("--backend", options.backend, "Run on this backend's first device");
  command->add_option("--device", options.device, "Run on this device (cpu:0, a name or a UUID)")
      ->excludes(backend);
  command->add_option("--kv-dtype", options.kv_dtype, "KV cache type: f16 or i8")
      ->check(CLI::IsMember({"f16", "i8"}));
  command
      ->add_option("--max-batch-tokens", options.max_batch_tokens,
                   "Tokens per executor step (prefill chunk size)")
      ->check(CLI::PositiveNumber);
  command->add_flag("!--no-decode-graphs", options.decode_graphs,
                    "Launch every decode step's kernels one by one instead of replaying a captured "
                    "graph (where the device can capture)");
}

StatusOr<std::unique_ptr<OpenedModel>> OpenModel(const GlobalOptions& global,
                                                 const ModelRunOptions& options,
                                                 int64_t max_sequences, int64_t kv_tokens) {
  auto opened = std::make_unique<OpenedModel>();
  HWINFER_ASSIGN_OR_RETURN(opened->registry, BuildRegistry(global));
  const Registry& registry = opened->registry;
  const RegisteredDevice* target = nullptr;
  if (!options.device.empty()) {
    HWINFER_ASSIGN_OR_RETURN(target, registry.Find(options.device));
  } else if (!options.backend.empty()) {
    std::string available;
    for (const RegisteredDevice& device : registry.devices()) {
      if (device.plugin->name() == options.backend && target == nullptr) target = &device;
      available += (available.empty() ? "" : ", ") + device.id();
    }
    if (target == nullptr) {
      return NotFound(fmt::format("no device of backend '{}' (devices found: {})", options.backend,
                                  available.empty() ? "none" : available));
    }
  } else if (!registry.devices().empty()) {
    target = &registry.devices().front();
  } else {
    return NotFound("no devices found: no plugin on the search path reported one");
  }
  HWINFER_ASSIGN_OR_RETURN(opened->device, opened->registry.Open(*target));
  HWINFER_ASSIGN_OR_RETURN(auto model, LlamaModel::Open(options.model_path));
  ExecutorOptions executor_options;
  executor_options.max_batch_tokens = std::max(options.max_batch_tokens, max_sequences);
  executor_options.max_sequences = max_sequences;
  executor_options.kv_cache_tokens = kv_tokens;
  executor_options.kv_dtype = options.kv_dtype == "i8" ? HWINFER_DTYPE_I8 : HWINFER_DTYPE_F16;
  executor_options.decode_graphs = options.decode_graphs;
  HWINFER_ASSIGN_OR_RETURN(opened->executor,
                           LlamaExecutor::Create(opened->device, model, executor_options));
  return opened;
}

}  // namespace hwinfer::cli
