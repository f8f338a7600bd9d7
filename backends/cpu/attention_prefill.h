// attention_prefill.h — the CPU backend's fused attention prefill on host pointers: causal (or
// full) attention of the new tokens of several packed sequences, GQA, tiled with an online softmax
// so the [T, T] score matrix is never materialised, optionally after a paged cached prefix
// (chunked prefill). Two builds: a portable one (one query head per work item) and an
// AVX2/FMA/F16C one (attention_prefill_avx2.cpp: all query heads of a KV head per work item,
// FMA micro-kernels, vectorised exp), chosen at run time by a CPU check.
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

// Runs on |pool|, with the AVX2/FMA/F16C kernel when |use_avx2| (which must come from
// cpu_can_use_avx2_kernels(), host_info.h). Returns INVALID_ARGUMENT, having written nothing, when
// query_start is not 0 = qs[0] <= qs[1] <= ... <= qs[n_seqs] = n_tokens, or (with a prefix) a
// context length or used block id is out of range.
hwinfer_error* attention_prefill(const AttentionPrefillProblem& problem, ThreadPool& pool,
                                 bool use_avx2);
// The same, with the AVX2 kernel whenever cpu_can_use_avx2_kernels().
hwinfer_error* attention_prefill(const AttentionPrefillProblem& problem, ThreadPool& pool);

// Internal to attention_prefill.cpp and attention_prefill_avx2.cpp: one work item of the AVX2
// kernel, the query tile [begin, end) of sequence seq (tokens [seq_begin, seq_end) of the packed
// batch) for the query heads of KV head kv_head.
struct PrefillWork {
  int64_t seq = 0, begin = 0, end = 0, seq_begin = 0, seq_end = 0, kv_head = 0;
};

// The new tokens' K and V as f32 rows of round_up(head_dim, 8) floats (strides in floats):
// k[token * k_token + head * k_head + d]. Either the F32 operands k and v themselves (when
// head_dim % 8 == 0) or a zero-padded f32 copy converted once per call.
struct PrefillKv {
  const float *k = nullptr, *v = nullptr;
  int64_t k_token = 0, k_head = 0, v_token = 0, v_head = 0;
};

#if HWINFER_CPU_HAVE_AVX2_KERNEL
namespace avx2 {
// Floats of per-thread scratch one item of |rows| query rows needs (64-byte aligned base).
int64_t attention_prefill_scratch_floats(int64_t rows, int64_t head_dim);
// True when the F32 operands k and v can be read in place (see PrefillKv).
bool attention_prefill_kv_in_place(const AttentionPrefillProblem& problem);
// Converts tokens [begin, end) of k and v into k_dst, v_dst: [n_tokens, n_kv_heads,
// round_up(head_dim, 8)] f32.
void attention_prefill_convert_kv(const AttentionPrefillProblem& problem, int64_t begin,
                                  int64_t end, float* k_dst, float* v_dst);
// Computes |work| (validated problem) into problem.out.
void attention_prefill_item(const AttentionPrefillProblem& problem, const PrefillKv& kv,
                            const PrefillWork& work, float* scratch);
}  // namespace avx2
#endif

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_ATTENTION_PREFILL_H_
