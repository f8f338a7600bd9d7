// executor_create.cpp — LlamaExecutor::Create and CreateSplit (hwinfer/llama_executor.h): sizes
// checked before anything is allocated, then per device (stage) its stream and events, its
// weights, activations and KV pools, and the kernels of its part of the model asked for with
// QueryKernel.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "executor_internal.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer {

using executor_internal::ActivationLayout;
using executor_internal::IntLayout;
using executor_internal::KernelSink;
using executor_internal::Stage;
using executor_internal::StepShape;

namespace {

constexpr uint64_t kAlignment = 256;

uint64_t AlignUp(uint64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

ActivationLayout LayoutActivations(const ModelShape& m, const executor_internal::RankDims& dims,
                                   int64_t T, int64_t R, int64_t int_count) {
  ActivationLayout L;
  uint64_t next = 0;
  auto take = [&next](int64_t rows, int64_t cols) {
    const uint64_t offset = next;
    next = AlignUp(next + static_cast<uint64_t>(rows * cols) * 4);
    return offset;
  };
  const int64_t q_dim = dims.n_heads * dims.head_dim, kv_dim = dims.n_kv_heads * dims.head_dim;
  L.residual = take(T, m.d_model);
  L.normed = take(T, m.d_model);
  L.q = take(T, q_dim);
  L.k = take(T, kv_dim);
  L.v = take(T, kv_dim);
  L.attn = take(T, q_dim);
  L.proj = take(T, m.d_model);
  L.gate = take(T, dims.ffn_dim);
  L.up = take(T, dims.ffn_dim);
  L.act = take(T, dims.ffn_dim);
  L.last = take(R, m.d_model);
  L.logits = take(R, m.vocab_size);
  L.ints = take(1, int_count);
  L.total = next;
  return L;
}

IntLayout LayoutInts(int64_t T, int64_t S, int64_t max_blocks) {
  IntLayout I;
  int64_t next = 0;
  auto take = [&next](int64_t count) {
    const int64_t offset = next;
    next += count;
    return offset;
  };
  I.ids = take(T);
  I.positions = take(T);
  I.slots = take(T);
  I.query_start = take(S + 1);
  I.prefill_context = take(S);
  I.prefill_tables = take(S * max_blocks);
  I.decode_context = take(S);
  I.decode_tables = take(S * max_blocks);
  I.total = next;
  return I;
}

}  // namespace

StatusOr<std::vector<int64_t>> LlamaExecutor::SplitLayers(
    const std::vector<std::shared_ptr<Device>>& devices, int64_t n_layers,
    std::vector<int64_t> counts) {
  const auto n = static_cast<int64_t>(devices.size());
  if (n > n_layers) {
    return InvalidArgument(
        fmt::format("{} devices for a model of {} layers; each device needs "
                    "at least one layer",
                    n, n_layers));
  }
  if (!counts.empty()) {
    if (static_cast<int64_t>(counts.size()) != n) {
      return InvalidArgument(fmt::format("{} layer counts for {} devices", counts.size(), n));
    }
    for (const int64_t c : counts) {
      if (c < 1) return InvalidArgument(fmt::format("a layer count is {}; each must be >= 1", c));
    }
    if (std::accumulate(counts.begin(), counts.end(), int64_t{0}) != n_layers) {
      return InvalidArgument(fmt::format("the layer counts sum to {}; the model has {} layers",
                                         std::accumulate(counts.begin(), counts.end(), int64_t{0}),
                                         n_layers));
    }
    return counts;
  }
  std::vector<double> weight(devices.size(), 1.0);
  double sum = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceInfo& info = devices[i]->info();
    const uint64_t memory =
        info.memory_free_bytes > 0 ? info.memory_free_bytes : info.memory_total_bytes;
    weight[i] = static_cast<double>(memory);
    sum += weight[i];
  }
  if (sum <= 0) {  // no device reports memory: equal shares
    std::fill(weight.begin(), weight.end(), 1.0);
    sum = static_cast<double>(n);
  }
  // One layer each, the rest by largest remainder of the proportional shares.
  counts.assign(devices.size(), 1);
  const double spare = static_cast<double>(n_layers - n);
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = n;
  for (size_t i = 0; i < devices.size(); ++i) {
    const double share = spare * weight[i] / sum;
    counts[i] += static_cast<int64_t>(std::floor(share));
    given += static_cast<int64_t>(std::floor(share));
    remainders.emplace_back(share - std::floor(share), i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < n_layers; ++k, ++given) {
    ++counts[remainders[k % remainders.size()].second];
  }
  return counts;
}

namespace {

// The bytes of the weights a stage holds (its layers, its share of their matrices under tensor
// parallelism, and the embedding / output where it has them).
double StageWeightBytes(const LlamaModel& model, const Stage& stage, int64_t shards) {
  double bytes = 0;
  if (stage.first()) bytes += static_cast<double>(model.token_embd().size_bytes);
  if (stage.last) {
    bytes += static_cast<double>(model.output_norm().size_bytes + model.output().size_bytes);
  }
  for (int64_t l = stage.first_layer; l < stage.end_layer; ++l) {
    const LlamaLayerTensors& t = model.layers()[static_cast<size_t>(l)];
    for (const GgufTensorInfo* info : {t.attn_norm, t.ffn_norm}) {
      bytes += static_cast<double>(info->size_bytes);
    }
    for (const GgufTensorInfo* info : {t.wq, t.wk, t.wv, t.wo, t.w_gate, t.w_up, t.w_down}) {
      bytes += static_cast<double>(info->size_bytes) / static_cast<double>(shards);
    }
  }
  return bytes;
}

StatusOr<Buffer> AllocateNamed(Device& device, uint64_t bytes, const std::string& what) {
  auto buffer = device.Allocate(bytes);
  if (!buffer.ok()) {
    return buffer.status().WithContext(fmt::format("allocating {} ({} bytes)", what, bytes));
  }
  return buffer;
}

// The K and V pools (and I8 scales) of |stage|'s layers, for this rank's KV heads.
Status AllocateKv(Stage& stage, const executor_internal::RankDims& dims,
                  const ExecutorOptions& options, int32_t num_blocks) {
  const int64_t bs = options.kv_block_size;
  const uint64_t pool_bytes = static_cast<uint64_t>(num_blocks) * static_cast<uint64_t>(bs) *
                              static_cast<uint64_t>(dims.n_kv_heads * dims.head_dim) *
                              (options.kv_dtype == HWINFER_DTYPE_I8 ? 1 : 2);
  const uint64_t scale_bytes = static_cast<uint64_t>(num_blocks) * dims.n_kv_heads * 4;
  stage.kv.resize(static_cast<size_t>(stage.end_layer - stage.first_layer));
  for (int64_t l = stage.first_layer; l < stage.end_layer; ++l) {
    executor_internal::LayerKv& layer = stage.kv[static_cast<size_t>(l - stage.first_layer)];
    const std::string what = fmt::format("the KV cache of layer {}", l);
    HWINFER_ASSIGN_OR_RETURN(layer.k, AllocateNamed(*stage.device, pool_bytes, what));
    HWINFER_ASSIGN_OR_RETURN(layer.v, AllocateNamed(*stage.device, pool_bytes, what));
    if (options.kv_dtype == HWINFER_DTYPE_I8) {
      HWINFER_ASSIGN_OR_RETURN(layer.k_scales,
                               AllocateNamed(*stage.device, scale_bytes, what + " scales"));
      HWINFER_ASSIGN_OR_RETURN(layer.v_scales,
                               AllocateNamed(*stage.device, scale_bytes, what + " scales"));
    }
  }
  return Status::Ok();
}

// |memory| with the KV bytes of |layers| of the model's layers only.
ExecutorMemory StageMemory(ExecutorMemory memory, int64_t layers, int64_t n_layers) {
  memory.kv_bytes *= static_cast<double>(layers) / static_cast<double>(n_layers);
  return memory;
}

}  // namespace

StatusOr<std::unique_ptr<LlamaExecutor>> LlamaExecutor::Create(
    std::shared_ptr<Device> device, std::shared_ptr<const LlamaModel> model,
    const ExecutorOptions& options) {
  if (device == nullptr) return InvalidArgument("executor: no device");
  return CreateSplit({std::move(device)}, std::move(model), options, {});
}

StatusOr<std::unique_ptr<LlamaExecutor>> LlamaExecutor::CreateSplit(
    const std::vector<std::shared_ptr<Device>>& devices, std::shared_ptr<const LlamaModel> model,
    const ExecutorOptions& options, std::vector<int64_t> layer_counts) {
  return Build(devices, std::move(model), options, std::move(layer_counts), nullptr);
}

StatusOr<std::unique_ptr<LlamaExecutor>> LlamaExecutor::Build(
    const std::vector<std::shared_ptr<Device>>& devices, std::shared_ptr<const LlamaModel> model,
    const ExecutorOptions& options, std::vector<int64_t> layer_counts,
    std::shared_ptr<Collective> collective) {
  HWINFER_RETURN_IF_ERROR(options.Validate().WithContext("executor options"));
  const int64_t ranks = collective != nullptr ? collective->size() : 1;
  if (ranks > 1) HWINFER_RETURN_IF_ERROR(CheckWeightShards(*model, ranks));
  if (devices.empty()) return InvalidArgument("executor: no device");
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] == nullptr) {
      return InvalidArgument(fmt::format("executor: device {} is null", i));
    }
  }
  if (const Device* repeated = RepeatedDevice(devices)) {
    return InvalidArgument(fmt::format(
        "the layer split names {} twice; each device takes one range of layers", repeated->id()));
  }
  const ModelShape& m = model->shape();
  HWINFER_ASSIGN_OR_RETURN(const std::vector<int64_t> counts,
                           SplitLayers(devices, m.n_layers, std::move(layer_counts)));
  const int64_t bs = options.kv_block_size;
  // Everything below is sized from these numbers: checked before anything is allocated.
  const ExecutorMemory memory = MemoryNeeded(m, options, ranks);
  const int64_t num_blocks64 = memory.kv_tokens / bs;
  if (num_blocks64 > INT32_MAX) {
    return InvalidArgument(fmt::format("a KV cache of {} tokens needs {} blocks of {}; at most {}",
                                       memory.kv_tokens, num_blocks64, bs, INT32_MAX));
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    HWINFER_RETURN_IF_ERROR(executor_internal::CheckDeviceMemory(
        *devices[i], m, StageMemory(memory, counts[i], m.n_layers), 0));
  }
  const auto num_blocks = static_cast<int32_t>(num_blocks64);
  std::unique_ptr<LlamaExecutor> e(new LlamaExecutor(devices.front(), options, num_blocks));
  e->model_ = model;
  Impl& impl = *e->impl_;
  impl.kv_dtype = options.kv_dtype;
  impl.dims = executor_internal::DimsOfRank(m, ranks);
  impl.collective = std::move(collective);
  impl.max_blocks_per_seq = MaxBlocksPerSequence(m, options);
  const int64_t T = options.max_batch_tokens, S = options.max_sequences;
  impl.ints = LayoutInts(T, S, impl.max_blocks_per_seq);
  impl.layout = LayoutActivations(m, impl.dims, T, options.logit_rows(), impl.ints.total);
  impl.host_ints.assign(static_cast<size_t>(impl.ints.total), 0);
  impl.zero_scales.assign(static_cast<size_t>(impl.dims.n_kv_heads), 0.0f);
  if (ranks > 1) impl.host_reduce.assign(static_cast<size_t>(T * m.d_model), 0.0f);
  if (devices.size() > 1) impl.host_boundary.assign(static_cast<size_t>(2 * T * m.d_model), 0.0f);
  impl.stages.resize(devices.size());
  int64_t next_layer = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    Stage& stage = impl.stages[i];
    stage.device = devices[i];
    stage.first_layer = next_layer;
    stage.end_layer = next_layer += counts[i];
    stage.last = i + 1 == devices.size();
    const ExecutorMemory stage_memory = StageMemory(memory, counts[i], m.n_layers);
    Status opened =
        OpenStage(impl, stage, model, options, stage_memory, num_blocks, devices.size() == 1);
    if (opened.ok()) opened = QueryStageKernels(impl, stage, m, options, num_blocks);
    if (!opened.ok()) {
      return devices.size() == 1
                 ? opened
                 : opened.WithContext(fmt::format("{} (layers {}..{})", devices[i]->id(),
                                                  stage.first_layer, stage.end_layer - 1));
    }
  }
  impl.use_graphs = options.decode_graphs && devices.size() == 1 && ranks == 1 &&
                    devices.front()->SupportsGraphs();
  return e;
}

