// attention_tile.h — the flash-attention inner loop shared by attention_decode.cu and
// attention_prefill.cu (device code only; include after gpu_device.h): one block of
// kAttentionThreads threads holds |rows| query rows (q vectors of one sequence that share one KV
// head: the heads of a GQA group and/or consecutive query tokens) in shared memory and walks a
// range of keys kTileKeys at a time with an online softmax in fp32:
//   A. scores: warp w takes keys j = w, w + n_warps, ...; its lanes split head_dim (coalesced K row
//      reads; one K row serves every query row), warp_sum gives score[r][j] = scale * q_r . k_j,
//      or kNoScore where key >= limit[r] (causal mask); the warp's lane 0 notes V_j's address.
//   B. softmax: warp w takes rows r = w, w + n_warps, ...: tile max, m_new = max(m, tile max),
//      alpha = exp(m - m_new), p_j = exp(s_j - m_new) (0 for masked keys) written over the
//      scores, l = l * alpha + sum p_j.
//   C. values: each thread owns up to kMaxOutputsPerThread (row, dim) outputs, or, when rows *
//      head_dim < kAttentionThreads, one output and one slice of the keys (j = slice mod slices);
//      acc = acc * alpha[r] + sum_j p_j * V_j[dim]. combine_slices() adds the slices at the end.
// Must not touch global memory other than the K/V it reads; every thread of the block must call
// each function here (they synchronise), with block-uniform arguments.
#ifndef HWINFER_BACKENDS_CUDA_ATTENTION_TILE_H_
#define HWINFER_BACKENDS_CUDA_ATTENTION_TILE_H_

#include <cstdint>

#include "gpu_device.h"
#include "paged_kv.h"

namespace hwinfer::gpu {

// Below every finite score; exp(kNoScore - m) is never taken (masked keys weigh 0).
inline constexpr float kNoScore = -3.0e38f;
inline constexpr int32_t kAttentionWarps = kAttentionThreads / kWarpSize;

// The block's shared state (about 19 KiB).
struct TileShared {
  float q[kMaxRowFloats];             // [rows][head_dim] query rows (F32)
  float score[kMaxRows * kTileKeys];  // [rows][kTileKeys] scores, then weights p
  int64_t v_index[kTileKeys];         // element index of V_j[0] in the V operand
  float v_scale[kTileKeys];           // V_j's scale (I8 pool) or 1
  float m[kMaxRows], l[kMaxRows];     // running max and sum of each row
  float alpha[kMaxRows];              // this tile's rescale factor of each row
  int64_t limit[kMaxRows];            // row r sees keys < limit[r] of the current range
  float combine[kAttentionThreads];   // combine_slices
};

// Where the keys of one range come from: the paged pools (key = token of the sequence's cache) or
// the new tokens' K/V operands (key = token_base + key).
struct KeySource {
  bool paged = false;
  const void* k_data = nullptr;
  const void* v_data = nullptr;
  int32_t k_element = kElementF32, v_element = kElementF32;
  int64_t kv_head = 0;
  // paged
  const PagedPool* k_pool = nullptr;
  const PagedPool* v_pool = nullptr;
  const PagedTable* table = nullptr;
  int64_t seq = 0;
  // new tokens
  const HeadRows* k_rows = nullptr;
  const HeadRows* v_rows = nullptr;
  int64_t token_base = 0;
};

__device__ __forceinline__ KeySource paged_keys(const PagedPool& k, const PagedPool& v,
                                                const PagedTable& table, int64_t seq,
                                                int64_t kv_head) {
  KeySource src;
  src.paged = true;
  src.k_data = k.data;
  src.v_data = v.data;
  src.k_element = k.element;
  src.v_element = v.element;
  src.kv_head = kv_head;
  src.k_pool = &k;
  src.v_pool = &v;
  src.table = &table;
  src.seq = seq;
  return src;
}

__device__ __forceinline__ KeySource new_token_keys(const HeadRows& k, const HeadRows& v,
                                                    int64_t token_base, int64_t kv_head) {
  KeySource src;
  src.k_data = k.data;
  src.v_data = v.data;
  src.k_element = k.element;
  src.v_element = v.element;
  src.kv_head = kv_head;
  src.k_rows = &k;
  src.v_rows = &v;
  src.token_base = token_base;
  return src;
}

// Element indices of key |key|'s K and V rows and their scales.
struct KeyRow {
  int64_t k_index;
  float k_scale;
  int64_t v_index;
  float v_scale;
};

__device__ __forceinline__ KeyRow key_row(const KeySource& src, int64_t key) {
  KeyRow row;
  if (src.paged) {
    const int64_t block = paged_block_id(*src.table, src.seq, key);
    const int64_t in_block = key % src.table->block_size;
    row.k_index = pool_row(*src.k_pool, block, in_block, src.kv_head);
    row.k_scale = pool_scale(*src.k_pool, block, src.kv_head);
    row.v_index = pool_row(*src.v_pool, block, in_block, src.kv_head);
    row.v_scale = pool_scale(*src.v_pool, block, src.kv_head);
  } else {
    const int64_t token = src.token_base + key;
    row.k_index = token * src.k_rows->row_stride + src.kv_head * src.k_rows->head_stride;
    row.k_scale = 1.0f;
    row.v_index = token * src.v_rows->row_stride + src.kv_head * src.v_rows->head_stride;
    row.v_scale = 1.0f;
  }
  return row;
}

// Which (row, dim) outputs this thread accumulates (see the top of the file).
struct OutputMap {
  int32_t slices = 1, slice = 0;
  int32_t count = 0;    // outputs owned: row[i], dim[i] for i < count
  bool one_dim = true;  // dim[i] is the same for every i < count
  int32_t row[kMaxOutputsPerThread];
  int32_t dim[kMaxOutputsPerThread];
};

// |rows| * |head_dim| <= kMaxRowFloats.
__device__ __forceinline__ OutputMap make_output_map(int32_t rows, int32_t head_dim) {
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  const int32_t n_out = rows * head_dim;
  OutputMap map;
#pragma unroll
  for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) map.row[i] = map.dim[i] = 0;
  if (n_out >= kAttentionThreads) {
#pragma unroll
    for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) {
      const int32_t o = tid + i * kAttentionThreads;
      if (o < n_out) {
        map.row[i] = o / head_dim;
        map.dim[i] = o % head_dim;
        map.count = i + 1;
      }
    }
    // o and o + kAttentionThreads share their dim when head_dim divides kAttentionThreads.
    map.one_dim = kAttentionThreads % head_dim == 0;
    return map;
  }
  map.slices = kAttentionThreads / n_out;
  map.slice = tid / n_out;
  const int32_t o = tid % n_out;
  map.row[0] = o / head_dim;
  map.dim[0] = o % head_dim;
  map.count = map.slice < map.slices ? 1 : 0;
  return map;
}

