// kernels_attention_decode.cpp — the Vulkan backend's attention_decode_paged: one query token per
// sequence against its paged KV history, split over the KV length (flash-decoding), then reduced.
//   q, out: [n_seqs, n_heads, head_dim] F32 | F16 (out has q's dtype, innermost contiguous)
//   k_cache, v_cache: [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8 (each its own dtype),
//   k_scales, v_scales: [num_blocks, n_kv_heads] F32 (I8 pools only); block_tables: [n_seqs,
//   max_blocks_per_seq] I32; context_lens: [n_seqs] I32. Head h uses KV head h / (n_heads /
//   n_kv_heads).
// One command buffer, three dispatches separated by barriers:
//   1. shaders/attention_decode.comp in validation mode: a context length outside
//      [1, max_blocks_per_seq * block_size] or a used block id outside [0, num_blocks) sets the
//      error word (the next stream_synchronize returns INVALID_ARGUMENT); the next two passes then
//      do nothing, so no pool is read at a bad id and out is left untouched (as on the CPU).
//   2. shaders/attention_decode.comp: one workgroup per (seq, head, partition of the KV length)
//      writes its partition's max score, sum of exponentials and exp-weighted sum of V (F32) into
//      a scratch transient [rows, n_parts, head_dim + 2].
//   3. shaders/attention_reduce.comp: one workgroup per (seq, head) combines the used partitions
//      with the usual max rescaling and writes out.
// A partition is kPartitionTokens = 256 tokens (the workgroup size, one token per invocation); the
// number of partitions comes from max_blocks_per_seq * block_size (context_lens are device data),
// and partitions at or past a sequence's length contribute nothing. When the scratch of all
// n_seqs * n_heads rows would exceed kScratchLimitBytes (or maxStorageBufferRange), passes 2 and 3
// run over batches of rows reusing one scratch buffer (barriers between). fp32 accumulation.
// Must not read buffer contents on the host.
#include <algorithm>
#include <cstdint>

#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"

