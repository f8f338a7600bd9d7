// hwinfer/llama_executor.h — runs a Llama model on one device through the plugin ABI only: one
// Step() advances a batch of sequences that mixes prefill chunks and single decode tokens.
//
// The executor owns the weights on the device (placed once), the paged KV cache (one K and one V
// pool per layer, [num_blocks, block_size, n_kv_heads, head_dim] in F16 or I8 with per-(block,
// head) F32 scales) and the activation buffers, all allocated at Create. The KV bookkeeping is the
// core's KvBlockManager: each Step appends its sequences' tokens there and hands the kernels the
// resulting block tables and slot mapping. Every kernel the model needs is asked for with
// QueryKernel at Create, so an unsupported placement fails there, naming the kernel and reason.
//
// One step (T tokens; prefill chunks first, decode tokens after):
//   x [T, d] = embedding(ids)
//   per layer: h = rms_norm(x (+ residual)); q, k, v = h Wq, h Wk, h Wv; rope(q, k, positions);
//              kv_append(k, v, slots); attn = attention_prefill (chunks) | attention_decode_paged
//              (decode tokens); x += attn Wo; h = rms_norm(x); x += (silu(h Wgate) * h Wup) Wdown
//   logits [S', vocab] = rms_norm(x)[last token of each sequence that wants logits] Woutput
// then one device-to-host copy of the logits rows. Not thread-safe: one caller at a time.
//
// Where the device has the fused kernel, rope + kv_append run as one rope_kv_append. Where it can
// capture graphs (and ExecutorOptions::decode_graphs), a decode-only step whose every sequence
// wants logits runs as the replay of a graph captured the first time that batch size was seen:
// every buffer it reads is at a fixed address (the I32 region is rewritten by the step's one
// upload before the replay), and its descriptors depend on the batch size alone.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/collective.h"
#include "hwinfer/device.h"
#include "hwinfer/kernel_cost.h"
#include "hwinfer/kv_block_manager.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/llama_weights.h"
#include "hwinfer/plugin.h"
#include "hwinfer/status.h"