// Resets the running max and sum of every row (call before the first attend_keys of a work item,
// followed by a __syncthreads the caller places after loading q and the limits).
__device__ __forceinline__ void reset_rows(TileShared& sh) {
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  if (tid < kMaxRows) {
    sh.m[tid] = kNoScore;
    sh.l[tid] = 0.0f;
    sh.alpha[tid] = 0.0f;
  }
}

// Attends |rows| rows (q in sh.q, limits in sh.limit, running state in sh.m / sh.l) to keys
// [key_begin, key_end) of |src|, accumulating into |acc| (the thread's outputs, |map|). Ends
// with a __syncthreads, so the caller may rewrite shared state afterwards.
__device__ __forceinline__ void attend_keys(TileShared& sh, const KeySource& src, int64_t key_begin,
                                            int64_t key_end, int32_t rows, int32_t head_dim,
                                            float scale, const OutputMap& map,
                                            float (&acc)[kMaxOutputsPerThread]) {
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  const int32_t lane = tid % kWarpSize;
  const int32_t warp = tid / kWarpSize;
  for (int64_t first = key_begin; first < key_end; first += kTileKeys) {
    const int32_t n =
        static_cast<int32_t>(key_end - first < kTileKeys ? key_end - first : kTileKeys);
    // A. Scores: one warp per key, lanes over head_dim.
    for (int32_t j = warp; j < n; j += kAttentionWarps) {
      const int64_t key = first + j;
      const KeyRow kr = key_row(src, key);
      float part[kMaxRows];
#pragma unroll
      for (int32_t r = 0; r < kMaxRows; ++r) part[r] = 0.0f;
      for (int32_t d = lane; d < head_dim; d += kWarpSize) {
        const float k = load_element(src.k_data, src.k_element, kr.k_index + d) * kr.k_scale;
#pragma unroll
        for (int32_t r = 0; r < kMaxRows; ++r) {
          if (r < rows) part[r] += sh.q[r * head_dim + d] * k;
        }
      }
#pragma unroll
      for (int32_t r = 0; r < kMaxRows; ++r) {
        if (r < rows) {
          const float dot = warp_sum(part[r]);  // every lane of the warp takes part
          if (lane == 0) sh.score[r * kTileKeys + j] = key < sh.limit[r] ? scale * dot : kNoScore;
        }
      }
      if (lane == 0) {
        sh.v_index[j] = kr.v_index;
        sh.v_scale[j] = kr.v_scale;
      }
    }
    __syncthreads();
    // B. Online softmax: one warp per row; lane x handles keys x, x + kWarpSize, ...
    for (int32_t r = warp; r < rows; r += kAttentionWarps) {
      float* s = sh.score + r * kTileKeys;
      float tile_max = kNoScore;
      for (int32_t j = lane; j < n; j += kWarpSize) tile_max = fmaxf(tile_max, s[j]);
      tile_max = warp_max(tile_max);
      const float m_old = sh.m[r];
      const float m_new = fmaxf(m_old, tile_max);
      const float alpha = m_old == kNoScore ? 0.0f : expf(m_old - m_new);
      float sum = 0.0f;
      for (int32_t j = lane; j < n; j += kWarpSize) {
        const float x = s[j];
        const float p = x == kNoScore ? 0.0f : expf(x - m_new);
        s[j] = p;
        sum += p;
      }
      sum = warp_sum(sum);
      if (lane == 0) {
        sh.l[r] = sh.l[r] * alpha + sum;
        sh.m[r] = m_new;
        sh.alpha[r] = alpha;
      }
    }
    __syncthreads();
    // C. Values: acc = acc * alpha + sum_j p_j * V_j[dim] over this thread's key slice (keys in
    // ascending order). With one dim for all its outputs a thread loads V_j[dim] once per key.
#pragma unroll
    for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) {
      if (i < map.count) acc[i] *= sh.alpha[map.row[i]];
    }
    for (int32_t j = map.slice; map.count > 0 && j < n; j += map.slices) {
      const int64_t v_row = sh.v_index[j];
      const float v_scale = sh.v_scale[j];
      if (map.one_dim) {
        const float v = load_element(src.v_data, src.v_element, v_row + map.dim[0]) * v_scale;
#pragma unroll
        for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) {
          if (i < map.count) acc[i] += sh.score[map.row[i] * kTileKeys + j] * v;
        }
      } else {
#pragma unroll
        for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) {
          if (i < map.count) {
            acc[i] += sh.score[map.row[i] * kTileKeys + j] *
                      (load_element(src.v_data, src.v_element, v_row + map.dim[i]) * v_scale);
          }
        }
      }
    }
    __syncthreads();  // score, v_index, v_scale and alpha are read before the next tile
  }
}

