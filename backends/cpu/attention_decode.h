// attention_decode.h — the CPU backend's paged decode attention on host pointers: one query token
// per sequence against its paged KV history, GQA, with the KV length split across the pool's
// threads (flash-decoding) so batch 1 with a long context still uses every thread.
//
// Must not know the plugin ABI (paged_kv_slots.cpp validates the descriptor and builds the
// problem) and must not read a block before its id has been checked.
//   q, out: [n_seqs, n_heads, head_dim] F32 | F16 (same dtype; innermost contiguous)
//   pools:  paged_kv.h;  head h reads KV head h / (n_heads / n_kv_heads)
#ifndef HWINFER_BACKENDS_CPU_ATTENTION_DECODE_H_
#define HWINFER_BACKENDS_CPU_ATTENTION_DECODE_H_

#include <cstdint>

#include "hwinfer/plugin.h"
#include "paged_kv.h"
#include "thread_pool.h"

namespace hwinfer::cpu {

struct AttentionDecodeProblem {
  int64_t n_seqs = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 1.0f;
  uint32_t dtype = HWINFER_DTYPE_F32;  // of q and out
  const uint8_t* q = nullptr;
  int64_t q_seq_stride = 0, q_head_stride = 0;
  uint8_t* out = nullptr;
  int64_t out_seq_stride = 0, out_head_stride = 0;
  PagedKvPool k, v;
  PagedKvTable table;
};

// Runs on |pool|, with the AVX2/FMA/F16C build when |use_avx2| (which must come from
// cpu_can_use_avx2_kernels(), host_info.h). Returns INVALID_ARGUMENT, having written nothing,
// when a context length is outside [1, max_blocks_per_seq * block_size] or a used block id
// outside [0, num_blocks).
hwinfer_error* attention_decode_paged(const AttentionDecodeProblem& problem, ThreadPool& pool,
                                      bool use_avx2);

namespace portable {
hwinfer_error* attention_decode_paged(const AttentionDecodeProblem& problem, ThreadPool& pool);
}  // namespace portable

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_ATTENTION_DECODE_H_