Status LlamaExecutor::OpenStage(Impl& impl, Stage& stage,
                                const std::shared_ptr<const LlamaModel>& model,
                                const ExecutorOptions& options, const ExecutorMemory& memory,
                                int32_t num_blocks, bool whole_model) {
  Device& device = *stage.device;
  HWINFER_ASSIGN_OR_RETURN(stage.stream, device.CreateStream());
  HWINFER_ASSIGN_OR_RETURN(stage.start, device.CreateEvent());
  HWINFER_ASSIGN_OR_RETURN(stage.end, device.CreateEvent());
  WeightRange range{stage.first_layer, stage.end_layer, stage.first(), stage.last};
  if (impl.collective != nullptr) {
    range.shard = impl.collective->rank();
    range.shards = impl.collective->size();
  }
  HWINFER_ASSIGN_OR_RETURN(stage.weights,
                           LlamaWeights::Place(stage.device, model, stage.stream, range));
  if (!stage.weights->imported()) {
    // One device: the whole file, as uploaded; a stage: the tensors it holds.
    const double weight_bytes = whole_model && range.shards == 1
                                    ? static_cast<double>(model->file().file_size_bytes())
                                    : StageWeightBytes(*model, stage, range.shards);
    HWINFER_RETURN_IF_ERROR(
        executor_internal::CheckDeviceMemory(device, model->shape(), memory, weight_bytes));
  }
  HWINFER_ASSIGN_OR_RETURN(stage.activations,
                           AllocateNamed(device, impl.layout.total, "the activations"));
  return AllocateKv(stage, impl.dims, options, num_blocks);
}