// Adds the key slices' partial sums (when map.slices > 1): afterwards the threads with
// map.slice == 0 and map.count == 1 hold the totals. |n_out| = rows * head_dim.
__device__ __forceinline__ void combine_slices(TileShared& sh, const OutputMap& map, int32_t n_out,
                                               float (&acc)[kMaxOutputsPerThread]) {
  if (map.slices == 1) return;  // block-uniform
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  if (map.count > 0) sh.combine[tid] = acc[0];
  __syncthreads();
  if (map.count > 0 && map.slice == 0) {
    float total = 0.0f;
    for (int32_t s = 0; s < map.slices; ++s) total += sh.combine[s * n_out + tid];
    acc[0] = total;
  }
  __syncthreads();
}

// True when this thread writes its outputs after combine_slices.
__device__ __forceinline__ bool owns_outputs(const OutputMap& map) {
  return map.count > 0 && map.slice == 0;
}

__device__ __forceinline__ void store_element(void* data, int32_t element, int64_t index,
                                              float value) {
  if (element == kElementF16) {
    static_cast<uint16_t*>(data)[index] = float_to_f16(value);
  } else {
    static_cast<float*>(data)[index] = value;
  }
}

// The paged-table check of one block_tables entry i = seq * max_blocks + b (validation kernels):
// a context length outside [min_len, max_blocks * block_size] (reported at b == 0) or a block id
// in use outside [0, num_blocks) sets the error word.
__device__ __forceinline__ void check_table_entry(const PagedTable& table, int64_t i,
                                                  int64_t min_len, int32_t* error_word) {
  const int64_t seq = i / table.max_blocks;
  const int64_t b = i % table.max_blocks;
  const int64_t len = table.context_lens[seq * table.len_stride];
  const int64_t capacity = static_cast<int64_t>(table.max_blocks) * table.block_size;
  if (len < 0 || len > capacity) {
    if (b == 0) set_device_error(error_word, kContextLenOutOfRange);
    return;
  }
  if (len < min_len) {
    if (b == 0) set_device_error(error_word, kContextLenWithoutRoom);
    return;
  }
  if (b >= (len + table.block_size - 1) / table.block_size) return;  // ignored entry
  const int64_t id = table.block_tables[seq * table.seq_stride + b * table.entry_stride];
  if (id < 0 || id >= table.num_blocks) set_device_error(error_word, kBlockIdOutOfRange);
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_ATTENTION_TILE_H_
