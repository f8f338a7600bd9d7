// kernels_attention_prefill.cpp — the Vulkan backend's fused attention prefill
// (shaders/attention_prefill.comp, which documents the algorithm): causal or full, GQA/MQA, with
// the optional cached paged prefix (chunked prefill), flash-attention style with an online softmax
// in fp32; the score matrix is never materialised.
//   q, out: [n_tokens, n_heads, head_dim]     F32 | F16 (out has q's dtype)
//   k, v:   [n_tokens, n_kv_heads, head_dim]  F32 | F16 each
//   query_start: [n_seqs + 1] I32
//   prefix (k_cache.buffer != NULL): k_cache, v_cache [num_blocks, block_size, n_kv_heads,
//   head_dim] F16 | I8 (+ k_scales, v_scales [num_blocks, n_kv_heads] F32 for I8),
//   block_tables [n_seqs, max_blocks_per_seq] I32, context_lens [n_seqs] I32.
// One command buffer, two dispatches of the shader: a validation pass (query_start must rise from
// 0 to n_tokens; context lengths and the block ids they use must be in range; anything else sets
// the error word, so the next stream_synchronize returns INVALID_ARGUMENT), a barrier, then the
// attention pass (one workgroup per (query token, head), strided by gl_NumWorkGroups), which
// writes nothing when the error word is set — as the CPU backend, which validates before writing.
// Descriptors are validated by the shared check_attention_prefill; attention_prefill_limits adds
// what the shader cannot run (UNSUPPORTED with the reason). Must not read buffer contents on the
// host.
#include <cinttypes>
#include <initializer_list>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"

namespace hwinfer::vulkan {

namespace {

constexpr const char* kKernel = "attention_prefill";
constexpr int64_t kMaxHeadDim = 4 * static_cast<int64_t>(kWorkgroupSize);  // 4 dims / invocation
constexpr int64_t kMax16 = 0xFFFF;

// Flags: shaders/attention_prefill.comp's FLAG_* bits.
constexpr uint32_t kCausal = 1u, kQF16 = 2u, kKF16 = 4u, kVF16 = 8u, kHasPrefix = 16u, kKI8 = 32u,
                   kVI8 = 64u, kValidate = 128u;

// The shader's push constants: 32 words, the 128 bytes dispatch.h allows. Offsets are the binding
// remainders in elements, 8 bits each (< minStorageBufferOffsetAlignment <= 256 bytes).
struct AttentionPrefillPush {
  uint32_t n_tokens, n_seqs;
  uint32_t heads;  // n_heads | group << 16
  uint32_t dims;   // head_dim | block_size << 16
  uint32_t max_blocks, num_blocks;
  float scale;
  uint32_t offsets0;  // q | k << 8 | v << 16 | out << 24
  uint32_t offsets1;  // query_start | k_cache << 8 | v_cache << 16 | k_scales << 24
  uint32_t offsets2;  // v_scales | block_tables << 8 | context_lens << 16 | flags << 24
  uint32_t q_token_stride, q_head_stride;
  uint32_t k_token_stride, k_head_stride;
  uint32_t v_token_stride, v_head_stride;
  uint32_t out_token_stride, out_head_stride;
  uint32_t qs_stride;
  uint32_t kc_block_stride, kc_row_stride, kc_head_stride;
  uint32_t vc_block_stride, vc_row_stride, vc_head_stride;
  uint32_t ks_block_stride, ks_head_stride;
  uint32_t vs_block_stride, vs_head_stride;
  uint32_t bt_row_stride, bt_col_stride;
  uint32_t cl_stride;
};
static_assert(sizeof(AttentionPrefillPush) == 128, "push constants are limited to 128 bytes");

// Four 8-bit element remainders packed into one word; INTERNAL when one does not fit (a device
// whose minStorageBufferOffsetAlignment exceeds the Vulkan maximum of 256 bytes).
hwinfer_error* pack_offsets(const hwinfer_device* device,
                            std::initializer_list<const hwinfer_tensor_view*> views,
                            uint32_t top_byte, uint32_t* out) {
  uint32_t word = 0;
  uint32_t shift = 0;
  for (const hwinfer_tensor_view* view : views) {
    const uint32_t remainder = element_remainder(device, *view);
    if (remainder > 0xFFu) {
      return hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                                "vulkan attention_prefill: a binding remainder of %" PRIu32
                                " elements does not fit the shader's 8-bit offsets",
                                remainder);
    }
    word |= remainder << shift;
    shift += 8;
  }
  *out = word | top_byte << 24;
  return nullptr;
}

uint32_t pack16(int64_t low, int64_t high) {
  return static_cast<uint32_t>(low) | static_cast<uint32_t>(high) << 16;
}

hwinfer_error* unsupported_size(const char* what, int64_t value, int64_t limit) {
  return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                            "vulkan attention_prefill: %s = %" PRId64
                            " is more than the shader supports (%" PRId64 ")",
                            what, value, limit);
}

}  // namespace

