// model_run.cpp — see model_run.h.
#include "model_run.h"

#include <fmt/format.h>

#include <algorithm>

#include "bench_run.h"
#include "mpi_ranks.h"

namespace hwinfer::cli {

namespace {

// The KV tokens |size| needs, after checking it fits |shape|'s context length.
StatusOr<int64_t> KvTokensFor(const ModelShape& shape, const RunSize& size, int32_t block_size) {
  // prompt and new are at most 2^31 each (the flags' bounds): no overflow below.
  const int64_t positions = size.prompt_tokens + size.new_tokens - 1;
  if (positions > shape.context_length) {
    return InvalidArgument(fmt::format(
        "a prompt of {} tokens plus {} new tokens needs {} positions; the context length of {} "
        "is {}",
        size.prompt_tokens, size.new_tokens, positions, shape.name, shape.context_length));
  }
  const int64_t per_sequence = (positions + block_size - 1) / block_size * block_size;
  if (per_sequence > kMaxKvCacheTokens / size.sequences) {
    return InvalidArgument(fmt::format(
        "{} sequences of {} positions need a KV cache of more than {} tokens; lower the batch",
        size.sequences, positions, kMaxKvCacheTokens));
  }
  return size.sequences * per_sequence;
}

}  // namespace

StatusOr<const RegisteredDevice*> SelectDevice(const Registry& registry, const std::string& device,
                                               const std::string& backend,
                                               const std::string& where) {
  if (!device.empty()) return registry.Find(device);
  if (!backend.empty()) {
    std::string available;
    for (const RegisteredDevice& candidate : registry.devices()) {
      if (candidate.plugin->name() == backend) return &candidate;
      available += (available.empty() ? "" : ", ") + candidate.id();
    }
    return NotFound(fmt::format("no device of backend '{}'{} (devices found: {})", backend, where,
                                available.empty() ? "none" : available));
  }
  if (registry.devices().empty()) {
    return NotFound("no devices found: no plugin on the search path reported one");
  }
  return &registry.devices().front();
}

namespace {

// The executor's options for |size| on |model|.
StatusOr<ExecutorOptions> ExecutorOptionsFor(const LlamaModel& model,
                                             const ModelRunOptions& options, const RunSize& size) {
  ExecutorOptions executor_options;
  HWINFER_ASSIGN_OR_RETURN(executor_options.kv_cache_tokens,
                           KvTokensFor(model.shape(), size, executor_options.kv_block_size));
  executor_options.max_batch_tokens = std::max(options.max_batch_tokens, size.sequences);
  executor_options.max_sequences = size.sequences;
  executor_options.max_logit_rows = size.logit_rows;
  executor_options.kv_dtype = options.kv_dtype == "i8" ? HWINFER_DTYPE_I8 : HWINFER_DTYPE_F16;
  executor_options.decode_graphs = options.decode_graphs;
  if (!options.tp_collectives.empty()) {
    HWINFER_ASSIGN_OR_RETURN(executor_options.tp_collectives,
                             ParseTpCollectives(options.tp_collectives));
  }
  return executor_options;
}

// This rank's device and model opened into |opened|, and its executor's options.
StatusOr<ExecutorOptions> OpenRank(const GlobalOptions& global, const ModelRunOptions& options,
                                   const RunSize& size, int rank, OpenedModel& opened,
                                   std::shared_ptr<const LlamaModel>* model) {
  if (!options.split.empty() || !options.layer_split.empty()) {
    return InvalidArgument(
        "--tp splits every layer over the ranks; --split and --layer-split split the layers over "
        "devices: give one of the two");
  }
  HWINFER_ASSIGN_OR_RETURN(opened.registry, BuildRegistry(global));
  HWINFER_ASSIGN_OR_RETURN(const std::string selector,
                           RankDevice(options.devices, options.device, options.tp, rank));
  HWINFER_ASSIGN_OR_RETURN(const RegisteredDevice* target,
                           SelectDevice(opened.registry, selector, options.backend));
  HWINFER_ASSIGN_OR_RETURN(opened.device, opened.registry.Open(*target));
  HWINFER_ASSIGN_OR_RETURN(*model, LlamaModel::Open(options.model_path));
  return ExecutorOptionsFor(**model, options, size);
}

StatusOr<std::unique_ptr<OpenedModel>> OpenTensorParallel(const GlobalOptions& global,
                                                          const ModelRunOptions& options,
                                                          const RunSize& size) {
  HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Collective> collective,
                           JoinMpiRanks(options.tp, options.tp_timeout_s));
  auto opened = std::make_unique<OpenedModel>();
  std::shared_ptr<const LlamaModel> model;
  StatusOr<ExecutorOptions> executor_options =
      OpenRank(global, options, size, collective->rank(), *opened, &model);
  if (!executor_options.ok()) {
    return LlamaExecutor::FailTensorParallel(*collective, executor_options.status());
  }
  if (collective->rank() != 0) {
    HWINFER_RETURN_IF_ERROR(LlamaExecutor::FollowTensorParallel(collective, opened->device, model));
    opened->followed = true;
    return opened;
  }
  HWINFER_ASSIGN_OR_RETURN(
      opened->executor,
      LlamaExecutor::CreateTensorParallel(opened->device, model, *executor_options, collective));
  return opened;
}

}  // namespace