Status LlamaExecutor::QueryStageKernels(Impl& impl, Stage& stage, const ModelShape& m,
                                        const ExecutorOptions& options, int32_t num_blocks) {
  const int64_t T = options.max_batch_tokens, S = options.max_sequences;
  Device& device = *stage.device;
  StepShape prefill;
  prefill.n_tokens = prefill.n_prefill_tokens = T;
  prefill.n_prefill_seqs = 1;
  prefill.n_logits = std::min(options.logit_rows(), T);
  StepShape decode;
  decode.n_tokens = decode.n_decode_seqs = decode.n_logits = S;
  decode.logits_from_normed = true;
  // Ask for every kernel of an all-prefill step and an all-decode step at the largest sizes. The
  // forward is emitted with the fused rope_kv_append; where the device refuses it (for either
  // shape), the executor runs its two halves (rope, kv_append) everywhere, so those are asked for
  // at every place the fused kernel was.
  stage.fuse_rope_kv_append = true;
  bool fused_supported = true;
  struct Halves {
    hwinfer_rope_desc rope;
    hwinfer_kv_append_desc append;
    std::string what;
  };
  std::vector<Halves> fused_launches;
  const KernelSink require = [&](const hwinfer_kernel_desc& desc, const char* what) -> Status {
    HWINFER_ASSIGN_OR_RETURN(const KernelSupport support, device.QueryKernel(desc));
    if (support.supported) return Status::Ok();
    return Unsupported(fmt::format("{} cannot run {} ({} kernel) for {}: {}", device.id(), what,
                                   KernelKindName(desc.kind), m.name, support.reason));
  };
  const KernelSink query = [&](const hwinfer_kernel_desc& desc, const char* what) -> Status {
    if (desc.kind != HWINFER_KERNEL_ROPE_KV_APPEND) return require(desc, what);
    Halves halves{{}, {}, what};
    hwinfer_split_rope_kv_append(reinterpret_cast<const hwinfer_rope_kv_append_desc*>(&desc),
                                 &halves.rope, &halves.append);
    fused_launches.push_back(halves);
    HWINFER_ASSIGN_OR_RETURN(const KernelSupport support, device.QueryKernel(desc));
    fused_supported = fused_supported && support.supported;
    return Status::Ok();
  };
  for (const StepShape& shape : {prefill, decode}) {
    HWINFER_RETURN_IF_ERROR(impl.EmitForward(stage, options, num_blocks, shape, query));
    if (stage.last) {
      HWINFER_RETURN_IF_ERROR(impl.EmitLogits(stage, shape, query));
    }
  }
  if (!fused_supported) {
    for (const Halves& halves : fused_launches) {
      HWINFER_RETURN_IF_ERROR(require(AsKernelDesc(halves.rope), halves.what.c_str()));
      HWINFER_RETURN_IF_ERROR(require(AsKernelDesc(halves.append), halves.what.c_str()));
    }
  }
  stage.fuse_rope_kv_append = fused_supported;
  return Status::Ok();
}

}  // namespace hwinfer