hwinfer_error* VulkanBackend::limits(const backend::CheckContext& context,
                                     const hwinfer_attention_prefill_desc& d) {
  const bool require_buffers = context.require_buffers;
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.q, kKernel, "q"));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.k, kKernel, "k"));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.v, kKernel, "v"));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.out, kKernel, "out"));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.query_start, kKernel, "query_start"));
  // Each invocation accumulates 4 output dims; heads and the block size are packed in 16 bits.
  if (d.head_dim > kMaxHeadDim) return unsupported_size("head_dim", d.head_dim, kMaxHeadDim);
  if (d.n_heads > kMax16) return unsupported_size("n_heads", d.n_heads, kMax16);
  // Items (token, head) and query_start indices are 32-bit in the shader.
  if (d.n_tokens * d.n_heads > static_cast<int64_t>(UINT32_MAX)) {
    return unsupported_size("n_tokens * n_heads", d.n_tokens * d.n_heads, UINT32_MAX);
  }
  if (d.n_seqs >= static_cast<int64_t>(UINT32_MAX)) {
    return unsupported_size("n_seqs", d.n_seqs, static_cast<int64_t>(UINT32_MAX) - 1);
  }
  if (!backend::attention_prefill_has_prefix(d, require_buffers)) return nullptr;
  if (d.block_size > kMax16) return unsupported_size("block_size", d.block_size, kMax16);
  HWINFER_KIT_RETURN_IF_ERROR(
      require_whole_pool_elements(kKernel, d.k_cache, d.v_cache, d.k_scales, d.v_scales));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(d.block_tables, kKernel, "block_tables"));
  return require_whole_elements(d.context_lens, kKernel, "context_lens");
}

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream,
                                      const hwinfer_attention_prefill_desc& desc) {
  const hwinfer_device* device = stream.device;
  const hwinfer_attention_prefill_desc& d = desc;
  const bool prefix = backend::attention_prefill_has_prefix(d, true);
  const bool k_i8 = prefix && d.k_cache.dtype == HWINFER_DTYPE_I8;
  const bool v_i8 = prefix && d.v_cache.dtype == HWINFER_DTYPE_I8;
  // Without a prefix, bindings 5..10 alias q; an F16 pool's scales alias the pool (the shader
  // never touches an operand its flags say is absent).
  const hwinfer_tensor_view& k_cache = prefix ? d.k_cache : d.q;
  const hwinfer_tensor_view& v_cache = prefix ? d.v_cache : d.q;
  const hwinfer_tensor_view& k_scales = k_i8 ? d.k_scales : k_cache;
  const hwinfer_tensor_view& v_scales = v_i8 ? d.v_scales : v_cache;
  const hwinfer_tensor_view& block_tables = prefix ? d.block_tables : d.q;
  const hwinfer_tensor_view& context_lens = prefix ? d.context_lens : d.q;

  uint32_t flags = 0;
  if (d.causal != 0) flags |= kCausal;
  if (d.q.dtype == HWINFER_DTYPE_F16) flags |= kQF16;
  if (d.k.dtype == HWINFER_DTYPE_F16) flags |= kKF16;
  if (d.v.dtype == HWINFER_DTYPE_F16) flags |= kVF16;
  if (prefix) flags |= kHasPrefix;
  if (k_i8) flags |= kKI8;
  if (v_i8) flags |= kVI8;

  AttentionPrefillPush push{};
  push.n_tokens = static_cast<uint32_t>(d.n_tokens);
  push.n_seqs = static_cast<uint32_t>(d.n_seqs);
  push.heads = pack16(d.n_heads, d.n_heads / d.n_kv_heads);
  push.dims = pack16(d.head_dim, prefix ? d.block_size : 1);
  push.max_blocks = prefix ? static_cast<uint32_t>(d.block_tables.shape[1]) : 0;
  push.num_blocks = prefix ? static_cast<uint32_t>(d.k_cache.shape[0]) : 0;
  push.scale = d.scale;
  HWINFER_KIT_RETURN_IF_ERROR(pack_offsets(device, {&d.q, &d.k, &d.v, &d.out}, 0, &push.offsets0));
  HWINFER_KIT_RETURN_IF_ERROR(
      pack_offsets(device, {&d.query_start, &k_cache, &v_cache, &k_scales}, 0, &push.offsets1));
  HWINFER_KIT_RETURN_IF_ERROR(
      pack_offsets(device, {&v_scales, &block_tables, &context_lens}, flags, &push.offsets2));
  push.q_token_stride = element_stride(d.q, 0);
  push.q_head_stride = element_stride(d.q, 1);
  push.k_token_stride = element_stride(d.k, 0);
  push.k_head_stride = element_stride(d.k, 1);
  push.v_token_stride = element_stride(d.v, 0);
  push.v_head_stride = element_stride(d.v, 1);
  push.out_token_stride = element_stride(d.out, 0);
  push.out_head_stride = element_stride(d.out, 1);
  push.qs_stride = element_stride(d.query_start, 0);
  if (prefix) {
    push.kc_block_stride = element_stride(d.k_cache, 0);
    push.kc_row_stride = element_stride(d.k_cache, 1);
    push.kc_head_stride = element_stride(d.k_cache, 2);
    push.vc_block_stride = element_stride(d.v_cache, 0);
    push.vc_row_stride = element_stride(d.v_cache, 1);
    push.vc_head_stride = element_stride(d.v_cache, 2);
    if (k_i8) {
      push.ks_block_stride = element_stride(d.k_scales, 0);
      push.ks_head_stride = element_stride(d.k_scales, 1);
    }
    if (v_i8) {
      push.vs_block_stride = element_stride(d.v_scales, 0);
      push.vs_head_stride = element_stride(d.v_scales, 1);
    }
    push.bt_row_stride = element_stride(d.block_tables, 0);
    push.bt_col_stride = element_stride(d.block_tables, 1);
    push.cl_stride = element_stride(d.context_lens, 0);
  }

  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin(kKernel));
  Operand error_word;
  HWINFER_KIT_RETURN_IF_ERROR(recording.error_word(
      "attention_prefill: query_start does not rise from 0 to n_tokens, or a context_lens entry "
      "or a block id of the cached prefix is out of range; out was not written",
      &error_word));
  const Operand bindings[] = {
      operand_of(d.q),          operand_of(d.k),           operand_of(d.v),
      operand_of(d.out),        operand_of(d.query_start), operand_of(k_cache),
      operand_of(v_cache),      operand_of(k_scales),      operand_of(v_scales),
      operand_of(block_tables), operand_of(context_lens),  error_word};
  const auto dispatch = [&](const AttentionPrefillPush& constants, uint64_t groups) {
    return recording.dispatch(
        ShaderId::kAttentionPrefill,
        {bindings[0], bindings[1], bindings[2], bindings[3], bindings[4], bindings[5], bindings[6],
         bindings[7], bindings[8], bindings[9], bindings[10], bindings[11]},
        &constants, sizeof(constants), groups);
  };
  // Pass 1: validation, workgroups over the n_seqs + 1 query_start entries / sequences.
  AttentionPrefillPush validate = push;
  validate.offsets2 |= kValidate << 24;
  HWINFER_KIT_RETURN_IF_ERROR(dispatch(validate, static_cast<uint64_t>(d.n_seqs) + 1));
  recording.barrier();  // the attention pass reads the error word
  // Pass 2: one workgroup per (query token, head).
  HWINFER_KIT_RETURN_IF_ERROR(dispatch(push, static_cast<uint64_t>(d.n_tokens * d.n_heads)));
  return recording.submit();
}

}  // namespace hwinfer::vulkan