StatusOr<std::unique_ptr<OpenedModel>> OpenModel(const GlobalOptions& global,
                                                 const ModelRunOptions& options,
                                                 const RunSize& size) {
  if (options.tp > 1) return OpenTensorParallel(global, options, size);
  auto opened = std::make_unique<OpenedModel>();
  HWINFER_ASSIGN_OR_RETURN(opened->registry, BuildRegistry(global));
  std::vector<std::shared_ptr<Device>> devices;
  if (!options.devices.empty()) {
    if (options.split != "layers") {
      return InvalidArgument(
          "--devices runs one model over several devices here: add --split layers (replicas "
          "are for hwinfer bench and serve)");
    }
    HWINFER_ASSIGN_OR_RETURN(devices, OpenDevicesFlag(opened->registry, options.devices));
  } else {
    if (!options.split.empty() || !options.layer_split.empty()) {
      return InvalidArgument("--split and --layer-split need --devices A,B");
    }
    HWINFER_ASSIGN_OR_RETURN(const RegisteredDevice* target,
                             SelectDevice(opened->registry, options.device, options.backend));
    HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, opened->registry.Open(*target));
    devices.push_back(std::move(device));
  }
  std::vector<int64_t> layer_counts;
  if (!options.layer_split.empty()) {
    HWINFER_ASSIGN_OR_RETURN(layer_counts, ParseLayerSplit(options.layer_split, "--layer-split"));
  }
  HWINFER_ASSIGN_OR_RETURN(auto model, LlamaModel::Open(options.model_path));
  HWINFER_ASSIGN_OR_RETURN(const ExecutorOptions executor_options,
                           ExecutorOptionsFor(*model, options, size));
  opened->device = devices.front();
  HWINFER_ASSIGN_OR_RETURN(
      opened->executor,
      LlamaExecutor::CreateSplit(devices, model, executor_options, std::move(layer_counts)));
  return opened;
}

StatusOr<std::vector<int64_t>> ParseLayerSplit(const std::string& text, const std::string& flag) {
  std::vector<int64_t> counts;
  for (const std::string& item : SplitCommas(text)) {
    const std::optional<int64_t> value = ParseDecimal(item);
    if (!value || *value < 1) {
      return InvalidArgument(flag + " '" + text +
                             "' must be positive layer counts separated by commas, e.g. 11,11");
    }
    counts.push_back(*value);
  }
  return counts;
}

}  // namespace hwinfer::cli