namespace hwinfer {

namespace executor_internal {
struct StepShape;
struct Stage;
}  // namespace executor_internal

// Upper bounds of ExecutorOptions: far past any real run, low enough that nothing sized by them
// can overflow.
inline constexpr int64_t kMaxBatchTokens = 1 << 20;                   // tokens per step
inline constexpr int64_t kMaxSequences = 4096;                        // sequences per step
inline constexpr int32_t kMaxKvBlockSize = 4096;                      // tokens per KV block
inline constexpr int64_t kMaxKvCacheTokens = (int64_t{1} << 31) - 1;  // a petabyte at 7B scale

struct ExecutorOptions {
  int64_t max_batch_tokens = 512;  // tokens per step (prefill chunks + decode tokens)
  int64_t max_sequences = 16;      // sequences per step
  int32_t kv_block_size = 16;      // tokens per KV block
  int64_t kv_cache_tokens = 0;     // KV capacity in tokens; 0 = 2 x the model's context length
  uint32_t kv_dtype = HWINFER_DTYPE_F16;  // F16 or I8 (with per-block scales)
  // Rows of logits one step can return (SequenceChunk::logit_rows, e.g. scoring a text); 0 = one
  // per sequence. At most max_batch_tokens are kept (a step has no more tokens).
  int64_t max_logit_rows = 0;
  // The rows the logits buffer holds: max_sequences, or more as max_logit_rows asks.
  int64_t logit_rows() const;
  // Decode-only steps run from graphs captured once per batch size and replayed (CUDA graphs),
  // where the device can capture (Device::SupportsGraphs); elsewhere this changes nothing.
  bool decode_graphs = true;
  // Tensor parallelism only: where the all-reduces run (ignored by one-rank executors).
  TpCollectives tp_collectives = TpCollectives::kAuto;
  // InvalidArgument naming the field when a value is out of range.
  Status Validate() const;
};

// What an executor allocates on its device besides the weights, computed in double from the
// shape and options alone (no allocation), so absurd values give a finite number to refuse.
struct ExecutorMemory {
  int64_t kv_tokens = 0;        // KV capacity: kv_cache_tokens (or 2 x context), whole blocks
  double kv_bytes = 0;          // K and V pools of every layer, I8 scales included
  double activation_bytes = 0;  // the activation buffer of the largest step
  double total() const { return kv_bytes + activation_bytes; }
};

// One sequence's part of a step: its next tokens (a prefill chunk, or one decode token), placed
// at the positions after the tokens it already holds in the KV cache.
struct SequenceChunk {
  SequenceId sequence = 0;
  std::vector<int32_t> tokens;
  bool want_logits = true;  // return the logits of the chunk's last token
  // When > 0: return instead the logits of the chunk's last |logit_rows| tokens, row-major
  // [logit_rows, vocab] (scoring every position of a text, hwinfer/perplexity.h).
  int64_t logit_rows = 0;
};

// What the last Step did, for the metrics layer: the bytes and FLOPs of every kernel it launched,
// counted by the core from the descriptors (hwinfer/kernel_cost.h), and its duration on the
// device's clock (event timestamps around the step's work: the virtual clock on a simulated
// device).
// One rank's part of a tensor-parallel step: its kernels' cost and device time, and the seconds
// of that time it spent in collectives (the all-reduces, including the wait for slower ranks).
struct RankStepStats {
  CostTotals cost;
  int64_t kernels = 0;
  double device_seconds = 0;
  double comm_seconds = 0;
};

struct StepStats {
  CostTotals cost;
  int64_t kernels = 0;
  double device_seconds = 0;
  // Per device of a layer split, in layer order, its part of device_seconds (one entry with one
  // device).
  std::vector<double> stage_seconds;
  // Tensor parallelism: of device_seconds, the time in collectives on this rank; and on rank 0,
  // every rank's stats in rank order (empty without tensor parallelism).
  double comm_seconds = 0;
  std::vector<RankStepStats> ranks;
  // The step's cost over the whole system: every rank's with tensor parallelism, else |cost|.
  CostTotals system_cost() const;
  bool graph_replayed = false;  // the kernels ran as one replay of a captured decode graph
  bool graph_captured = false;  // ... and that graph was captured by this step
};

// Adds a step's per-rank stats to |totals| (one entry per rank; sized on first use).
void AccumulateRankStats(const std::vector<RankStepStats>& step,
                         std::vector<RankStepStats>* totals);

class LlamaExecutor {
 public:
  // Places the weights, allocates the KV pools and activations, and checks every kernel with
  // QueryKernel. Errors name the option, the buffer or the kernel. Before anything is allocated,
  // MemoryNeeded is checked against the device's memory (OutOfMemory naming both, and what to
  // lower); block tables are sized by what a sequence can hold (the context length or the whole
  // cache, whichever is smaller), never by the context length alone.
  static StatusOr<std::unique_ptr<LlamaExecutor>> Create(std::shared_ptr<Device> device,
                                                         std::shared_ptr<const LlamaModel> model,
                                                         const ExecutorOptions& options = {});
  // The layers split over several devices (a pipeline, docs/multi-device.md): device i runs
  // |layer_counts|[i] consecutive layers (each >= 1, summing to the model's; empty: in proportion
  // to each device's free memory), the first also the embedding, the last the output norm and
  // projection. Each holds its layers' weights and KV pools (one block table for all: the same
  // KvBlockManager); each step runs the devices in turn, handing the residual stream [T, d] (and
  // the pending projection) from one to the next through host memory. Greedy tokens equal a
  // one-device run's on the same backends. Decode graphs are not used across several devices.
  // Errors: Create's, per device (naming it), InvalidArgument for bad |layer_counts| or a device
  // given twice.
  // How many layers each device of a split takes: |layer_counts| checked (each >= 1, summing to
  // |n_layers|), or, empty, in proportion to each device's free memory (its total where it reports
  // none; equal shares where none reports memory), each at least one.
  static StatusOr<std::vector<int64_t>> SplitLayers(
      const std::vector<std::shared_ptr<Device>>& devices, int64_t n_layers,
      std::vector<int64_t> layer_counts = {});
  static StatusOr<std::unique_ptr<LlamaExecutor>> CreateSplit(
      const std::vector<std::shared_ptr<Device>>& devices, std::shared_ptr<const LlamaModel> model,
      const ExecutorOptions& options = {}, std::vector<int64_t> layer_counts = {});
  // Tensor parallelism (Megatron, docs/multi-device.md): |collective|'s ranks each hold, on their
  // own device, their share of every layer's heads (and those heads' KV cache) and FFN columns
  // (CheckWeightShards), the embedding, norms and output whole; two all-reduces per layer (after
  // the attention output and the FFN down projection) sum the ranks' parts. Decode graphs are
  // not used.
  //
  // Rank 0 calls CreateTensorParallel for each executor it wants (its |options| go to every
  // rank) and uses it as any other: each Step sends the step's plan to the other ranks. Each
  // rank creates its shard and all agree: an error on any rank is returned on every rank, naming
  // that rank. When rank 0 is done with tensor parallelism it calls EndTensorParallel.
  static StatusOr<std::unique_ptr<LlamaExecutor>> CreateTensorParallel(
      std::shared_ptr<Device> device, std::shared_ptr<const LlamaModel> model,
      const ExecutorOptions& options, std::shared_ptr<Collective> collective);
  static Status EndTensorParallel(Collective& collective);
  // Ranks other than 0: creates a shard for each executor rank 0 creates and runs the steps rank 0
  // plans on it, until rank 0 ends; OK then. A failed shard, step or collective is returned.
  static Status FollowTensorParallel(const std::shared_ptr<Collective>& collective,
                                     const std::shared_ptr<Device>& device,
                                     const std::shared_ptr<const LlamaModel>& model);
  // Ranks other than 0 that could not open their device or model (|why|): the next executor rank
  // 0 creates fails on every rank with |why| (OK when rank 0 ends instead).
  static Status FailTensorParallel(Collective& collective, const Status& why);
  ~LlamaExecutor();

