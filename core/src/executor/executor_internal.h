// executor_internal.h — the LlamaExecutor's private state, shared by llama_executor.cpp (the step
// bookkeeping: validation, KV appends, uploads, logits) and llama_forward.cpp (the kernel
// descriptors of one forward pass).
//
// Device memory: one activation buffer per stage (device) laid out by ActivationLayout for the
// largest step (max_batch_tokens T, max_sequences S), and per layer a K and a V pool (+ scales for
// I8) on the device of the layer.
// Every per-step integer array lives in one contiguous I32 region so a step uploads it with one
// host-to-device copy.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "hwinfer/collective.h"
#include "hwinfer/device.h"
#include "hwinfer/device_comm.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/llama_weights.h"

namespace hwinfer::executor_internal {

// Byte offsets into the activation buffer. F32 rows unless noted.
struct ActivationLayout {
  uint64_t residual = 0;  // [T, d]      the running hidden state x
  uint64_t normed = 0;    // [T, d]      rms_norm output h
  uint64_t q = 0;         // [T, H*hd]
  uint64_t k = 0;         // [T, Hkv*hd]
  uint64_t v = 0;         // [T, Hkv*hd]
  uint64_t attn = 0;      // [T, H*hd]   attention output
  uint64_t proj = 0;      // [T, d]      attn Wo, then the MLP's down projection
  uint64_t gate = 0;      // [T, ffn]
  uint64_t up = 0;        // [T, ffn]
  uint64_t act = 0;       // [T, ffn]    silu(gate) * up
  uint64_t last = 0;      // [S, d]      normed rows of the tokens whose logits are wanted
  uint64_t logits = 0;    // [S, vocab]
  uint64_t ints = 0;      // the I32 region (IntLayout)
  uint64_t total = 0;
};

// Element offsets inside the I32 region.
struct IntLayout {
  int64_t ids = 0;              // [T]
  int64_t positions = 0;        // [T]
  int64_t slots = 0;            // [T]
  int64_t query_start = 0;      // [S + 1]  prefill chunks' token ranges
  int64_t prefill_context = 0;  // [S]      tokens cached before the chunk
  int64_t prefill_tables = 0;   // [S, max_blocks]
  int64_t decode_context = 0;   // [S]      tokens cached including the new one
  int64_t decode_tables = 0;    // [S, max_blocks]
  int64_t total = 0;
};

struct LayerKv {
  Buffer k, v;                // [num_blocks, block_size, Hkv, hd] F16 | I8
  Buffer k_scales, v_scales;  // [num_blocks, Hkv] F32, I8 only
};

// What one step runs: prefill tokens occupy rows [0, n_prefill_tokens), decode tokens the rows
// after them (one per decode sequence).
struct StepShape {
  int64_t n_tokens = 0;
  int64_t n_prefill_tokens = 0;
  int64_t n_prefill_seqs = 0;
  int64_t n_decode_seqs = 0;
  int64_t n_logits = 0;
  bool logits_from_normed = false;  // the wanted rows are rows 0..n_logits-1, in order
};

// Called with each kernel descriptor in order: launches it, or (at Create) queries it.
using KernelSink = std::function<Status(const hwinfer_kernel_desc& desc, const char* what)>;
// Tensor parallelism: called where the ranks' partial sums of the F32 rows [count] at byte
// |offset| of the activations must be summed (after layer |layer|'s |what| projection).
using ReduceSink =
    std::function<Status(uint64_t offset, int64_t count, int64_t layer, const char* what)>;

// The attention heads, KV heads and FFN width one of |ranks| tensor-parallel ranks computes.
struct RankDims {
  int64_t n_heads = 0, n_kv_heads = 0, head_dim = 0, ffn_dim = 0;
};
RankDims DimsOfRank(const ModelShape& m, int64_t ranks);

// OutOfMemory when |memory| plus |weight_bytes| (weights uploaded rather than imported) is more
// than the device has (its free memory when it reports one, else its total); OK when the device
// reports neither.
Status CheckDeviceMemory(const Device& device, const ModelShape& m, const ExecutorMemory& memory,
                         double weight_bytes);

}  // namespace hwinfer::executor_internal

