// llama_executor.cpp — see hwinfer/llama_executor.h: allocation and kernel checks at Create; per
// step the validation, the KV block appends (with copy-on-write and fresh-block scale resets),
// one upload of the step's integer arrays, the forward pass, and one download of the logits.
#include "hwinfer/llama_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "executor_internal.h"
#include "hwinfer/log.h"
#include "hwinfer/plugin_support.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {

using executor_internal::IntLayout;
using executor_internal::KernelSink;
using executor_internal::Stage;
using executor_internal::StepShape;

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
  if (max_logit_rows < 0 || max_logit_rows > kMaxBatchTokens) {
    return InvalidArgument(
        fmt::format("max_logit_rows is {}; expected in [0, {}] (0 = one a sequence)",
                    max_logit_rows, kMaxBatchTokens));
  }
  if (tp_collectives != TpCollectives::kAuto && tp_collectives != TpCollectives::kHost &&
      tp_collectives != TpCollectives::kDevice) {
    return InvalidArgument(fmt::format("tp_collectives is {}; expected auto, host or device",
                                       static_cast<int32_t>(tp_collectives)));
  }
  return Status::Ok();
}

int64_t ExecutorOptions::logit_rows() const {
  return std::max(max_sequences, std::min(max_logit_rows, max_batch_tokens));
}

LlamaExecutor::LlamaExecutor(std::shared_ptr<Device> device, const ExecutorOptions& options,
                             int32_t num_blocks)
    : device_(std::move(device)),
      options_(options),
      kv_(num_blocks, options.kv_block_size),
      impl_(std::make_unique<Impl>()) {}

LlamaExecutor::~LlamaExecutor() {
  // No graph may be destroyed while a replay of it is queued (a failed step can leave one).
  if (impl_ == nullptr) return;
  if (impl_->collective != nullptr && impl_->collective->rank() == 0) {
    // Unavailable: the group already lost a rank, and the step that found out reported it.
    const Status stopped = StopFollowers();
    if (!stopped.ok() && stopped.code() != StatusCode::kUnavailable) {
      Log(LogLevel::kWarning, "executor", stopped.ToString());
    }
  }
  for (Stage& stage : impl_->stages) {
    // A failed step may leave a device all-reduce waiting for a rank that is gone: bounded.
    if (stage.stream.handle() != nullptr) (void)SynchronizeStage(stage, "finishing its last step");
  }
}

size_t LlamaExecutor::decode_graphs_captured() const { return impl_->decode_graphs.size(); }

bool LlamaExecutor::fuses_rope_kv_append() const {
  for (const executor_internal::Stage& stage : impl_->stages) {
    if (!stage.fuse_rope_kv_append) return false;
  }
  return true;
}

const LlamaWeights& LlamaExecutor::weights() const { return *impl_->stages.front().weights; }

std::vector<LlamaExecutor::DeviceLayers> LlamaExecutor::device_layers() const {
  std::vector<DeviceLayers> layers;
  for (const executor_internal::Stage& stage : impl_->stages) {
    layers.push_back({stage.device, stage.first_layer, stage.end_layer});
  }
  return layers;
}

double LlamaExecutor::kv_bytes_per_token() const {
  const ModelShape& m = model().shape();
  const executor_internal::RankDims& dims = impl_->dims;  // this rank's KV heads
  const bool i8 = options_.kv_dtype == HWINFER_DTYPE_I8;
  const double values = 2.0 * static_cast<double>(m.n_layers * dims.n_kv_heads * dims.head_dim);
  const double scales = i8 ? 2.0 * static_cast<double>(m.n_layers * dims.n_kv_heads) * 4.0 /
                                 static_cast<double>(options_.kv_block_size)
                           : 0.0;
  return values * (i8 ? 1.0 : 2.0) + scales;
}

int LlamaExecutor::tensor_parallel() const {
  return impl_->collective != nullptr ? impl_->collective->size() : 1;
}

int LlamaExecutor::rank() const {
  return impl_->collective != nullptr ? impl_->collective->rank() : 0;
}

bool LlamaExecutor::device_all_reduces() const { return impl_->device_comm.valid(); }