namespace hwinfer::vulkan {

namespace {

// Tokens per partition (kPartitionTokens of the shaders: the workgroup size) and the scratch size
// beyond which the rows are batched.
constexpr uint64_t kPartitionTokens = kWorkgroupSize;
constexpr uint64_t kScratchLimitBytes = uint64_t{64} << 20;

// The flags word of DecodePush (attention_decode.comp's kFlag*).
constexpr uint32_t kFlagValidate = 1;
constexpr uint32_t kFlagQF16 = 2;
constexpr uint32_t kFlagKI8 = 4;
constexpr uint32_t kFlagVI8 = 8;

// attention_decode.comp's push constants: 32 words, offsets and strides in elements.
struct DecodePush {
  uint32_t row_begin, row_end;  // seq * n_heads + head
  uint32_t n_heads, group, head_dim, block_size, max_blocks, num_blocks, flags;
  float scale;
  uint32_t q_offset, q_seq_stride, q_head_stride;
  uint32_t k_offset, k_block_stride, k_row_stride, k_head_stride;
  uint32_t v_offset, v_block_stride, v_row_stride, v_head_stride;
  uint32_t ks_offset, ks_block_stride, ks_head_stride;
  uint32_t vs_offset, vs_block_stride, vs_head_stride;
  uint32_t bt_offset, bt_seq_stride, bt_block_stride;
  uint32_t cl_offset, cl_stride;
};
static_assert(sizeof(DecodePush) <= 128, "push constants are at most 128 bytes");

// attention_reduce.comp's push constants.
struct ReducePush {
  uint32_t row_begin, row_end;  // seq * n_heads + head
  uint32_t n_heads, head_dim, n_parts;
  uint32_t cl_offset, cl_stride;
  uint32_t out_offset, out_seq_stride, out_head_stride, out_f16;
};

// The pool fields of DecodePush: |cache|'s element offset and block, row and head strides.
void pool_fields(const hwinfer_device* device, const hwinfer_tensor_view& cache, uint32_t* offset,
                 uint32_t* block_stride, uint32_t* row_stride, uint32_t* head_stride) {
  *offset = element_remainder(device, cache);
  *block_stride = element_stride(cache, 0);
  *row_stride = element_stride(cache, 1);
  *head_stride = element_stride(cache, 2);
}

void scale_fields(const hwinfer_device* device, const hwinfer_tensor_view& cache,
                  const hwinfer_tensor_view& scales, uint32_t* offset, uint32_t* block_stride,
                  uint32_t* head_stride) {
  if (cache.dtype != HWINFER_DTYPE_I8) return;  // no scales: the shader never reads them
  *offset = element_remainder(device, scales);
  *block_stride = element_stride(scales, 0);
  *head_stride = element_stride(scales, 1);
}

}  // namespace

hwinfer_error* VulkanBackend::limits(const backend::CheckContext& /*context*/,
                                     const hwinfer_attention_decode_paged_desc& d) {
  constexpr const char* kKernel = "attention_decode_paged";
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.q, kKernel, "q"));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.out, kKernel, "out"));
  HWINFER_KIT_RETURN_IF_ERROR(
      require_whole_pool_elements(kKernel, d.k_cache, d.v_cache, d.k_scales, d.v_scales));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.block_tables, kKernel, "block_tables"));
  return require_whole_elements(d.context_lens, kKernel, "context_lens");
}

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream,
                                      const hwinfer_attention_decode_paged_desc& desc) {
  const hwinfer_device* device = stream.device;
  const hwinfer_attention_decode_paged_desc& d = desc;
  const auto rows = static_cast<uint64_t>(d.n_seqs * d.n_heads);
  const auto head_dim = static_cast<uint64_t>(d.head_dim);
  const auto max_tokens = static_cast<uint64_t>(d.max_blocks_per_seq * d.block_size);
  const uint64_t n_parts = div_up(max_tokens, kPartitionTokens);
  const uint64_t row_bytes = n_parts * (head_dim + 2) * 4;  // one row's partitions
  const uint64_t limit =
      std::min<uint64_t>(kScratchLimitBytes, device->physical->max_storage_buffer_range);
  const uint64_t batch_rows = std::clamp<uint64_t>(limit / row_bytes, 1, rows);
  const uint64_t scratch_bytes = batch_rows * row_bytes;

  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("attention_decode_paged"));
  Operand error_word;
  HWINFER_KIT_RETURN_IF_ERROR(recording.error_word(
      "attention_decode_paged: a context length is outside [1, max_blocks_per_seq * "
      "block_size] or a used block id is outside [0, num_blocks); nothing was written",
      &error_word));
  hwinfer_buffer* scratch = nullptr;
  HWINFER_KIT_RETURN_IF_ERROR(recording.transient(scratch_bytes, HWINFER_MEMORY_DEVICE, &scratch));
  const Operand scratch_operand{scratch, 0, scratch_bytes};

  DecodePush push{};
  push.row_begin = 0;
  push.row_end = static_cast<uint32_t>(rows);
  push.n_heads = static_cast<uint32_t>(d.n_heads);
  push.group = static_cast<uint32_t>(d.n_heads / d.n_kv_heads);
  push.head_dim = static_cast<uint32_t>(d.head_dim);
  push.block_size = static_cast<uint32_t>(d.block_size);
  push.max_blocks = static_cast<uint32_t>(d.max_blocks_per_seq);
  push.num_blocks = static_cast<uint32_t>(d.k_cache.shape[0]);
  push.scale = d.scale;
  push.q_offset = element_remainder(device, d.q);
  push.q_seq_stride = element_stride(d.q, 0);
  push.q_head_stride = element_stride(d.q, 1);
  pool_fields(device, d.k_cache, &push.k_offset, &push.k_block_stride, &push.k_row_stride,
              &push.k_head_stride);
  pool_fields(device, d.v_cache, &push.v_offset, &push.v_block_stride, &push.v_row_stride,
              &push.v_head_stride);
  scale_fields(device, d.k_cache, d.k_scales, &push.ks_offset, &push.ks_block_stride,
               &push.ks_head_stride);
  scale_fields(device, d.v_cache, d.v_scales, &push.vs_offset, &push.vs_block_stride,
               &push.vs_head_stride);
  push.bt_offset = element_remainder(device, d.block_tables);
  push.bt_seq_stride = element_stride(d.block_tables, 0);
  push.bt_block_stride = element_stride(d.block_tables, 1);
  push.cl_offset = element_remainder(device, d.context_lens);
  push.cl_stride = element_stride(d.context_lens, 0);
  const uint32_t dtype_flags = (d.q.dtype == HWINFER_DTYPE_F16 ? kFlagQF16 : 0u) |
                               (d.k_cache.dtype == HWINFER_DTYPE_I8 ? kFlagKI8 : 0u) |
                               (d.v_cache.dtype == HWINFER_DTYPE_I8 ? kFlagVI8 : 0u);
  // An F16 pool has no scales: its binding aliases the pool (never read without the I8 flag).
  const Operand k_scales = operand_of(d.k_cache.dtype == HWINFER_DTYPE_I8 ? d.k_scales : d.k_cache);
  const Operand v_scales = operand_of(d.v_cache.dtype == HWINFER_DTYPE_I8 ? d.v_scales : d.v_cache);
  const auto decode_operands = {
      operand_of(d.q), operand_of(d.k_cache),      operand_of(d.v_cache),      k_scales,
      v_scales,        operand_of(d.block_tables), operand_of(d.context_lens), scratch_operand,
      error_word};

  // 1. Validation: one invocation per block_tables entry.
  push.flags = kFlagValidate | dtype_flags;
  HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(
      ShaderId::kAttentionDecode, decode_operands, &push, sizeof(push),
      div_up(static_cast<uint64_t>(d.n_seqs * d.max_blocks_per_seq), kWorkgroupSize)));
  recording.barrier();
  ReducePush reduce{};
  reduce.n_heads = push.n_heads;
  reduce.head_dim = push.head_dim;
  reduce.n_parts = static_cast<uint32_t>(n_parts);
  reduce.cl_offset = push.cl_offset;
  reduce.cl_stride = push.cl_stride;
  reduce.out_offset = element_remainder(device, d.out);
  reduce.out_seq_stride = element_stride(d.out, 0);
  reduce.out_head_stride = element_stride(d.out, 1);
  reduce.out_f16 = d.out.dtype == HWINFER_DTYPE_F16 ? 1u : 0u;
  push.flags = dtype_flags;
  for (uint64_t row_begin = 0; row_begin < rows; row_begin += batch_rows) {
    const uint64_t row_end = std::min(rows, row_begin + batch_rows);
    if (row_begin != 0) recording.barrier();  // the previous batch's reduce read the scratch
    // 2. Partitions: x = partition, y = row.
    push.row_begin = reduce.row_begin = static_cast<uint32_t>(row_begin);
    push.row_end = reduce.row_end = static_cast<uint32_t>(row_end);
    HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(ShaderId::kAttentionDecode, decode_operands,
                                                   &push, sizeof(push), n_parts,
                                                   row_end - row_begin));
    recording.barrier();
    // 3. Reduce: one workgroup per row.
    HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(
        ShaderId::kAttentionReduce,
        {operand_of(d.context_lens), scratch_operand, operand_of(d.out), error_word}, &reduce,
        sizeof(reduce), row_end - row_begin));
  }
  return recording.submit();
}

}  // namespace hwinfer::vulkan
