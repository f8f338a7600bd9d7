// kernels_kv.cpp — the Vulkan backend's kv_append (shaders/kv_append.comp): the new tokens' keys
// and values (F32 | F16) into the paged pools (F16 | I8, each side its own dtype), with the I8
// pools' per-(block, head) F32 scales grown and the block-head requantized exactly as the CPU
// backend does (backends/cpu/kv_append.cpp). One dispatch per side, one workgroup per KV head
// walking the tokens in order. Slots are data on the device: a slot >= num_blocks * block_size sets
// the error word, nothing is written, and the next stream_synchronize returns INVALID_ARGUMENT.
// Must not read buffer contents on the host.
#include <cinttypes>

#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"

namespace hwinfer::vulkan {

namespace {

struct KvAppendPush {
  uint32_t n_tokens, n_kv_heads, head_dim, block_size, n_slots;
  uint32_t slots_offset, slots_stride;
  uint32_t src_offset, src_token_stride, src_head_stride, src_f16;
  uint32_t pool_offset, pool_block_stride, pool_row_stride, pool_head_stride, pool_i8;
  uint32_t scale_offset, scale_block_stride, scale_head_stride;
};

hwinfer_error* record_side(Recording& recording, const hwinfer_device* device,
                           const hwinfer_kv_append_desc& d, const hwinfer_tensor_view& src,
                           const hwinfer_tensor_view& cache, const hwinfer_tensor_view& scales,
                           const Operand& error_word) {
  const bool i8 = cache.dtype == HWINFER_DTYPE_I8;
  // An F16 pool has no scales: binding 3 aliases slot_mapping (never touched: pool_i8 = 0).
  const hwinfer_tensor_view& scale_view = i8 ? scales : d.slot_mapping;
  KvAppendPush push{};
  push.n_tokens = static_cast<uint32_t>(d.n_tokens);
  push.n_kv_heads = static_cast<uint32_t>(d.n_kv_heads);
  push.head_dim = static_cast<uint32_t>(d.head_dim);
  push.block_size = static_cast<uint32_t>(d.block_size);
  push.n_slots = static_cast<uint32_t>(d.num_blocks * d.block_size);  // fits an I32 (checked)
  push.slots_offset = element_remainder(device, d.slot_mapping);
  push.slots_stride = element_stride(d.slot_mapping, 0);
  push.src_offset = element_remainder(device, src);
  push.src_token_stride = element_stride(src, 0);
  push.src_head_stride = element_stride(src, 1);
  push.src_f16 = src.dtype == HWINFER_DTYPE_F16 ? 1u : 0u;
  push.pool_offset = element_remainder(device, cache);
  push.pool_block_stride = element_stride(cache, 0);
  push.pool_row_stride = element_stride(cache, 1);
  push.pool_head_stride = element_stride(cache, 2);
  push.pool_i8 = i8 ? 1u : 0u;
  if (i8) {
    push.scale_offset = element_remainder(device, scales);
    push.scale_block_stride = element_stride(scales, 0);
    push.scale_head_stride = element_stride(scales, 1);
  }
  return recording.dispatch(ShaderId::kKvAppend,
                            {operand_of(src), operand_of(d.slot_mapping), operand_of(cache),
                             operand_of(scale_view), error_word},
                            &push, sizeof(push), static_cast<uint64_t>(d.n_kv_heads));
}

}  // namespace

hwinfer_error* VulkanBackend::limits(const backend::CheckContext& /*context*/,
                                     const hwinfer_kv_append_desc& d) {
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.k, "kv_append", "k"));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.v, "kv_append", "v"));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.slot_mapping, "kv_append", "slot_mapping"));
  return require_whole_pool_elements("kv_append", d.k_cache, d.v_cache, d.k_scales, d.v_scales);
}

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream, const hwinfer_kv_append_desc& desc) {
  const hwinfer_device* device = stream.device;
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("kv_append"));
  Operand error_word;
  HWINFER_KIT_RETURN_IF_ERROR(recording.error_word(
      "kv_append: a slot_mapping entry is outside the pool's num_blocks * block_size slots; "
      "nothing was written",
      &error_word));
  HWINFER_KIT_RETURN_IF_ERROR(
      record_side(recording, device, desc, desc.k, desc.k_cache, desc.k_scales, error_word));
  // Both sides set the one error word (and read slot_mapping): ordered, not concurrent.
  recording.barrier();
  HWINFER_KIT_RETURN_IF_ERROR(
      record_side(recording, device, desc, desc.v, desc.v_cache, desc.v_scales, error_word));
  return recording.submit();
}

}  // namespace hwinfer::vulkan
