// kv_append.cpp — see kv_append.h. The int8 rule must stay bit-identical to the reference
// (reference/reference_attention.cpp): scale = absmax / 127, q = clamp(nearbyint(x / scale)).
#include "kv_append.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <vector>

#include "hwinfer/plugin_support.h"
#include "reference/half.h"

namespace hwinfer::cpu {

namespace {

int8_t quantize(float x, float scale) {
  if (scale == 0.0f) return 0;
  return static_cast<int8_t>(std::clamp(std::nearbyint(x / scale), -127.0f, 127.0f));
}

// Loads head_dim values of one token-head as f32 into |x|.
void load_row(const uint8_t* src, uint32_t dtype, int64_t dim, float* x) {
  if (dtype == HWINFER_DTYPE_F32) {
    std::memcpy(x, src, static_cast<size_t>(dim) * sizeof(float));
    return;
  }
  const auto* h = reinterpret_cast<const uint16_t*>(src);
  for (int64_t d = 0; d < dim; ++d) x[d] = reference::f16_to_f32(h[d]);
}

// Appends every token of |side| for KV head |head|, in token order.
void append_head(const KvAppendProblem& p, const KvAppendSide& side, int64_t head, float* x) {
  const int64_t dim = p.head_dim;
  for (int64_t t = 0; t < p.n_tokens; ++t) {
    int32_t slot = 0;
    std::memcpy(&slot, p.slots + t * p.slot_stride, sizeof(slot));
    if (slot < 0) continue;
    const int64_t block = slot / p.block_size;
    const int64_t row = slot % p.block_size;
    load_row(side.src + t * side.src_token_stride + head * side.src_head_stride, side.src_dtype,
             dim, x);
    uint8_t* block_head = side.pool + block * side.pool_block_stride + head * side.pool_head_stride;
    if (side.pool_dtype == HWINFER_DTYPE_F16) {
      auto* dst = reinterpret_cast<uint16_t*>(block_head + row * side.pool_row_stride);
      for (int64_t d = 0; d < dim; ++d) dst[d] = reference::f32_to_f16(x[d]);
      continue;
    }
    auto* scale = reinterpret_cast<float*>(side.scales + block * side.scale_block_stride +
                                           head * side.scale_head_stride);
    float absmax = 0.0f;
    for (int64_t d = 0; d < dim; ++d) absmax = std::max(absmax, std::fabs(x[d]));
    if (absmax > *scale * 127.0f) {
      // The token does not fit: requantize the block-head's rows to the larger scale.
      const float old_scale = *scale;
      const float new_scale = absmax / 127.0f;
      for (int64_t r = 0; r < p.block_size; ++r) {
        auto* q = reinterpret_cast<int8_t*>(block_head + r * side.pool_row_stride);
        for (int64_t d = 0; d < dim; ++d) {
          q[d] = quantize(static_cast<float>(q[d]) * old_scale, new_scale);
        }
      }
      *scale = new_scale;
    }
    auto* q = reinterpret_cast<int8_t*>(block_head + row * side.pool_row_stride);
    for (int64_t d = 0; d < dim; ++d) q[d] = quantize(x[d], *scale);
  }
}

}  // namespace

hwinfer_error* kv_append(const KvAppendProblem& p, ThreadPool& pool) {
  const int64_t n_slots = p.num_blocks * p.block_size;
  for (int64_t t = 0; t < p.n_tokens; ++t) {
    int32_t slot = 0;
    std::memcpy(&slot, p.slots + t * p.slot_stride, sizeof(slot));
    if (slot >= n_slots) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu kv_append: slot_mapping[%" PRId64 "] = %" PRId32
                                " is outside the pool's %" PRId64
                                " slots (num_blocks * block_size); nothing was written",
                                t, slot, n_slots);
    }
  }
  pool.parallel_for(2 * p.n_kv_heads, [&](int64_t item) {
    std::vector<float> x(static_cast<size_t>(p.head_dim));
    const KvAppendSide& side = item < p.n_kv_heads ? p.k : p.v;
    append_head(p, side, item % p.n_kv_heads, x.data());
  });
  return nullptr;
}

}  // namespace hwinfer::cpu
