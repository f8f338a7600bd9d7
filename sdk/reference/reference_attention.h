// reference_attention.h — scalar reference kernels for the paged KV cache: KV append into paged
// pools (F16 and I8 with per-(block, head) scales) and, later, the attention kernels that read it.
// The oracle the conformance suite compares every backend against.
//
// Plain loops on host pointers with contiguous layouts, written to be obviously correct: no
// threads, no SIMD, no blocking. They must not know the plugin ABI beyond its documented layout:
//   pool:   [num_blocks, block_size, n_kv_heads, head_dim]  (uint16_t f16 bits, or int8_t)
//   scales: [num_blocks, n_kv_heads] float (int8 pools only; value = scale * int8)
//   token t of a sequence lives in block block_table[t / block_size] at row t % block_size.
#ifndef HWINFER_SDK_REFERENCE_REFERENCE_ATTENTION_H_
#define HWINFER_SDK_REFERENCE_REFERENCE_ATTENTION_H_

#include <cstdint>

namespace hwinfer::reference {

// The shape of a paged pool.
struct PagedPoolShape {
  int64_t num_blocks = 0, block_size = 0, n_kv_heads = 0, head_dim = 0;
};

// The int8 quantisation rule shared by every backend: scale = absmax / 127,
// q = clamp(round_half_even(x / scale), -127, 127), q = 0 when scale is 0.
int8_t quantize_i8(float x, float scale);

// Writes src [n_tokens, n_kv_heads, head_dim] (f32 values) into an F16 pool at
// slot_mapping[t] = block * block_size + row (negative: skipped). Slots must be in range.
void kv_append_reference_f16(const PagedPoolShape& shape, int64_t n_tokens, const float* src,
                             const int32_t* slot_mapping, uint16_t* pool);

// The same for an I8 pool, token by token in order: when a token's absmax over head_dim exceeds
// scale * 127 of its (block, head), scale becomes absmax / 127 and every row of that block-head is
// requantized (q = quantize_i8(q_old * old_scale, new_scale)); then the token is quantized.
void kv_append_reference_i8(const PagedPoolShape& shape, int64_t n_tokens, const float* src,
                            const int32_t* slot_mapping, int8_t* pool, float* scales);

// A paged pool on the host: F16 (|f16| set) or I8 (|i8| and |scales| set), layout above.
struct PagedPool {
  PagedPoolShape shape;
  const uint16_t* f16 = nullptr;
  const int8_t* i8 = nullptr;
  const float* scales = nullptr;
};

// The value of element |d| of head |head| at |row| of |block| (dequantized for I8).
double pool_value(const PagedPool& pool, int64_t block, int64_t row, int64_t head, int64_t d);

// Paged decode attention, plain softmax in double over the gathered keys:
//   q: [n_seqs, n_heads, head_dim];  out: [n_seqs, n_heads, head_dim] (double)
//   block_tables: [n_seqs, max_blocks_per_seq];  context_lens: [n_seqs] (>= 1)
// Head h reads KV head h / (n_heads / n_kv_heads).
void attention_decode_paged_reference(const PagedPool& k, const PagedPool& v, int64_t n_seqs,
                                      int64_t n_heads, const float* q, const int32_t* block_tables,
                                      int64_t max_blocks_per_seq, const int32_t* context_lens,
                                      float scale, double* out);

// Attention prefill, plain softmax in double:
//   q, out: [n_tokens, n_heads, head_dim];  k, v: [n_tokens, n_kv_heads, head_dim]
//   query_start: [n_seqs + 1]; sequence s owns tokens query_start[s] .. query_start[s+1]-1.
// With a paged prefix (|k_cache| non-NULL), sequence s first attends to its context_lens[s] cached
// tokens (block_tables row s), then to its new tokens: all of them, or with |causal| new token i
// only to new tokens 0..i.
void attention_prefill_reference(int64_t n_tokens, int64_t n_seqs, int64_t n_heads,
                                 int64_t n_kv_heads, int64_t head_dim, const float* q,
                                 const float* k, const float* v, const int32_t* query_start,
                                 bool causal, float scale, const PagedPool* k_cache,
                                 const PagedPool* v_cache, const int32_t* block_tables,
                                 int64_t max_blocks_per_seq, const int32_t* context_lens,
                                 double* out);

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_REFERENCE_ATTENTION_H_
