// llama_executor.cpp — see hwinfer/llama_executor.h: allocation and kernel checks at Create; per
// step the validation, the KV block appends (with copy-on-write and fresh-block scale resets),
// one upload of the step's integer arrays, the forward pass, and one download of the logits.
#include "hwinfer/llama_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "executor_internal.h"
#include "hwinfer/log.h"
#include "hwinfer/plugin_support.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {

using executor_internal::ActivationLayout;
using executor_internal::IntLayout;
using executor_internal::KernelSink;
using executor_internal::StepShape;

namespace {

constexpr uint64_t kAlignment = 256;

uint64_t AlignUp(uint64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

ActivationLayout LayoutActivations(const ModelShape& m, int64_t T, int64_t S, int64_t int_count) {
  ActivationLayout L;
  uint64_t next = 0;
  auto take = [&next](int64_t rows, int64_t cols) {
    const uint64_t offset = next;
    next = AlignUp(next + static_cast<uint64_t>(rows * cols) * 4);
    return offset;
  };
  const int64_t q_dim = m.n_heads * m.head_dim(), kv_dim = m.n_kv_heads * m.head_dim();
  L.residual = take(T, m.d_model);
  L.normed = take(T, m.d_model);
  L.q = take(T, q_dim);
  L.k = take(T, kv_dim);
  L.v = take(T, kv_dim);
  L.attn = take(T, q_dim);
  L.proj = take(T, m.d_model);
  L.gate = take(T, m.ffn_dim);
  L.up = take(T, m.ffn_dim);
  L.act = take(T, m.ffn_dim);
  L.last = take(S, m.d_model);
  L.logits = take(S, m.vocab_size);
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

Status ExecutorOptions::Validate() const {
  if (max_batch_tokens < 1) {
    return InvalidArgument(fmt::format("max_batch_tokens is {}; expected >= 1", max_batch_tokens));
  }
  if (max_sequences < 1 || max_sequences > max_batch_tokens) {
    return InvalidArgument(
        fmt::format("max_sequences is {}; expected between 1 and max_batch_tokens ({})",
                    max_sequences, max_batch_tokens));
  }
  if (max_batch_tokens > kMaxBatchTokens) {
    return InvalidArgument(fmt::format("max_batch_tokens is {}; expected at most {}",
                                       max_batch_tokens, kMaxBatchTokens));
  }
  if (max_sequences > kMaxSequences) {
    return InvalidArgument(
        fmt::format("max_sequences is {}; expected at most {}", max_sequences, kMaxSequences));
  }
  if (kv_block_size < 1 || kv_block_size > kMaxKvBlockSize) {
    return InvalidArgument(fmt::format("kv_block_size is {}; expected between 1 and {}",
                                       kv_block_size, kMaxKvBlockSize));
  }
  if (kv_cache_tokens < 0 || kv_cache_tokens > kMaxKvCacheTokens) {
    return InvalidArgument(fmt::format("kv_cache_tokens is {}; expected in [0, {}] (0 = automatic)",
                                       kv_cache_tokens, kMaxKvCacheTokens));
  }
  if (kv_dtype != HWINFER_DTYPE_F16 && kv_dtype != HWINFER_DTYPE_I8) {
    return InvalidArgument(fmt::format("kv_dtype is {}; expected f16 or i8", DtypeName(kv_dtype)));
  }
  return Status::Ok();
}

LlamaExecutor::LlamaExecutor(std::shared_ptr<Device> device, const ExecutorOptions& options,
                             int32_t num_blocks)
    : device_(std::move(device)),
      options_(options),
      kv_(num_blocks, options.kv_block_size),
      impl_(std::make_unique<Impl>()) {}

LlamaExecutor::~LlamaExecutor() {
  // No graph may be destroyed while a replay of it is queued (a failed step can leave one).
  if (impl_ != nullptr && impl_->stream.handle() != nullptr) (void)impl_->stream.Synchronize();
}

size_t LlamaExecutor::decode_graphs_captured() const { return impl_->decode_graphs.size(); }

bool LlamaExecutor::fuses_rope_kv_append() const { return impl_->fuse_rope_kv_append; }

double LlamaExecutor::kv_bytes_per_token() const {
  const ModelShape& m = model().shape();
  const double element = options_.kv_dtype == HWINFER_DTYPE_I8 ? 1.0 : 2.0;
  const double scales =
      options_.kv_dtype == HWINFER_DTYPE_I8
          ? 2.0 * static_cast<double>(m.n_layers * m.n_kv_heads) * 4.0 / options_.kv_block_size
          : 0.0;
  return m.KvBytesPerToken(element) + scales;
}

StatusOr<std::unique_ptr<LlamaExecutor>> LlamaExecutor::Create(
    std::shared_ptr<Device> device, std::shared_ptr<const LlamaModel> model,
    const ExecutorOptions& options) {
  HWINFER_RETURN_IF_ERROR(options.Validate().WithContext("executor options"));
  const ModelShape& m = model->shape();
  const int64_t bs = options.kv_block_size;
  // Everything below is sized from these numbers: checked before anything is allocated.
  const ExecutorMemory memory = MemoryNeeded(m, options);
  const int64_t num_blocks64 = memory.kv_tokens / bs;
  if (num_blocks64 > INT32_MAX) {
    return InvalidArgument(fmt::format("a KV cache of {} tokens needs {} blocks of {}; at most {}",
                                       memory.kv_tokens, num_blocks64, bs, INT32_MAX));
  }
  HWINFER_RETURN_IF_ERROR(executor_internal::CheckDeviceMemory(*device, m, memory, 0));
  const auto num_blocks = static_cast<int32_t>(num_blocks64);
  std::unique_ptr<LlamaExecutor> e(new LlamaExecutor(device, options, num_blocks));
  Impl& impl = *e->impl_;
  impl.kv_dtype = options.kv_dtype;
  impl.max_blocks_per_seq = MaxBlocksPerSequence(m, options);
  HWINFER_ASSIGN_OR_RETURN(impl.stream, device->CreateStream());
  HWINFER_ASSIGN_OR_RETURN(impl.step_start, device->CreateEvent());
  HWINFER_ASSIGN_OR_RETURN(impl.step_end, device->CreateEvent());
  HWINFER_ASSIGN_OR_RETURN(e->weights_, LlamaWeights::Place(device, model, impl.stream));
  if (!e->weights_->imported()) {
    HWINFER_RETURN_IF_ERROR(executor_internal::CheckDeviceMemory(
        *device, m, memory, static_cast<double>(model->file().file_size_bytes())));
  }

  const int64_t T = options.max_batch_tokens, S = options.max_sequences;
  impl.ints = LayoutInts(T, S, impl.max_blocks_per_seq);
  impl.layout = LayoutActivations(m, T, S, impl.ints.total);
  auto allocate = [&](uint64_t bytes, const std::string& what) -> StatusOr<Buffer> {
    auto buffer = device->Allocate(bytes);
    if (!buffer.ok()) {
      return buffer.status().WithContext(fmt::format("allocating {} ({} bytes)", what, bytes));
    }
    return buffer;
  };
  HWINFER_ASSIGN_OR_RETURN(impl.activations, allocate(impl.layout.total, "the activations"));
  impl.host_ints.assign(static_cast<size_t>(impl.ints.total), 0);
  impl.zero_scales.assign(static_cast<size_t>(m.n_kv_heads), 0.0f);

  const uint64_t pool_bytes = static_cast<uint64_t>(num_blocks) * static_cast<uint64_t>(bs) *
                              static_cast<uint64_t>(m.n_kv_heads * m.head_dim()) *
                              (options.kv_dtype == HWINFER_DTYPE_I8 ? 1 : 2);
  const uint64_t scale_bytes = static_cast<uint64_t>(num_blocks) * m.n_kv_heads * 4;
  impl.kv.resize(static_cast<size_t>(m.n_layers));
  for (int64_t l = 0; l < m.n_layers; ++l) {
    executor_internal::LayerKv& layer = impl.kv[static_cast<size_t>(l)];
    const std::string what = fmt::format("the KV cache of layer {}", l);
    HWINFER_ASSIGN_OR_RETURN(layer.k, allocate(pool_bytes, what));
    HWINFER_ASSIGN_OR_RETURN(layer.v, allocate(pool_bytes, what));
    if (options.kv_dtype == HWINFER_DTYPE_I8) {
      HWINFER_ASSIGN_OR_RETURN(layer.k_scales, allocate(scale_bytes, what + " scales"));
      HWINFER_ASSIGN_OR_RETURN(layer.v_scales, allocate(scale_bytes, what + " scales"));
    }
  }

  StepShape prefill;
  prefill.n_tokens = prefill.n_prefill_tokens = T;
  prefill.n_prefill_seqs = 1;
  prefill.n_logits = 1;
  StepShape decode;
  decode.n_tokens = decode.n_decode_seqs = decode.n_logits = S;
  decode.logits_from_normed = true;
  // Ask for every kernel of an all-prefill step and an all-decode step at the largest sizes. The
  // forward is emitted with the fused rope_kv_append; where the device refuses it (for either
  // shape), the executor runs its two halves (rope, kv_append) everywhere, so those are asked for
  // at every place the fused kernel was.
  impl.use_graphs = options.decode_graphs && device->SupportsGraphs();
  impl.fuse_rope_kv_append = true;
  bool fused_supported = true;
  struct Halves {
    hwinfer_rope_desc rope;
    hwinfer_kv_append_desc append;
    std::string what;
  };
  std::vector<Halves> fused_launches;
  const KernelSink require = [&](const hwinfer_kernel_desc& desc, const char* what) -> Status {
    HWINFER_ASSIGN_OR_RETURN(const KernelSupport support, device->QueryKernel(desc));
    if (support.supported) return Status::Ok();
    return Unsupported(fmt::format("{} cannot run {} ({} kernel) for {}: {}", device->id(), what,
                                   KernelKindName(desc.kind), m.name, support.reason));
  };
  const KernelSink query = [&](const hwinfer_kernel_desc& desc, const char* what) -> Status {
    if (desc.kind != HWINFER_KERNEL_ROPE_KV_APPEND) return require(desc, what);
    Halves halves{{}, {}, what};
    hwinfer_split_rope_kv_append(reinterpret_cast<const hwinfer_rope_kv_append_desc*>(&desc),
                                 &halves.rope, &halves.append);
    fused_launches.push_back(halves);
    HWINFER_ASSIGN_OR_RETURN(const KernelSupport support, device->QueryKernel(desc));
    fused_supported = fused_supported && support.supported;
    return Status::Ok();
  };
  for (const StepShape& shape : {prefill, decode}) {
    HWINFER_RETURN_IF_ERROR(impl.EmitForward(*e->weights_, options, num_blocks, shape, query));
    HWINFER_RETURN_IF_ERROR(impl.EmitLogits(*e->weights_, shape, query));
  }
  if (!fused_supported) {
    for (const Halves& halves : fused_launches) {
      HWINFER_RETURN_IF_ERROR(require(AsKernelDesc(halves.rope), halves.what.c_str()));
      HWINFER_RETURN_IF_ERROR(require(AsKernelDesc(halves.append), halves.what.c_str()));
    }
  }
  impl.fuse_rope_kv_append = fused_supported;
  return e;
}

Status LlamaExecutor::Release(SequenceId sequence) { return kv_.Release(sequence); }

StatusOr<std::vector<std::vector<float>>> LlamaExecutor::Step(
    const std::vector<SequenceChunk>& batch) {
  const ModelShape& m = model().shape();
  Impl& impl = *impl_;
  const int64_t bs = options_.kv_block_size;

  // ---- validate everything before touching any state ----
  if (batch.empty()) return InvalidArgument("executor step: the batch is empty");
  if (static_cast<int64_t>(batch.size()) > options_.max_sequences) {
    return InvalidArgument(fmt::format("executor step: {} sequences; max_sequences is {}",
                                       batch.size(), options_.max_sequences));
  }
  int64_t n_tokens = 0;
  int64_t blocks_needed = 0;
  std::set<SequenceId> seen;
  for (const SequenceChunk& chunk : batch) {
    if (!seen.insert(chunk.sequence).second) {
      return InvalidArgument(
          fmt::format("executor step: sequence {} appears twice in one step", chunk.sequence));
    }
    if (chunk.tokens.empty()) {
      return InvalidArgument(
          fmt::format("executor step: sequence {} has no tokens", chunk.sequence));
    }
    for (size_t i = 0; i < chunk.tokens.size(); ++i) {
      const int32_t id = chunk.tokens[i];
      if (id < 0 || id >= m.vocab_size) {
        return InvalidArgument(
            fmt::format("sequence {}: token {} (index {}) is outside the vocabulary [0, {}) of {}",
                        chunk.sequence, id, i, m.vocab_size, m.name));
      }
    }
    const int64_t held = kv_.SequenceTokens(chunk.sequence);
    const auto n = static_cast<int64_t>(chunk.tokens.size());
    if (held + n > m.context_length) {
      return InvalidArgument(fmt::format(
          "sequence {}: {} tokens held + {} new = {} passes the context length {} of {}",
          chunk.sequence, held, n, held + n, m.context_length, m.name));
    }
    n_tokens += n;
    int64_t chunk_blocks = kv_.BlocksForTokens(held + n) - kv_.BlocksForTokens(held);
    const std::vector<int32_t>& table = kv_.BlockTable(chunk.sequence);
    if (held % bs != 0 && !table.empty() && kv_.RefCount(table.back()) > 1) ++chunk_blocks;
    // Blocks the sequence reserved (KvBlockManager::Reserve) are not among the free ones.
    blocks_needed += std::max<int64_t>(chunk_blocks - kv_.ReservedBlocks(chunk.sequence), 0);
  }
  if (n_tokens > options_.max_batch_tokens) {
    return InvalidArgument(fmt::format("executor step: {} tokens; max_batch_tokens is {}", n_tokens,
                                       options_.max_batch_tokens));
  }
  if (blocks_needed > kv_.num_free_blocks()) {
    return OutOfMemory(fmt::format(
        "executor step: the KV cache needs {} more blocks of {} tokens and has {} free (of {})",
        blocks_needed, bs, kv_.num_free_blocks(), kv_.num_blocks()));
  }

  // ---- order: prefill chunks first, then decode tokens (one token on a non-empty history) ----
  std::vector<size_t> order(batch.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto is_decode = [&](size_t i) {
    return batch[i].tokens.size() == 1 && kv_.SequenceTokens(batch[i].sequence) > 0;
  };
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return !is_decode(i); });

  StepShape shape;
  shape.n_tokens = n_tokens;
  std::vector<int32_t>& ints = impl.host_ints;
  const IntLayout& I = impl.ints;
  const int64_t MB = impl.max_blocks_per_seq;
  std::fill(ints.begin(), ints.end(), 0);
  std::vector<int64_t> logits_rows;  // per chunk in |order|: the token row, or -1
  int64_t row = 0;
  for (size_t i : order) {
    const SequenceChunk& chunk = batch[i];
    const bool decode = is_decode(i);
    const int64_t held = kv_.SequenceTokens(chunk.sequence);
    const auto n = static_cast<int64_t>(chunk.tokens.size());
    auto appended = kv_.Append(chunk.sequence, n);
    if (!appended.ok()) {
      return Internal("executor step: KV append failed after the capacity check: " +
                      appended.status().ToString());
    }
    for (const auto& [from, to] : appended->copy_on_write) {
      HWINFER_RETURN_IF_ERROR(CopyKvBlock(from, to));
    }
    for (int64_t t = 0; t < n; ++t) {
      const auto r = static_cast<size_t>(row + t);
      const int32_t slot = appended->slots[static_cast<size_t>(t)];
      ints[static_cast<size_t>(I.ids) + r] = chunk.tokens[static_cast<size_t>(t)];
      ints[static_cast<size_t>(I.positions) + r] = static_cast<int32_t>(held + t);
      ints[static_cast<size_t>(I.slots) + r] = slot;
      if (impl.kv_dtype == HWINFER_DTYPE_I8 && slot % bs == 0) {
        HWINFER_RETURN_IF_ERROR(ResetBlockScales(slot / static_cast<int32_t>(bs)));
      }
    }
    const std::vector<int32_t>& table = kv_.BlockTable(chunk.sequence);
    if (!decode) {
      const int64_t s = shape.n_prefill_seqs++;
      shape.n_prefill_tokens += n;
      ints[static_cast<size_t>(I.query_start + s + 1)] = static_cast<int32_t>(row + n);
      ints[static_cast<size_t>(I.prefill_context + s)] = static_cast<int32_t>(held);
      std::copy(table.begin(), table.end(), ints.begin() + I.prefill_tables + s * MB);
    } else {
      const int64_t s = shape.n_decode_seqs++;
      ints[static_cast<size_t>(I.decode_context + s)] = static_cast<int32_t>(held + 1);
      std::copy(table.begin(), table.end(), ints.begin() + I.decode_tables + s * MB);
    }
    logits_rows.push_back(chunk.want_logits ? row + n - 1 : -1);
    row += n;
  }

  // ---- which rows the output projection reads ----
  std::vector<int64_t> wanted;
  for (int64_t r : logits_rows) {
    if (r >= 0) wanted.push_back(r);
  }
  shape.n_logits = static_cast<int64_t>(wanted.size());
  shape.logits_from_normed = true;
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (wanted[i] != static_cast<int64_t>(i)) shape.logits_from_normed = false;
  }

  // ---- run ----
  Stream& stream = impl.stream;
  last_step_ = StepStats{};
  HWINFER_RETURN_IF_ERROR(impl.step_start.Record(stream));
  HWINFER_RETURN_IF_ERROR(stream.CopyH2D(ints.data(), impl.activations, impl.layout.ints,
                                         ints.size() * sizeof(int32_t)));
  // Attention's context lengths and query starts live in the I32 region: read them from the host
  // copy just uploaded.
  const hwinfer_buffer* activations = impl.activations.handle();
  const uint64_t ints_begin = impl.layout.ints;
  const IntArrayReader read_ints = [&](const hwinfer_tensor_view& view, std::vector<int32_t>* out) {
    if (view.buffer != activations || view.offset_bytes < ints_begin || view.rank < 1) {
      return false;
    }
    int64_t count = 1;
    for (uint32_t d = 0; d < view.rank; ++d) count *= view.shape[d];
    const uint64_t first = (view.offset_bytes - ints_begin) / sizeof(int32_t);
    if (count < 0 || first + static_cast<uint64_t>(count) > ints.size()) return false;
    out->assign(ints.begin() + static_cast<int64_t>(first),
                ints.begin() + static_cast<int64_t>(first) + count);
    return true;
  };
  const KernelSink count = [&](const hwinfer_kernel_desc& desc, const char*) {
    last_step_.cost.Add(CountKernelCost(desc, read_ints));
    ++last_step_.kernels;
    return Status::Ok();
  };
  const KernelSink launch = [&](const hwinfer_kernel_desc& desc, const char* what) {
    Status status = stream.Launch(desc);
    if (!status.ok()) return status.WithContext(what);
    return count(desc, what);
  };
  // A decode-only step whose rows are the logits rows depends on its batch size alone: replay.
  const bool graph_step = impl.use_graphs && shape.n_prefill_seqs == 0 &&
                          shape.logits_from_normed && shape.n_logits == shape.n_decode_seqs;
  const Graph* graph = nullptr;
  if (graph_step) {
    StatusOr<const Graph*> captured = DecodeGraph(shape);
    if (captured.ok()) {
      graph = *captured;
    } else {
      // The device offered graphs but could not capture this step: run it and every later step
      // directly (the same kernels), and say why once.
      impl.use_graphs = false;
      Log(LogLevel::kWarning, "executor",
          fmt::format("{}: decode graphs are off for this executor; capturing failed: {}",
                      device_->id(), captured.status().ToString()));
    }
  }
  if (graph != nullptr) {
    HWINFER_RETURN_IF_ERROR(graph->Launch(stream).WithContext("decode graph"));
    HWINFER_RETURN_IF_ERROR(impl.EmitForward(*weights_, options_, kv_.num_blocks(), shape, count));
    HWINFER_RETURN_IF_ERROR(impl.EmitLogits(*weights_, shape, count));
    last_step_.graph_replayed = true;
  } else {
    HWINFER_RETURN_IF_ERROR(impl.EmitForward(*weights_, options_, kv_.num_blocks(), shape, launch));
    const uint64_t row_bytes = static_cast<uint64_t>(m.d_model) * 4;
    if (!shape.logits_from_normed) {
      for (size_t i = 0; i < wanted.size(); ++i) {
        HWINFER_RETURN_IF_ERROR(stream.CopyD2D(
            impl.activations, impl.layout.normed + static_cast<uint64_t>(wanted[i]) * row_bytes,
            impl.activations, impl.layout.last + i * row_bytes, row_bytes));
      }
    }
    HWINFER_RETURN_IF_ERROR(impl.EmitLogits(*weights_, shape, launch));
  }
  const auto vocab = static_cast<size_t>(m.vocab_size);
  impl.host_logits.resize(wanted.size() * vocab);
  if (!wanted.empty()) {
    HWINFER_RETURN_IF_ERROR(stream.CopyD2H(impl.activations, impl.layout.logits,
                                           impl.host_logits.data(),
                                           impl.host_logits.size() * sizeof(float)));
  }
  HWINFER_RETURN_IF_ERROR(impl.step_end.Record(stream));
  HWINFER_RETURN_IF_ERROR(stream.Synchronize().WithContext("executor step"));
  HWINFER_ASSIGN_OR_RETURN(const uint64_t step_ns,
                           Event::ElapsedNs(impl.step_start, impl.step_end));
  last_step_.device_seconds = static_cast<double>(step_ns) * 1e-9;

  const int64_t step = ++steps_run_;
  std::vector<std::vector<float>> result(batch.size());
  size_t next_logits = 0;
  for (size_t j = 0; j < order.size(); ++j) {
    if (logits_rows[j] < 0) continue;
    const float* begin = impl.host_logits.data() + next_logits * vocab;
    // Sampling from inf or NaN picks a token that means nothing: that is an error, not output.
    const float* bad =
        std::find_if(begin, begin + vocab, [](float x) { return !std::isfinite(x); });
    if (bad != begin + vocab) {
      return Internal(fmt::format(
          "executor step {}: the logits of sequence {} are not finite ({} at token {}); the "
          "model's weights or activations hold inf or NaN",
          step, batch[order[j]].sequence, *bad, bad - begin));
    }
    result[order[j]].assign(begin, begin + vocab);
    ++next_logits;
  }
  return result;
}

StatusOr<const Graph*> LlamaExecutor::DecodeGraph(const StepShape& shape) {
  Impl& impl = *impl_;
  auto found = impl.decode_graphs.find(shape.n_decode_seqs);
  if (found != impl.decode_graphs.end()) return &found->second;
  // Record the step's kernels (nothing runs), then end the capture whatever happened.
  const KernelSink record = [&](const hwinfer_kernel_desc& desc, const char* what) {
    Status status = impl.stream.Launch(desc);
    return status.ok() ? status : status.WithContext(what);
  };
  HWINFER_RETURN_IF_ERROR(impl.stream.BeginCapture().WithContext("decode graph"));
  Status emitted = impl.EmitForward(*weights_, options_, kv_.num_blocks(), shape, record);
  if (emitted.ok()) emitted = impl.EmitLogits(*weights_, shape, record);
  StatusOr<Graph> graph = impl.stream.EndCapture();
  HWINFER_RETURN_IF_ERROR(emitted.WithContext(
      fmt::format("capturing the decode graph of {} sequences", shape.n_decode_seqs)));
  if (!graph.ok()) {
    return graph.status().WithContext(
        fmt::format("capturing the decode graph of {} sequences", shape.n_decode_seqs));
  }
  last_step_.graph_captured = true;
  return &impl.decode_graphs.emplace(shape.n_decode_seqs, std::move(*graph)).first->second;
}

Status LlamaExecutor::CopyKvBlock(int32_t from, int32_t to) {
  Impl& impl = *impl_;
  const ModelShape& m = model().shape();
  const uint64_t block_bytes = static_cast<uint64_t>(options_.kv_block_size) *
                               static_cast<uint64_t>(m.n_kv_heads * m.head_dim()) *
                               (impl.kv_dtype == HWINFER_DTYPE_I8 ? 1 : 2);
  const uint64_t scale_bytes = static_cast<uint64_t>(m.n_kv_heads) * 4;
  for (const executor_internal::LayerKv& layer : impl.kv) {
    for (const Buffer* pool : {&layer.k, &layer.v}) {
      HWINFER_RETURN_IF_ERROR(impl.stream.CopyD2D(*pool, static_cast<uint64_t>(from) * block_bytes,
                                                  *pool, static_cast<uint64_t>(to) * block_bytes,
                                                  block_bytes));
    }
    if (impl.kv_dtype != HWINFER_DTYPE_I8) continue;
    for (const Buffer* scales : {&layer.k_scales, &layer.v_scales}) {
      HWINFER_RETURN_IF_ERROR(
          impl.stream.CopyD2D(*scales, static_cast<uint64_t>(from) * scale_bytes, *scales,
                              static_cast<uint64_t>(to) * scale_bytes, scale_bytes));
    }
  }
  return Status::Ok();
}

Status LlamaExecutor::ResetBlockScales(int32_t block) {
  Impl& impl = *impl_;
  const uint64_t scale_bytes = impl.zero_scales.size() * sizeof(float);
  for (const executor_internal::LayerKv& layer : impl.kv) {
    for (const Buffer* scales : {&layer.k_scales, &layer.v_scales}) {
      HWINFER_RETURN_IF_ERROR(impl.stream.CopyH2D(impl.zero_scales.data(), *scales,
                                                  static_cast<uint64_t>(block) * scale_bytes,
                                                  scale_bytes));
    }
  }
  return Status::Ok();
}

}  // namespace hwinfer
