// executor_internal.h — the LlamaExecutor's private state, shared by llama_executor.cpp (the step
// bookkeeping: validation, KV appends, uploads, logits) and llama_forward.cpp (the kernel
// descriptors of one forward pass).
//
// Device memory: one activation buffer laid out by ActivationLayout for the largest step
// (max_batch_tokens T, max_sequences S), and per layer a K and a V pool (+ scales for I8).
// Every per-step integer array lives in one contiguous I32 region so a step uploads it with one
// host-to-device copy.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/llama_executor.h"

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

// OutOfMemory when |memory| plus |weight_bytes| (weights uploaded rather than imported) is more
// than the device has (its free memory when it reports one, else its total); OK when the device
// reports neither.
Status CheckDeviceMemory(const Device& device, const ModelShape& m, const ExecutorMemory& memory,
                         double weight_bytes);

}  // namespace hwinfer::executor_internal

namespace hwinfer {

struct LlamaExecutor::Impl {
  Stream stream;
  Event step_start, step_end;  // around each step's work, for StepStats::device_seconds
  Buffer activations;
  executor_internal::ActivationLayout layout;
  executor_internal::IntLayout ints;
  std::vector<executor_internal::LayerKv> kv;
  int64_t max_blocks_per_seq = 0;
  uint32_t kv_dtype = HWINFER_DTYPE_F16;

  // Host staging, alive until the step's final synchronize.
  std::vector<int32_t> host_ints;
  std::vector<float> host_logits;
  std::vector<float> zero_scales;  // [Hkv] zeros: a fresh I8 block starts at scale 0

  bool fuse_rope_kv_append = false;  // the device runs rope_kv_append (asked at Create)
  bool use_graphs = false;           // options.decode_graphs and the device can capture
  // Decode graphs by batch size. Declared last: destroyed first, before the buffers they use (the
  // executor's destructor synchronizes the stream first, so no replay is queued).
  std::map<int64_t, Graph> decode_graphs;

  // The kernels of one forward pass for |shape|, up to the output norm (the I32 region must already
  // hold its arrays).
  Status EmitForward(const LlamaWeights& weights, const ExecutorOptions& options,
                     int32_t num_blocks, const executor_internal::StepShape& shape,
                     const executor_internal::KernelSink& sink) const;
  // The output projection of the rows the step wants logits for (after EmitForward and the
  // copies of those rows into layout.last).
  Status EmitLogits(const LlamaWeights& weights, const executor_internal::StepShape& shape,
                    const executor_internal::KernelSink& sink) const;
};

}  // namespace hwinfer