const char* LlamaExecutor::all_reduce_path() const {
  if (impl_->collective == nullptr) return "none";
  if (impl_->device_comm.valid()) return "device";
  return impl_->collective->ModelledAllReduceSeconds(1) > 0 ? "modelled" : "host";
}

Status LlamaExecutor::Release(SequenceId sequence) { return kv_.Release(sequence); }

namespace {

// Everything a step checks before it touches any state (LlamaExecutor::Step's errors).
Status ValidateBatch(const std::vector<SequenceChunk>& batch, const KvBlockManager& kv,
                     const ExecutorOptions& options, const ModelShape& m) {
  const int64_t bs = options.kv_block_size;
  if (batch.empty()) return InvalidArgument("executor step: the batch is empty");
  if (static_cast<int64_t>(batch.size()) > options.max_sequences) {
    return InvalidArgument(fmt::format("executor step: {} sequences; max_sequences is {}",
                                       batch.size(), options.max_sequences));
  }
  int64_t n_tokens = 0;
  int64_t logit_rows = 0;
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
    const int64_t held = kv.SequenceTokens(chunk.sequence);
    const auto n = static_cast<int64_t>(chunk.tokens.size());
    if (held + n > m.context_length) {
      return InvalidArgument(fmt::format(
          "sequence {}: {} tokens held + {} new = {} passes the context length {} of {}",
          chunk.sequence, held, n, held + n, m.context_length, m.name));
    }
    if (chunk.logit_rows < 0 || chunk.logit_rows > n) {
      return InvalidArgument(fmt::format("sequence {}: logit_rows is {}; the chunk has {} tokens",
                                         chunk.sequence, chunk.logit_rows, n));
    }
    logit_rows += chunk.logit_rows > 0 ? chunk.logit_rows : (chunk.want_logits ? 1 : 0);
    n_tokens += n;
    int64_t chunk_blocks = kv.BlocksForTokens(held + n) - kv.BlocksForTokens(held);
    const std::vector<int32_t>& table = kv.BlockTable(chunk.sequence);
    if (held % bs != 0 && !table.empty() && kv.RefCount(table.back()) > 1) ++chunk_blocks;
    // Blocks the sequence reserved (KvBlockManager::Reserve) are not among the free ones.
    blocks_needed += std::max<int64_t>(chunk_blocks - kv.ReservedBlocks(chunk.sequence), 0);
  }
  if (n_tokens > options.max_batch_tokens) {
    return InvalidArgument(fmt::format("executor step: {} tokens; max_batch_tokens is {}", n_tokens,
                                       options.max_batch_tokens));
  }
  if (logit_rows > options.logit_rows()) {
    return InvalidArgument(
        fmt::format("executor step: {} rows of logits asked for; the executor holds {} "
                    "(max_logit_rows)",
                    logit_rows, options.logit_rows()));
  }
  if (blocks_needed > kv.num_free_blocks()) {
    return OutOfMemory(fmt::format(
        "executor step: the KV cache needs {} more blocks of {} tokens and has {} free (of {})",
        blocks_needed, bs, kv.num_free_blocks(), kv.num_blocks()));
  }

  return Status::Ok();
}

// Rows [first_row, first_row + rows) of |host_logits| ([*, vocab]) into |out|. Sampling from inf
// or NaN picks a token that means nothing: Internal naming the step, sequence, token and row.
Status CheckedLogits(const std::vector<float>& host_logits, size_t first_row, size_t rows,
                     int64_t vocab_size, int64_t step, SequenceId sequence,
                     std::vector<float>* out) {
  const auto vocab = static_cast<size_t>(vocab_size);
  const float* begin = host_logits.data() + first_row * vocab;
  const float* end = begin + rows * vocab;
  const float* bad = std::find_if(begin, end, [](float x) { return !std::isfinite(x); });
  if (bad != end) {
    const auto at = static_cast<size_t>(bad - begin);
    return Internal(fmt::format(
        "executor step {}: the logits of sequence {} are not finite ({} at token {} of row {}); "
        "the model's weights or activations hold inf or NaN",
        step, sequence, *bad, at % vocab, at / vocab));
  }
  out->assign(begin, end);
  return Status::Ok();
}

