// kernels_token.cpp — the Vulkan backend's per-token kernels: embedding (F32 / F16 / BF16 tables
// and every GGUF block type, shaders/embedding.comp) and rope (NORMAL / NEOX, partial rotary, F32 /
// F16 q and k, shaders/rope.comp). Descriptors are validated by the shared checks (kernels.cpp's
// check_context); what this backend cannot run yet is reported by the *_limits functions
// (VulkanBackend::limits overloads) as UNSUPPORTED with the reason.
//
// Embedding ids are data on the device: an id outside [0, vocab) is found by the shader, which
// sets an error word (Recording::error_word) and leaves that token's out row untouched; the next
// stream_synchronize returns INVALID_ARGUMENT, as the CPU backend does. Must not read buffer
// contents on the host.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <vector>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/view_checks.h"
#include "kernel_util.h"

namespace hwinfer::vulkan {

namespace {

bool is_block(uint32_t dtype) { return hwinfer_dtype_block_values(dtype) != 0; }

// Bytes of one table row (packed, without padding).
uint64_t table_row_bytes(const hwinfer_embedding_desc& d) {
  const auto dim = static_cast<uint64_t>(d.dim);
  const uint32_t dtype = d.table.dtype;
  if (is_block(dtype)) {
    return dim / hwinfer_dtype_block_values(dtype) * hwinfer_dtype_block_bytes(dtype);
  }
  return dim * backend::dtype_element_bytes(dtype);
}

uint64_t table_extent_bytes(const hwinfer_embedding_desc& d) {
  return static_cast<uint64_t>(d.vocab - 1) * static_cast<uint64_t>(d.table.strides_bytes[0]) +
         table_row_bytes(d);
}

struct EmbeddingPush {
  uint32_t n_tokens, vocab, dim, dtype;
  uint32_t table_offset, table_row_stride;  // bytes
  uint32_t ids_offset, ids_stride;
  uint32_t out_offset, out_row_stride;
  uint32_t block_values, block_bytes;  // of a block dtype's blocks
};

struct RopePush {
  uint32_t n_tokens, n_heads, n_kv_heads, half, neox;
  uint32_t q_offset, q_token_stride, q_head_stride, q_f16;
  uint32_t k_offset, k_token_stride, k_head_stride, k_f16;
  uint32_t positions_offset, positions_stride;
};

// What rope.comp cannot run: dtypes other than F32/F16, offsets or strides that are not whole
// elements, negative strides.
hwinfer_error* require_rope_operand(const hwinfer_tensor_view& view, const char* operand) {
  if (view.dtype != HWINFER_DTYPE_F32 && view.dtype != HWINFER_DTYPE_F16) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan rope: operand %s is %s; only F32 and F16 are implemented in "
                              "the Vulkan backend",
                              operand, backend::dtype_name(view.dtype).c_str());
  }
  HWINFER_KIT_RETURN_IF_ERROR(require_non_negative_strides(view, "rope", operand));
  const auto element_bytes = static_cast<int64_t>(backend::dtype_element_bytes(view.dtype));
  if (view.offset_bytes % static_cast<uint64_t>(element_bytes) != 0 ||
      view.strides_bytes[0] % element_bytes != 0 || view.strides_bytes[1] % element_bytes != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan rope: operand %s has an offset or stride that is not a whole "
                              "number of elements",
                              operand);
  }
  return nullptr;
}

}  // namespace

