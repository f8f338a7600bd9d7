// paged_kv.h — host-side access to the paged KV pools for the CPU attention kernels: the pool
// description (pointers and byte strides, no ABI types), a row loader that turns one token-head
// of an F16 or I8 pool into f32, and the run-time check of context lengths and block ids.
//
// Must not allocate or use threads; must never read a block whose id has not been checked.
//   pool:   [num_blocks, block_size, n_kv_heads, head_dim]  F16 | I8 (innermost contiguous)
//   scales: [num_blocks, n_kv_heads] F32 (I8 only)
//   block_tables: [n_seqs, max_blocks_per_seq] I32;  context_lens: [n_seqs] I32
#ifndef HWINFER_BACKENDS_CPU_PAGED_KV_H_
#define HWINFER_BACKENDS_CPU_PAGED_KV_H_

#include <cinttypes>
#include <cstdint>
#include <cstring>

#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::cpu {

struct PagedKvPool {
  const uint8_t* data = nullptr;
  uint32_t dtype = HWINFER_DTYPE_F16;
  int64_t block_stride = 0, row_stride = 0, head_stride = 0;
  const uint8_t* scales = nullptr;  // I8 only
  int64_t scale_block_stride = 0, scale_head_stride = 0;
};

// Block tables and context lengths (byte strides).
struct PagedKvTable {
  const uint8_t* block_tables = nullptr;
  int64_t row_stride = 0, col_stride = 0, max_blocks_per_seq = 0;
  const uint8_t* context_lens = nullptr;
  int64_t context_stride = 0;
  int64_t block_size = 0, num_blocks = 0;

  int32_t context_len(int64_t seq) const { return load(context_lens + seq * context_stride); }
  int32_t block_id(int64_t seq, int64_t index) const {
    return load(block_tables + seq * row_stride + index * col_stride);
  }
  static int32_t load(const uint8_t* p) {
    int32_t value = 0;
    std::memcpy(&value, p, sizeof(value));
    return value;
  }
};

// Exact f16 -> f32 without branches (so loops over it vectorise): normal and subnormal values by
// rescaling the shifted bits, inf/NaN by forcing the exponent.
inline float half_to_float(uint16_t h) {
  const uint32_t shifted = static_cast<uint32_t>(h & 0x7fffu) << 13;
  float magnitude = 0.0f;
  std::memcpy(&magnitude, &shifted, sizeof(magnitude));
  magnitude *= 0x1p112f;
  uint32_t bits = 0;
  std::memcpy(&bits, &magnitude, sizeof(bits));
  if ((h & 0x7c00u) == 0x7c00u) bits = shifted | 0x7f800000u;
  bits |= static_cast<uint32_t>(h & 0x8000u) << 16;
  float value = 0.0f;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// dst[0, dim) = token |row| of block |block|, head |head|, as f32.
inline void load_kv_row(const PagedKvPool& pool, int64_t block, int64_t row, int64_t head,
                        int64_t dim, float* dst) {
  const uint8_t* src =
      pool.data + block * pool.block_stride + row * pool.row_stride + head * pool.head_stride;
  if (pool.dtype == HWINFER_DTYPE_F16) {
    const auto* h = reinterpret_cast<const uint16_t*>(src);
    for (int64_t d = 0; d < dim; ++d) dst[d] = half_to_float(h[d]);
    return;
  }
  float scale = 0.0f;
  std::memcpy(&scale, pool.scales + block * pool.scale_block_stride + head * pool.scale_head_stride,
              sizeof(scale));
  const auto* q = reinterpret_cast<const int8_t*>(src);
  for (int64_t d = 0; d < dim; ++d) dst[d] = scale * static_cast<float>(q[d]);
}

// Checks, for sequences [0, n_seqs), that context_lens[s] lies in [min_len, max_blocks_per_seq *
// block_size] and that every block id the sequence uses lies in [0, num_blocks). Returns
// INVALID_ARGUMENT naming the first offender, or NULL.
inline hwinfer_error* check_paged_table(const char* kernel, const PagedKvTable& table,
                                        int64_t n_seqs, int64_t min_len) {
  const int64_t capacity = table.max_blocks_per_seq * table.block_size;
  for (int64_t s = 0; s < n_seqs; ++s) {
    const int64_t len = table.context_len(s);
    if (len < min_len || len > capacity) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu %s: context_lens[%" PRId64 "] = %" PRId64
                                " is outside [%" PRId64
                                ", max_blocks_per_seq * block_size = %" PRId64 "]",
                                kernel, s, len, min_len, capacity);
    }
    const int64_t used_blocks = (len + table.block_size - 1) / table.block_size;
    for (int64_t b = 0; b < used_blocks; ++b) {
      const int32_t id = table.block_id(s, b);
      if (id < 0 || id >= table.num_blocks) {
        return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                  "cpu %s: block_tables[%" PRId64 "][%" PRId64 "] = %" PRId32
                                  " is outside [0, num_blocks = %" PRId64 ")",
                                  kernel, s, b, id, table.num_blocks);
      }
    }
  }
  return nullptr;
}

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_PAGED_KV_H_