// The rows the output projection reads, in order, from each chunk's (first row, count); sets
// |shape|'s n_logits and whether those are its first rows (no copy into layout.last needed).
std::vector<int64_t> WantedRows(const std::vector<std::pair<int64_t, int64_t>>& logits_rows,
                                StepShape* shape) {
  std::vector<int64_t> wanted;
  for (const auto& [first, count] : logits_rows) {
    for (int64_t r = first; r < first + count; ++r) wanted.push_back(r);
  }
  shape->n_logits = static_cast<int64_t>(wanted.size());
  shape->logits_from_normed = true;
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (wanted[i] != static_cast<int64_t>(i)) shape->logits_from_normed = false;
  }
  return wanted;
}

}  // namespace

StatusOr<std::vector<std::vector<float>>> LlamaExecutor::Step(
    const std::vector<SequenceChunk>& batch) {
  const ModelShape& m = model().shape();
  Impl& impl = *impl_;
  const int64_t bs = options_.kv_block_size;

  HWINFER_RETURN_IF_ERROR(ValidateBatch(batch, kv_, options_, m));

  // ---- order: prefill chunks first, then decode tokens (one token on a non-empty history) ----
  std::vector<size_t> order(batch.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto is_decode = [&](size_t i) {
    return batch[i].tokens.size() == 1 && kv_.SequenceTokens(batch[i].sequence) > 0;
  };
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return !is_decode(i); });

  StepShape shape;
  for (const SequenceChunk& chunk : batch)
    shape.n_tokens += static_cast<int64_t>(chunk.tokens.size());
  std::vector<int32_t>& ints = impl.host_ints;
  const IntLayout& I = impl.ints;
  const int64_t MB = impl.max_blocks_per_seq;
  std::fill(ints.begin(), ints.end(), 0);
  impl.kv_copies.clear();
  impl.kv_resets.clear();
  // Per chunk in |order|: the first row and the count of its logits rows (count 0: none).
  std::vector<std::pair<int64_t, int64_t>> logits_rows;
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
    for (const auto& copy : appended->copy_on_write) impl.kv_copies.push_back(copy);
    for (int64_t t = 0; t < n; ++t) {
      const auto r = static_cast<size_t>(row + t);
      const int32_t slot = appended->slots[static_cast<size_t>(t)];
      ints[static_cast<size_t>(I.ids) + r] = chunk.tokens[static_cast<size_t>(t)];
      ints[static_cast<size_t>(I.positions) + r] = static_cast<int32_t>(held + t);
      ints[static_cast<size_t>(I.slots) + r] = slot;
      if (impl.kv_dtype == HWINFER_DTYPE_I8 && slot % bs == 0) {
        impl.kv_resets.push_back(slot / static_cast<int32_t>(bs));
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
    const int64_t rows = chunk.logit_rows > 0 ? chunk.logit_rows : (chunk.want_logits ? 1 : 0);
    logits_rows.emplace_back(row + n - rows, rows);
    row += n;
  }

  // ---- which rows the output projection reads ----
  const std::vector<int64_t> wanted = WantedRows(logits_rows, &shape);

  // ---- run: each device its layers, in order (every rank the same step) ----
  if (impl.collective != nullptr) HWINFER_RETURN_IF_ERROR(SharePlan(shape));
  HWINFER_RETURN_IF_ERROR(RunStages(shape, wanted));

  const int64_t step = ++steps_run_;
  std::vector<std::vector<float>> result(batch.size());
  size_t next_row = 0;  // the rows of host_logits are the chunks' in |order|
  for (size_t j = 0; j < order.size(); ++j) {
    const auto rows = static_cast<size_t>(logits_rows[j].second);
    if (rows == 0) continue;
    HWINFER_RETURN_IF_ERROR(CheckedLogits(impl.host_logits, next_row, rows, m.vocab_size, step,
                                          batch[order[j]].sequence, &result[order[j]]));
    next_row += rows;
  }
  return result;
}

