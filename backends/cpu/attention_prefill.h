// attention_prefill.h — the CPU backend's fused attention prefill on host pointers: causal (or
// full) attention of the new tokens of several packed sequences, GQA, tiled with an online softmax
// so the [T, T] score matrix is never materialised, optionally after a paged cached prefix
// (chunked prefill).
//
// Must not know the plugin ABI (paged_kv_slots.cpp validates the descriptor) and must not read a
// cached block before its id has been checked.
//   q, out: [n_tokens, n_heads, head_dim]  F32 | F16 (same dtype; innermost contiguous)
//   k, v:   [n_tokens, n_kv_heads, head_dim]  F32 | F16 (innermost contiguous)
//   query_start: [n_seqs + 1] I32;  prefix: paged_kv.h (context_lens may be 0)
#ifndef HWINFER_BACKENDS_CPU_ATTENTION_PREFILL_H_
#define HWINFER_BACKENDS_CPU_ATTENTION_PREFILL_H_

#include <cstdint>

#include "hwinfer/plugin.h"
#include "paged_kv.h"
#include "thread_pool.h"

namespace hwinfer::cpu {

// A [n_tokens, heads, head_dim] operand (byte strides).
struct TokenMatrix {
  const uint8_t* data = nullptr;
  uint32_t dtype = HWINFER_DTYPE_F32;
  int64_t token_stride = 0, head_stride = 0;
};

struct AttentionPrefillProblem {
  int64_t n_tokens = 0, n_seqs = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 1.0f;
  bool causal = true;
  TokenMatrix q, k, v;
  uint8_t* out = nullptr;  // q's dtype and strides layout: out_token_stride, out_head_stride
  int64_t out_token_stride = 0, out_head_stride = 0;
  const uint8_t* query_start = nullptr;
  int64_t query_start_stride = 0;
  bool has_prefix = false;
  PagedKvPool k_cache, v_cache;
  PagedKvTable table;
};

// Runs on |pool|. Returns INVALID_ARGUMENT, having written nothing, when query_start is not
// 0 = qs[0] <= qs[1] <= ... <= qs[n_seqs] = n_tokens, or (with a prefix) a context length or used
// block id is out of range.
hwinfer_error* attention_prefill(const AttentionPrefillProblem& problem, ThreadPool& pool);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_ATTENTION_PREFILL_H_