  // The device memory Create would allocate for |shape| and |options| (besides the weights), on
  // each of |tensor_parallel| ranks.
  static ExecutorMemory MemoryNeeded(const ModelShape& shape, const ExecutorOptions& options,
                                     int64_t tensor_parallel = 1);
  // Block-table width: the blocks one sequence can hold (its context, capped by the whole cache).
  static int64_t MaxBlocksPerSequence(const ModelShape& shape, const ExecutorOptions& options);

  // Runs one step. Returns, for each chunk in order, its last token's logits [vocab] (an empty
  // vector when want_logits is false; [logit_rows, vocab] when it asks for rows). Errors (nothing
  // is appended to the KV cache then): InvalidArgument for an empty or repeated sequence, a token
  // id outside [0, vocab) (naming the sequence, index and id), a sequence that would pass the
  // context length, a batch over max_batch_tokens or max_sequences, logit_rows over the chunk's
  // tokens or the step's rows over options().logit_rows(); OutOfMemory when the KV cache lacks
  // the blocks. After the
  // step ran: Internal when a returned logit is not finite (naming the step, sequence and token;
  // the step's tokens stay in the KV cache).
  StatusOr<std::vector<std::vector<float>>> Step(const std::vector<SequenceChunk>& batch);

  // Forgets a sequence and frees its KV blocks (NotFound for an unknown one).
  Status Release(SequenceId sequence);
  // |child| starts as a copy of |parent| sharing its KV blocks (a shared prompt prefix); its
  // first append copies the shared partial block (copy-on-write).
  Status Fork(SequenceId parent, SequenceId child) { return kv_.Fork(parent, child); }

  const KvBlockManager& kv() const { return kv_; }
  // The scheduler plans against (and releases sequences in) the same manager the steps append to.
  KvBlockManager* mutable_kv() { return &kv_; }
  const StepStats& last_step() const { return last_step_; }
  const LlamaModel& model() const { return *model_; }
  // The first device's weights (with one device: all of them).
  const LlamaWeights& weights() const;
  const ExecutorOptions& options() const { return options_; }
  // How many decode graphs have been captured (one per batch size seen; 0 without graphs).
  size_t decode_graphs_captured() const;
  // True when rope and kv_append run as the device's fused rope_kv_append kernel.
  bool fuses_rope_kv_append() const;
  Device& device() const { return *device_; }  // the first device
  // Every device, in layer order, with the layers [first, end) each runs.
  struct DeviceLayers {
    std::shared_ptr<Device> device;
    int64_t first_layer = 0, end_layer = 0;
  };
  std::vector<DeviceLayers> device_layers() const;
  // KV cache bytes per token (all layers, K and V, scales included for I8), on this rank.
  double kv_bytes_per_token() const;
  // Tensor-parallel ranks (1 without tensor parallelism) and this process's rank.
  int tensor_parallel() const;
  int rank() const;
  // Tensor parallelism: true when the all-reduces run on the devices (a device communicator),
  // false when they go through host memory.
  bool device_all_reduces() const;
  // Where the all-reduces run: "device", "host", "modelled" (simulated ranks: priced by the
  // interconnect model) or "none" (no tensor parallelism).
  const char* all_reduce_path() const;

