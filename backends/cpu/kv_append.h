// kv_append.h — the CPU backend's KV append on host pointers: writes n_tokens new keys or values
// into a paged pool (F16, or I8 with per-(block, head) scales the kernel keeps up to date).
//
// Must not know the plugin ABI (kv_append_slot.cpp turns a descriptor into a KvAppendProblem after
// validating every view) and must not read or write outside the slots it is given: slot ids are
// checked against the pool before anything is written.
//
//   src:    [n_tokens, n_kv_heads, head_dim]  F32 | F16 (innermost contiguous)
//   slots:  [n_tokens] I32, slot = block * block_size + row; negative = skip
//   pool:   [num_blocks, block_size, n_kv_heads, head_dim]  F16 | I8 (innermost contiguous)
//   scales: [num_blocks, n_kv_heads] F32 (I8 pools only)
#ifndef HWINFER_BACKENDS_CPU_KV_APPEND_H_
#define HWINFER_BACKENDS_CPU_KV_APPEND_H_

#include <cstdint>

#include "hwinfer/plugin.h"
#include "thread_pool.h"

namespace hwinfer::cpu {

// One side (K or V) of an append. Strides are in bytes.
struct KvAppendSide {
  const uint8_t* src = nullptr;
  uint32_t src_dtype = HWINFER_DTYPE_F32;
  int64_t src_token_stride = 0, src_head_stride = 0;
  uint8_t* pool = nullptr;
  uint32_t pool_dtype = HWINFER_DTYPE_F16;
  int64_t pool_block_stride = 0, pool_row_stride = 0, pool_head_stride = 0;
  uint8_t* scales = nullptr;  // I8 only
  int64_t scale_block_stride = 0, scale_head_stride = 0;
};

struct KvAppendProblem {
  int64_t n_tokens = 0, n_kv_heads = 0, head_dim = 0, block_size = 0, num_blocks = 0;
  const uint8_t* slots = nullptr;
  int64_t slot_stride = 0;
  KvAppendSide k, v;
};

// Runs the append on |pool| (work item = one side and one KV head; tokens in order inside it, so
// tokens that share a block-head are serialised). Returns INVALID_ARGUMENT, having written
// nothing, when a slot lies outside [0, num_blocks * block_size); NULL otherwise.
hwinfer_error* kv_append(const KvAppendProblem& problem, ThreadPool& pool);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_KV_APPEND_H_