Status LlamaExecutor::RunStages(const StepShape& shape, const std::vector<int64_t>& wanted) {
  Impl& impl = *impl_;
  const std::vector<int32_t>& ints = impl.host_ints;
  HWINFER_RETURN_IF_ERROR(ApplyKvOps());
  last_step_ = StepStats{};
  // Attention's context lengths and query starts live in the I32 region: read them from the host
  // copy uploaded to every device.
  const uint64_t ints_begin = impl.layout.ints;
  const IntArrayReader read_ints = [&](const hwinfer_tensor_view& view, std::vector<int32_t>* out) {
    if (view.offset_bytes < ints_begin || view.rank < 1) return false;
    if (std::none_of(impl.stages.begin(), impl.stages.end(), [&](const Stage& stage) {
          return view.buffer == stage.activations.handle();
        })) {
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
  for (size_t i = 0; i < impl.stages.size(); ++i) {
    HWINFER_ASSIGN_OR_RETURN(const double seconds,
                             RunStage(impl.stages[i], i == 0, shape, wanted, count));
    last_step_.device_seconds += seconds;
    last_step_.stage_seconds.push_back(seconds);
  }
  if (impl.collective != nullptr) return GatherRankStats();
  return Status::Ok();
}

StatusOr<double> LlamaExecutor::RunStage(Stage& stage, bool first, const StepShape& shape,
                                         const std::vector<int64_t>& wanted,
                                         const KernelSink& count) {
  Impl& impl = *impl_;
  const ModelShape& m = model().shape();
  Stream& stream = stage.stream;
  // The residual stream and the pending projection: rows [0, n_tokens) of residual and proj.
  const uint64_t rows_bytes = static_cast<uint64_t>(shape.n_tokens * m.d_model) * sizeof(float);
  float* const boundary_residual = impl.host_boundary.data();
  float* const boundary_proj = boundary_residual + options_.max_batch_tokens * m.d_model;
  HWINFER_RETURN_IF_ERROR(stage.start.Record(stream));
  HWINFER_RETURN_IF_ERROR(stream.CopyH2D(impl.host_ints.data(), stage.activations, impl.layout.ints,
                                         impl.host_ints.size() * sizeof(int32_t)));
  if (!first) {
    HWINFER_RETURN_IF_ERROR(
        stream.CopyH2D(boundary_residual, stage.activations, impl.layout.residual, rows_bytes));
    HWINFER_RETURN_IF_ERROR(
        stream.CopyH2D(boundary_proj, stage.activations, impl.layout.proj, rows_bytes));
  }
  const KernelSink launch = [&](const hwinfer_kernel_desc& desc, const char* what) {
    Status status = stream.Launch(desc);
    if (!status.ok()) return status.WithContext(what);
    return count(desc, what);
  };
  // Tensor parallelism: the ranks' partial rows summed (AllReduceRows).
  double modelled_seconds = 0;
  const executor_internal::ReduceSink reduce = [&](uint64_t offset, int64_t count_floats,
                                                   int64_t layer, const char* what) {
    return AllReduceRows(stage, offset, count_floats, layer, what, &modelled_seconds);
  };
  const executor_internal::ReduceSink* reduce_sink = impl.collective != nullptr ? &reduce : nullptr;
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
  const int32_t num_blocks = kv_.num_blocks();
  if (graph != nullptr) {
    HWINFER_RETURN_IF_ERROR(graph->Launch(stream).WithContext("decode graph"));
    HWINFER_RETURN_IF_ERROR(impl.EmitForward(stage, options_, num_blocks, shape, count));
    HWINFER_RETURN_IF_ERROR(impl.EmitLogits(stage, shape, count));
    last_step_.graph_replayed = true;
  } else {
    HWINFER_RETURN_IF_ERROR(
        impl.EmitForward(stage, options_, num_blocks, shape, launch, reduce_sink));
    if (stage.last) {
      const uint64_t row_bytes = static_cast<uint64_t>(m.d_model) * 4;
      if (!shape.logits_from_normed) {
        // One copy per run of consecutive rows (a scored chunk's rows are one run).
        for (size_t i = 0; i < wanted.size();) {
          size_t run = 1;
          while (i + run < wanted.size() &&
                 wanted[i + run] == wanted[i] + static_cast<int64_t>(run)) {
            ++run;
          }
          HWINFER_RETURN_IF_ERROR(stream.CopyD2D(
              stage.activations, impl.layout.normed + static_cast<uint64_t>(wanted[i]) * row_bytes,
              stage.activations, impl.layout.last + i * row_bytes, run * row_bytes));
          i += run;
        }
      }
      HWINFER_RETURN_IF_ERROR(impl.EmitLogits(stage, shape, launch));
    }
  }
  if (!stage.last) {  // hand the residual stream to the next device
    HWINFER_RETURN_IF_ERROR(
        stream.CopyD2H(stage.activations, impl.layout.residual, boundary_residual, rows_bytes));
    HWINFER_RETURN_IF_ERROR(
        stream.CopyD2H(stage.activations, impl.layout.proj, boundary_proj, rows_bytes));
  } else {
    impl.host_logits.resize(wanted.size() * static_cast<size_t>(m.vocab_size));
    if (!wanted.empty()) {
      HWINFER_RETURN_IF_ERROR(stream.CopyD2H(stage.activations, impl.layout.logits,
                                             impl.host_logits.data(),
                                             impl.host_logits.size() * sizeof(float)));
    }
  }
  HWINFER_RETURN_IF_ERROR(stage.end.Record(stream));
  HWINFER_RETURN_IF_ERROR(SynchronizeStage(stage, fmt::format("step {}", steps_run_ + 1)));
  HWINFER_ASSIGN_OR_RETURN(const uint64_t step_ns, Event::ElapsedNs(stage.start, stage.end));
  return static_cast<double>(step_ns) * 1e-9 + modelled_seconds;
}

Status LlamaExecutor::SynchronizeStage(Stage& stage, const std::string& what) {
  Impl& impl = *impl_;
  const auto synchronize = [&] {
    return stage.stream.Synchronize().WithContext(
        impl.stages.size() == 1 ? std::string("executor step")
                                : fmt::format("executor step on {}", stage.device->id()));
  };
  if (!impl.device_comm.valid()) return synchronize();
  // The device all-reduces wait for every rank: bounded by the group's deadline.
  const size_t used = std::exchange(impl.comm_events_used, 0);
  HWINFER_RETURN_IF_ERROR(impl.device_comm.Guard(
      synchronize, impl.collective->deadline_seconds(),
      fmt::format("the device all-reduces of {} on {}", what, stage.device->id())));
  for (size_t i = 0; i < used; ++i) {
    HWINFER_ASSIGN_OR_RETURN(
        const uint64_t ns, Event::ElapsedNs(impl.comm_events[i].first, impl.comm_events[i].second));
    last_step_.comm_seconds += static_cast<double>(ns) * 1e-9;
  }
  return Status::Ok();
}

Status LlamaExecutor::AllReduceRows(Stage& stage, uint64_t offset, int64_t count_floats,
                                    int64_t layer, const char* what, double* modelled_seconds) {
  Impl& impl = *impl_;
  if (impl.device_comm.valid()) {  // on the devices, in order with the step's kernels
    if (impl.comm_events_used >= impl.comm_events.size()) {
      return Internal(fmt::format("step {}: more all-reduces than the {} the executor times",
                                  steps_run_ + 1, impl.comm_events.size()));
    }
    auto& [begin, end] = impl.comm_events[impl.comm_events_used++];
    HWINFER_RETURN_IF_ERROR(begin.Record(stage.stream));
    HWINFER_RETURN_IF_ERROR(
        impl.device_comm.AllReduceSum(stage.stream, stage.activations, offset, count_floats)
            .WithContext(fmt::format("the device all-reduce after layer {}'s {} (step {})", layer,
                                     what, steps_run_ + 1)));
    return end.Record(stage.stream);
  }
  const uint64_t bytes = static_cast<uint64_t>(count_floats) * sizeof(float);
  const double modelled = impl.collective->ModelledAllReduceSeconds(static_cast<int64_t>(bytes));
  if (modelled > 0) {  // simulated ranks: only the interconnect model's time
    last_step_.comm_seconds += modelled;
    *modelled_seconds += modelled;
    return Status::Ok();
  }
  float* host = impl.host_reduce.data();
  HWINFER_RETURN_IF_ERROR(stage.stream.CopyD2H(stage.activations, offset, host, bytes));
  HWINFER_RETURN_IF_ERROR(stage.stream.Synchronize().WithContext("executor step"));
  const auto begin = std::chrono::steady_clock::now();
  HWINFER_RETURN_IF_ERROR(impl.collective->AllReduceSum(
      host, count_floats,
      fmt::format("the all-reduce after layer {}'s {} (step {})", layer, what, steps_run_ + 1)));
  last_step_.comm_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return stage.stream.CopyH2D(host, stage.activations, offset, bytes);
}

StatusOr<const Graph*> LlamaExecutor::DecodeGraph(const StepShape& shape) {
  Impl& impl = *impl_;
  auto found = impl.decode_graphs.find(shape.n_decode_seqs);
  if (found != impl.decode_graphs.end()) return &found->second;
  Stage& stage = impl.stages.front();  // graphs run on one device only
  // Record the step's kernels (nothing runs), then end the capture whatever happened.
  const KernelSink record = [&](const hwinfer_kernel_desc& desc, const char* what) {
    Status status = stage.stream.Launch(desc);
    return status.ok() ? status : status.WithContext(what);
  };
  HWINFER_RETURN_IF_ERROR(stage.stream.BeginCapture().WithContext("decode graph"));
  Status emitted = impl.EmitForward(stage, options_, kv_.num_blocks(), shape, record);
  if (emitted.ok()) emitted = impl.EmitLogits(stage, shape, record);
  StatusOr<Graph> graph = stage.stream.EndCapture();
  HWINFER_RETURN_IF_ERROR(emitted.WithContext(
      fmt::format("capturing the decode graph of {} sequences", shape.n_decode_seqs)));
  if (!graph.ok()) {
    return graph.status().WithContext(
        fmt::format("capturing the decode graph of {} sequences", shape.n_decode_seqs));
  }
  last_step_.graph_captured = true;
  return &impl.decode_graphs.emplace(shape.n_decode_seqs, std::move(*graph)).first->second;
}

Status LlamaExecutor::ApplyKvOps() {
  for (const auto& [from, to] : impl_->kv_copies) HWINFER_RETURN_IF_ERROR(CopyKvBlock(from, to));
  for (const int32_t block : impl_->kv_resets) HWINFER_RETURN_IF_ERROR(ResetBlockScales(block));
  return Status::Ok();
}

Status LlamaExecutor::CopyKvBlock(int32_t from, int32_t to) {
  Impl& impl = *impl_;
  const executor_internal::RankDims& dims = impl.dims;
  const uint64_t block_bytes = static_cast<uint64_t>(options_.kv_block_size) *
                               static_cast<uint64_t>(dims.n_kv_heads * dims.head_dim) *
                               (impl.kv_dtype == HWINFER_DTYPE_I8 ? 1 : 2);
  const uint64_t scale_bytes = static_cast<uint64_t>(dims.n_kv_heads) * 4;
  for (Stage& stage : impl.stages) {
    for (const executor_internal::LayerKv& layer : stage.kv) {
      for (const Buffer* pool : {&layer.k, &layer.v}) {
        HWINFER_RETURN_IF_ERROR(
            stage.stream.CopyD2D(*pool, static_cast<uint64_t>(from) * block_bytes, *pool,
                                 static_cast<uint64_t>(to) * block_bytes, block_bytes));
      }
      if (impl.kv_dtype != HWINFER_DTYPE_I8) continue;
      for (const Buffer* scales : {&layer.k_scales, &layer.v_scales}) {
        HWINFER_RETURN_IF_ERROR(
            stage.stream.CopyD2D(*scales, static_cast<uint64_t>(from) * scale_bytes, *scales,
                                 static_cast<uint64_t>(to) * scale_bytes, scale_bytes));
      }
    }
  }
  return Status::Ok();
}

Status LlamaExecutor::ResetBlockScales(int32_t block) {
  Impl& impl = *impl_;
  const uint64_t scale_bytes = impl.zero_scales.size() * sizeof(float);
  for (Stage& stage : impl.stages) {
    for (const executor_internal::LayerKv& layer : stage.kv) {
      for (const Buffer* scales : {&layer.k_scales, &layer.v_scales}) {
        HWINFER_RETURN_IF_ERROR(stage.stream.CopyH2D(impl.zero_scales.data(), *scales,
                                                     static_cast<uint64_t>(block) * scale_bytes,
                                                     scale_bytes));
      }
    }
  }
  return Status::Ok();
}

}  // namespace hwinfer
