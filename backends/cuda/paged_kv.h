// paged_kv.h — the attention kernels' operands as the launchers and kernels see them (plain structs
// of device addresses and element strides, shared by kernels_attention.cpp and the .cu files), the
// tile limits both sides size things by, and (in kernel files only) the device-side readers of a
// K/V element: F32 | F16 | I8 (I8: value = scales[block, kv_head] * int8, plugin.h's paged layout).
//
// Paged layout (plugin.h): pools [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8, scales
// [num_blocks, n_kv_heads] F32 (I8 only), block_tables [n_seqs, max_blocks_per_seq] I32,
// context_lens [n_seqs] I32. Token t of sequence s is row t % block_size of block
// block_tables[s][t / block_size]. Must not hold state or launch anything.
#ifndef HWINFER_BACKENDS_CUDA_PAGED_KV_H_
#define HWINFER_BACKENDS_CUDA_PAGED_KV_H_

#include <cstdint>

namespace hwinfer::gpu {

// Element types of the attention operands (not the ABI's dtype numbers).
enum KvElement : int32_t { kElementF32 = 0, kElementF16 = 1, kElementI8 = 2 };

// Tile limits of attention_tile.h: a block holds up to kMaxRows query rows (q vectors that share
// one KV head) and kMaxRows * head_dim <= kMaxRowFloats; keys go kTileKeys at a time.
inline constexpr int32_t kAttentionThreads = 256;
inline constexpr int32_t kMaxRows = 16;
inline constexpr int32_t kMaxOutputsPerThread = 8;
inline constexpr int32_t kMaxRowFloats = kAttentionThreads * kMaxOutputsPerThread;  // 2048
inline constexpr int32_t kTileKeys = 128;
inline constexpr int32_t kMaxAttentionHeadDim = kMaxRowFloats / 2;  // 1024: at least 2 rows

// One paged pool: element strides of [num_blocks, block_size, n_kv_heads, head_dim] (innermost
// contiguous) and, for I8, its scales [num_blocks, n_kv_heads] (element strides).
struct PagedPool {
  const void* data = nullptr;
  int32_t element = kElementF16;  // kElementF16 | kElementI8
  int64_t block_stride = 0, row_stride = 0, head_stride = 0;
  const float* scales = nullptr;  // I8 only
  int64_t scale_block_stride = 0, scale_head_stride = 0;
};

// The block table and context lengths (element strides); max_blocks * block_size fits an I32.
struct PagedTable {
  const int32_t* block_tables = nullptr;
  int64_t seq_stride = 0, entry_stride = 0;
  const int32_t* context_lens = nullptr;
  int64_t len_stride = 0;
  int32_t block_size = 1, max_blocks = 0;
  int64_t num_blocks = 0;
};

// A [rows, heads, head_dim] operand (innermost contiguous): element strides of dims 0 and 1.
struct HeadRows {
  const void* data = nullptr;
  int32_t element = kElementF32;  // kElementF32 | kElementF16
  int64_t row_stride = 0, head_stride = 0;
};
struct HeadRowsOut {
  void* data = nullptr;
  int32_t element = kElementF32;
  int64_t row_stride = 0, head_stride = 0;
};

// attention_decode_paged: q/out [n_seqs, n_heads, head_dim]. One partition kernel block per
// (partition of partition_tokens keys, seq, kv head, chunk of heads_per_block heads of its group);
// the partials of batch_seqs sequences at a time live in the scratch
// [batch_seqs * n_heads, n_parts, head_dim + 2] F32 (m, l, acc[head_dim]).
struct DecodeArgs {
  int32_t n_seqs = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 1.0f;
  HeadRows q;
  HeadRowsOut out;
  PagedPool k, v;
  PagedTable table;
  int32_t heads_per_block = 1;   // divides n_heads / n_kv_heads; <= kMaxRows
  int32_t partition_tokens = 0;  // a multiple of kTileKeys
  int32_t n_parts = 0;           // ceil(max_blocks * block_size / partition_tokens)
  int32_t batch_seqs = 1;        // sequences per partition + reduce launch pair
  int32_t* error_word = nullptr;

  int64_t scratch_floats() const {
    return static_cast<int64_t>(batch_seqs) * n_heads * n_parts * (head_dim + 2);
  }
};

// attention_prefill: q/out [n_tokens, n_heads, head_dim], k/v [n_tokens, n_kv_heads, head_dim],
// query_start [n_seqs + 1]; optional paged prefix. One block per (tile of tokens_per_block
// consecutive tokens, kv head, chunk of heads_per_block heads of its group).
struct PrefillArgs {
  int32_t n_tokens = 0, n_seqs = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 1.0f;
  int32_t causal = 1;
  HeadRows q, k, v;
  HeadRowsOut out;
  const int32_t* query_start = nullptr;
  int64_t query_start_stride = 0;
  int32_t has_prefix = 0;
  PagedPool k_cache, v_cache;    // only with has_prefix
  PagedTable table;              // only with has_prefix
  int32_t heads_per_block = 1;   // divides n_heads / n_kv_heads
  int32_t tokens_per_block = 1;  // tokens_per_block * heads_per_block <= kMaxRows
  int32_t* error_word = nullptr;
};

}  // namespace hwinfer::gpu

#if defined(__CUDACC__) || defined(__HIP__) || defined(HWINFER_GPU_KERNEL_FILE)
#include "gpu_device.h"

namespace hwinfer::gpu {

// Element |index| of |data| (kElementF32 | kElementF16 | kElementI8) as a float; an I8 element is
// the raw integer (the caller multiplies by its scale).
__device__ __forceinline__ float load_element(const void* data, int32_t element, int64_t index) {
  if (element == kElementF16) return f16_to_float(static_cast<const uint16_t*>(data)[index]);
  if (element == kElementI8) return static_cast<float>(static_cast<const int8_t*>(data)[index]);
  return static_cast<const float*>(data)[index];
}

// Block id of key |key| (< the sequence's validated context length) of sequence |seq|.
__device__ __forceinline__ int64_t paged_block_id(const PagedTable& table, int64_t seq,
                                                  int64_t key) {
  return table.block_tables[seq * table.seq_stride + (key / table.block_size) * table.entry_stride];
}

// Element index of pool row (block, row, kv_head)'s first value, and its scale (1 for F16).
__device__ __forceinline__ int64_t pool_row(const PagedPool& pool, int64_t block, int64_t row,
                                            int64_t kv_head) {
  return block * pool.block_stride + row * pool.row_stride + kv_head * pool.head_stride;
}
__device__ __forceinline__ float pool_scale(const PagedPool& pool, int64_t block, int64_t kv_head) {
  if (pool.element != kElementI8) return 1.0f;
  return pool.scales[block * pool.scale_block_stride + kv_head * pool.scale_head_stride];
}

}  // namespace hwinfer::gpu
#endif  // kernel files

#endif  // HWINFER_BACKENDS_CUDA_PAGED_KV_H_