hwinfer_error* VulkanBackend::limits(const backend::CheckContext& /*context*/,
                                     const hwinfer_rope_desc& d) {
  HWINFER_KIT_RETURN_IF_ERROR(require_rope_operand(d.q, "q"));
  if (d.k.buffer != nullptr || d.k.rank != 0)
    HWINFER_KIT_RETURN_IF_ERROR(require_rope_operand(d.k, "k"));
  HWINFER_KIT_RETURN_IF_ERROR(require_non_negative_strides(d.positions, "rope", "positions"));
  if (d.positions.offset_bytes % 4 != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan rope: positions must start at a multiple of 4 bytes");
  }
  return nullptr;
}

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream, const hwinfer_rope_desc& desc) {
  const hwinfer_device* device = stream.device;
  const bool has_k = desc.k.buffer != nullptr;
  // Without k, binding 1 aliases q (never touched: n_kv_heads = 0).
  const hwinfer_tensor_view& k = has_k ? desc.k : desc.q;
  const int64_t half = desc.rotary_dim / 2;
  RopePush push{};
  push.n_tokens = static_cast<uint32_t>(desc.n_tokens);
  push.n_heads = static_cast<uint32_t>(desc.n_heads);
  push.n_kv_heads = has_k ? static_cast<uint32_t>(desc.n_kv_heads) : 0u;
  push.half = static_cast<uint32_t>(half);
  push.neox = desc.mode == HWINFER_ROPE_NEOX ? 1u : 0u;
  push.q_offset = element_remainder(device, desc.q);
  push.q_token_stride = element_stride(desc.q, 0);
  push.q_head_stride = element_stride(desc.q, 1);
  push.q_f16 = desc.q.dtype == HWINFER_DTYPE_F16 ? 1u : 0u;
  push.k_offset = element_remainder(device, k);
  push.k_token_stride = element_stride(k, 0);
  push.k_head_stride = element_stride(k, 1);
  push.k_f16 = k.dtype == HWINFER_DTYPE_F16 ? 1u : 0u;
  push.positions_offset = element_remainder(device, desc.positions);
  push.positions_stride = element_stride(desc.positions, 0);
  if (half == 0) return nullptr;  // nothing rotates (rotary_dim 0, if the checks allow it)
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("rope"));
  // inv_freq[i] = theta_base^(-2i / rotary_dim) in double, as a float pair (hi, lo).
  const uint64_t freq_bytes = static_cast<uint64_t>(half) * 2 * sizeof(float);
  hwinfer_buffer* freq = nullptr;
  HWINFER_KIT_RETURN_IF_ERROR(recording.transient(freq_bytes, HWINFER_MEMORY_HOST_VISIBLE, &freq));
  if (freq->mapped == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                              "vulkan rope: the host-visible frequency table is not mapped");
  }
  std::vector<float> pairs(static_cast<size_t>(half) * 2);
  for (int64_t i = 0; i < half; ++i) {
    const double f = std::pow(static_cast<double>(desc.theta_base),
                              -2.0 * static_cast<double>(i) / static_cast<double>(desc.rotary_dim));
    const auto hi = static_cast<float>(f);
    pairs[static_cast<size_t>(2 * i)] = hi;
    pairs[static_cast<size_t>(2 * i + 1)] = static_cast<float>(f - static_cast<double>(hi));
  }
  std::memcpy(freq->mapped, pairs.data(), freq_bytes);
  const uint64_t units = static_cast<uint64_t>(desc.n_heads + (has_k ? desc.n_kv_heads : 0)) *
                         static_cast<uint64_t>(half);
  HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(
      ShaderId::kRope,
      {operand_of(desc.q), operand_of(k), operand_of(desc.positions), Operand{freq, 0, freq_bytes}},
      &push, sizeof(push), div_up(units, kWorkgroupSize), static_cast<uint64_t>(desc.n_tokens)));
  return recording.submit();
}

hwinfer_error* VulkanBackend::limits(const backend::CheckContext& /*context*/,
                                     const hwinfer_embedding_desc& d) {
  const uint32_t dtype = d.table.dtype;
  if (dtype != HWINFER_DTYPE_F32 && dtype != HWINFER_DTYPE_F16 && dtype != HWINFER_DTYPE_BF16 &&
      !is_block(dtype)) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan embedding: table dtype %s is not implemented in the Vulkan "
                              "backend",
                              backend::dtype_name(dtype).c_str());
  }
  if (d.table.strides_bytes[0] < 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan embedding: the table has a negative row stride (the shader "
                              "indexes with unsigned offsets)");
  }
  if (!is_block(dtype)) {
    HWINFER_KIT_RETURN_IF_ERROR(require_non_negative_strides(d.table, "embedding", "table"));
    const uint64_t element_bytes = backend::dtype_element_bytes(dtype);
    if (d.table.offset_bytes % element_bytes != 0 ||
        static_cast<uint64_t>(d.table.strides_bytes[0]) % element_bytes != 0) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "vulkan embedding: a %s table must start and have rows at "
                                "multiples of its element size",
                                backend::dtype_name(dtype).c_str());
    }
  }
  HWINFER_KIT_RETURN_IF_ERROR(require_non_negative_strides(d.ids, "embedding", "ids"));
  HWINFER_KIT_RETURN_IF_ERROR(require_non_negative_strides(d.out, "embedding", "out"));
  if (d.ids.offset_bytes % 4 != 0 || d.out.offset_bytes % 4 != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan embedding: ids and out must start at multiples of 4 bytes");
  }
  return nullptr;
}

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream, const hwinfer_embedding_desc& desc) {
  const hwinfer_device* device = stream.device;
  const Operand table{desc.table.buffer, desc.table.offset_bytes, table_extent_bytes(desc)};
  EmbeddingPush push{};
  push.n_tokens = static_cast<uint32_t>(desc.n_tokens);
  push.vocab = static_cast<uint32_t>(std::min<int64_t>(desc.vocab, UINT32_MAX));
  push.dim = static_cast<uint32_t>(desc.dim);
  push.dtype = desc.table.dtype;  // embedding.comp takes plugin.h's ids
  push.block_values = hwinfer_dtype_block_values(desc.table.dtype);
  push.block_bytes = hwinfer_dtype_block_bytes(desc.table.dtype);
  push.table_offset = static_cast<uint32_t>(binding_remainder(device, table));
  push.table_row_stride = static_cast<uint32_t>(desc.table.strides_bytes[0]);
  push.ids_offset = element_remainder(device, desc.ids);
  push.ids_stride = element_stride(desc.ids, 0);
  push.out_offset = element_remainder(device, desc.out);
  push.out_row_stride = element_stride(desc.out, 0);
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("embedding"));
  Operand error_word;
  HWINFER_KIT_RETURN_IF_ERROR(
      recording.error_word("embedding: an id is outside [0, vocab)", &error_word));
  HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(
      ShaderId::kEmbedding, {table, operand_of(desc.ids), operand_of(desc.out), error_word}, &push,
      sizeof(push), div_up(static_cast<uint64_t>(desc.dim), kWorkgroupSize),
      static_cast<uint64_t>(desc.n_tokens)));
  return recording.submit();
}

}  // namespace hwinfer::vulkan