namespace hwinfer {

namespace executor_internal {

// One device's part of the model (layer split, docs/multi-device.md; one stage holds everything
// on one device): its layers [first_layer, end_layer), the embedding on the first stage, the output
// norm and projection on the last, their weights and KV pools, and a full activation buffer.
struct Stage {
  std::shared_ptr<Device> device;
  Stream stream;
  Event start, end;  // around the stage's work in each step
  Buffer activations;
  std::unique_ptr<LlamaWeights> weights;  // this stage's tensors only
  std::vector<LayerKv> kv;                // [end_layer - first_layer]
  int64_t first_layer = 0, end_layer = 0;
  bool last = true;
  bool fuse_rope_kv_append = false;  // the device runs rope_kv_append (asked at Create)
  bool first() const { return first_layer == 0; }
};

}  // namespace executor_internal

struct LlamaExecutor::Impl {
  executor_internal::RankDims dims;            // this rank's heads and FFN width
  std::shared_ptr<Collective> collective;      // tensor parallelism; null without
  bool followers_stopped = false;              // rank 0 has sent the stop
  executor_internal::ActivationLayout layout;  // the same in every stage's buffer
  executor_internal::IntLayout ints;
  int64_t max_blocks_per_seq = 0;
  uint32_t kv_dtype = HWINFER_DTYPE_F16;
  // Tensor parallelism on device collectives: this rank's communicator, and an event pair around
  // each of a step's all-reduces (their device time is the step's comm_seconds). Declared before
  // the stages: destroyed after them, once their streams have finished its all-reduces.
  DeviceComm device_comm;
  std::vector<std::pair<Event, Event>> comm_events;  // [2 x layers]
  size_t comm_events_used = 0;                       // in the current step
  std::vector<executor_internal::Stage> stages;      // in layer order

  // Host staging, alive until the step's final synchronize.
  std::vector<int32_t> host_ints;
  std::vector<float> host_logits;
  std::vector<float> host_boundary;  // [2, T, d]: residual and proj handed to the next stage
  std::vector<float> zero_scales;    // [Hkv] zeros: a fresh I8 block starts at scale 0
  std::vector<float> host_reduce;    // [T, d]: rows being all-reduced
  // The step's KV operations, enqueued before its kernels (and sent to the other ranks).
  std::vector<std::pair<int32_t, int32_t>> kv_copies;  // copy-on-write (from, to) blocks
  std::vector<int32_t> kv_resets;                      // fresh I8 blocks whose scales start at 0
  std::vector<int32_t> plan;  // tensor parallelism: the step's plan as sent (tensor_parallel.cpp)

  bool use_graphs = false;  // options.decode_graphs, one stage, and the device can capture
  // Decode graphs by batch size. Declared last: destroyed first, before the buffers they use (the
  // executor's destructor synchronizes the streams first, so no replay is queued).
  std::map<int64_t, Graph> decode_graphs;

  // The kernels of |stage|'s part of one forward pass for |shape|: the embedding on the first
  // stage, its layers, the output norm on the last (the I32 region must already hold its arrays;
  // a later stage's residual and proj rows the previous stage's).
  // With tensor parallelism, |reduce| is called at each all-reduce (null: none, as at Create).
  Status EmitForward(const executor_internal::Stage& stage, const ExecutorOptions& options,
                     int32_t num_blocks, const executor_internal::StepShape& shape,
                     const executor_internal::KernelSink& sink,
                     const executor_internal::ReduceSink* reduce = nullptr) const;
  // The output projection of the rows the step wants logits for (on the last stage, after
  // EmitForward and the copies of those rows into layout.last).
  Status EmitLogits(const executor_internal::Stage& stage,
                    const executor_internal::StepShape& shape,
                    const executor_internal::KernelSink& sink) const;
};

}  // namespace hwinfer