 private:
  struct Impl;
  LlamaExecutor(std::shared_ptr<Device> device, const ExecutorOptions& options, int32_t num_blocks);
  // CreateSplit's and CreateTensorParallel's body: |devices| in layer order, or one device holding
  // rank |collective|'s shard.
  static StatusOr<std::unique_ptr<LlamaExecutor>> Build(
      const std::vector<std::shared_ptr<Device>>& devices, std::shared_ptr<const LlamaModel> model,
      const ExecutorOptions& options, std::vector<int64_t> layer_counts,
      std::shared_ptr<Collective> collective);
  // Runs the planned step (impl's I32 region and KV operations) on every stage, counting its
  // kernels into last_step_; with tensor parallelism, gathers every rank's stats after it.
  Status RunStages(const executor_internal::StepShape& shape, const std::vector<int64_t>& wanted);
  // A rank other than 0: runs every step rank 0 plans until rank 0 destroys its executor.
  Status Follow();
  // Rank 0: tells the other ranks' Follow to return (once, at destruction).
  Status StopFollowers();
  // Enqueues the step's copy-on-write block copies and I8 scale resets (impl's lists).
  Status ApplyKvOps();
  // Rank 0: sends the step's plan (its shape, the I32 region, the KV operations) to the others.
  Status SharePlan(const executor_internal::StepShape& shape);
  // Every rank's stats of the step just run, into last_step_.ranks on rank 0.
  Status GatherRankStats();
  // Every rank, after the shards were created and agreed: joins a device communicator when
  // options_.tp_collectives allows it and every rank's device can (the outcome agreed by all).
  Status SetUpDeviceAllReduces();
  // CreateSplit's parts for one device: its stream, events, weights, activations and KV pools
  // (memory checked first); then the kernels of its part of the model asked for.
  static Status OpenStage(Impl& impl, executor_internal::Stage& stage,
                          const std::shared_ptr<const LlamaModel>& model,
                          const ExecutorOptions& options, const ExecutorMemory& memory,
                          int32_t num_blocks, bool whole_model);
  static Status QueryStageKernels(Impl& impl, executor_internal::Stage& stage, const ModelShape& m,
                                  const ExecutorOptions& options, int32_t num_blocks);
  // Runs |stage|'s part of the step on its stream and waits for it: the I32 upload, the previous
  // stage's residual and pending projection (unless |first|), its kernels (each counted by
  // |count|), then the hand-off to the next stage or, on the last, the logits of the |wanted|
  // rows. Returns its device time in seconds.
  StatusOr<double> RunStage(
      executor_internal::Stage& stage, bool first, const executor_internal::StepShape& shape,
      const std::vector<int64_t>& wanted,
      const std::function<Status(const hwinfer_kernel_desc&, const char*)>& count);
  // Tensor parallelism: sums the ranks' F32 rows [|count_floats|] at byte |offset| of |stage|'s
  // activations (after layer |layer|'s |what|): enqueued on the device communicator, or through
  // host memory; where the collective models its interconnect (simulated ranks), only adds the
  // modelled time to |*modelled_seconds|.
  Status AllReduceRows(executor_internal::Stage& stage, uint64_t offset, int64_t count_floats,
                       int64_t layer, const char* what, double* modelled_seconds);
  // Waits for |stage|'s stream; with a device communicator, at most the group's deadline (then
  // the communicator is aborted and the error names |what|), and adds the step's all-reduce
  // time to last_step_.comm_seconds.
  Status SynchronizeStage(executor_internal::Stage& stage, const std::string& what);
  // The decode graph for |shape|'s batch size, captured on first use.
  StatusOr<const Graph*> DecodeGraph(const executor_internal::StepShape& shape);
  // Enqueues the device copy of KV block |from| to |to| in every layer (copy-on-write).
  Status CopyKvBlock(int32_t from, int32_t to);
  // Enqueues zeroing the I8 scales of |block| in every layer (a block starts empty).
  Status ResetBlockScales(int32_t block);

  std::shared_ptr<Device> device_;
  ExecutorOptions options_;
  KvBlockManager kv_;
  std::shared_ptr<const LlamaModel> model_;
  std::unique_ptr<Impl> impl_;
  StepStats last_step_;
  int64_t steps_run_ = 0;  // steps that completed, for naming a step in errors
};

}  // namespace hwinfer
