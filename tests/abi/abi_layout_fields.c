/*
 * abi_layout_fields.c — the ABI 1.0 layout as a table (see abi_layout_table.h). Compiled twice:
 * with -DABI_LAYOUT_TABLE=abi_layout_frozen against tests/abi/frozen/v1_0, and with
 * -DABI_LAYOUT_TABLE=abi_layout_live against sdk/include. The list below names 1.0 fields
 * only; it must never grow or change (a field removed or renamed in the live header is then a
 * compile error here, and one moved or retyped is a mismatch in abi_layout_test.cpp).
 */
#include <hwinfer/plugin.h>
#include <stddef.h>

#include "abi_layout_table.h"

#ifndef ABI_LAYOUT_TABLE
#error "define ABI_LAYOUT_TABLE (abi_layout_frozen or abi_layout_live)"
#endif
#define ABI_LAYOUT_CONCAT_INNER(a, b) a##b
#define ABI_LAYOUT_CONCAT(a, b) ABI_LAYOUT_CONCAT_INNER(a, b)

#define F(type, field) \
  {#type "." #field, ABI_LAYOUT_FIELD, offsetof(type, field), sizeof(((type*)0)->field), NULL},
#define S(type) {#type, ABI_LAYOUT_STRUCT, 0, sizeof(type), NULL},
#define EXACT(type) {#type, ABI_LAYOUT_EXACT, 0, sizeof(type), NULL},
#define C(name) {#name, ABI_LAYOUT_CONSTANT, 0, (uint64_t)(name), NULL},
#define STR(name) {#name, ABI_LAYOUT_STRING, 0, 0, name},

/* Every struct that crosses the ABI shares this head; the same fields appear in each below. */
#define DESC_HEAD(type) F(type, struct_size) F(type, kind)

/* clang-format off */
const abi_layout_row ABI_LAYOUT_TABLE[] = {
    /* ---- constants ---- */
    C(HWINFER_ABI_MAJOR)
    STR(HWINFER_PLUGIN_QUERY_SYMBOL)
    C(HWINFER_STATUS_OK) C(HWINFER_STATUS_INVALID_ARGUMENT) C(HWINFER_STATUS_UNSUPPORTED)
    C(HWINFER_STATUS_OUT_OF_MEMORY) C(HWINFER_STATUS_UNAVAILABLE)
    C(HWINFER_STATUS_FAILED_PRECONDITION) C(HWINFER_STATUS_OUT_OF_RANGE) C(HWINFER_STATUS_INTERNAL)
    C(HWINFER_LOG_DEBUG) C(HWINFER_LOG_INFO) C(HWINFER_LOG_WARNING) C(HWINFER_LOG_ERROR)
    C(HWINFER_DTYPE_F32) C(HWINFER_DTYPE_F16) C(HWINFER_DTYPE_Q4_0) C(HWINFER_DTYPE_Q8_0)
    C(HWINFER_DTYPE_I8) C(HWINFER_DTYPE_I32) C(HWINFER_DTYPE_BF16)
    C(HWINFER_QK8_0) C(HWINFER_QK4_0) C(HWINFER_Q8_0_BLOCK_BYTES) C(HWINFER_Q4_0_BLOCK_BYTES)
    C(HWINFER_MAX_RANK)
    C(HWINFER_DEVICE_TYPE_OTHER) C(HWINFER_DEVICE_TYPE_CPU) C(HWINFER_DEVICE_TYPE_DISCRETE_GPU)
    C(HWINFER_DEVICE_TYPE_INTEGRATED_GPU) C(HWINFER_DEVICE_TYPE_VIRTUAL)
    C(HWINFER_MEMORY_DEVICE) C(HWINFER_MEMORY_HOST_VISIBLE)
    C(HWINFER_KERNEL_SUPPORTED) C(HWINFER_KERNEL_UNSUPPORTED)
    C(HWINFER_KERNEL_GEMM) C(HWINFER_KERNEL_MATMUL_QUANTIZED) C(HWINFER_KERNEL_ATTENTION_PREFILL)
    C(HWINFER_KERNEL_ATTENTION_DECODE_PAGED) C(HWINFER_KERNEL_KV_APPEND) C(HWINFER_KERNEL_RMS_NORM)
    C(HWINFER_KERNEL_ROPE) C(HWINFER_KERNEL_SILU_MUL) C(HWINFER_KERNEL_EMBEDDING)
    C(HWINFER_KERNEL_BANDWIDTH_PROBE)
    C(HWINFER_ROPE_NORMAL) C(HWINFER_ROPE_NEOX)
    C(HWINFER_PROBE_READ) C(HWINFER_PROBE_COPY) C(HWINFER_PROBE_WRITE)

    /* ---- errors, host services, options ---- */
    S(hwinfer_error) F(hwinfer_error, struct_size) F(hwinfer_error, code)
    F(hwinfer_error, message) F(hwinfer_error, destroy)

    S(hwinfer_host_api) F(hwinfer_host_api, struct_size) F(hwinfer_host_api, abi_major)
    F(hwinfer_host_api, abi_minor) F(hwinfer_host_api, host_context) F(hwinfer_host_api, log)

    S(hwinfer_option) F(hwinfer_option, struct_size) F(hwinfer_option, key)
    F(hwinfer_option, value)

    /* ---- quantized blocks: file formats, fixed forever ---- */
    EXACT(hwinfer_block_q8_0) F(hwinfer_block_q8_0, d) F(hwinfer_block_q8_0, qs)
    EXACT(hwinfer_block_q4_0) F(hwinfer_block_q4_0, d) F(hwinfer_block_q4_0, qs)

    /* ---- tensor views ---- */
    S(hwinfer_tensor_view) F(hwinfer_tensor_view, struct_size) F(hwinfer_tensor_view, dtype)
    F(hwinfer_tensor_view, buffer) F(hwinfer_tensor_view, offset_bytes)
    F(hwinfer_tensor_view, rank) F(hwinfer_tensor_view, reserved0)
    F(hwinfer_tensor_view, shape) F(hwinfer_tensor_view, strides_bytes)

    /* ---- device info ---- */
    S(hwinfer_device_info) F(hwinfer_device_info, struct_size) F(hwinfer_device_info, device_type)
    F(hwinfer_device_info, name) F(hwinfer_device_info, vendor) F(hwinfer_device_info, driver)
    F(hwinfer_device_info, uuid) F(hwinfer_device_info, pci_address)
    F(hwinfer_device_info, memory_total_bytes) F(hwinfer_device_info, memory_free_bytes)
    F(hwinfer_device_info, max_allocation_bytes) F(hwinfer_device_info, alignment_bytes)
    F(hwinfer_device_info, compute_units) F(hwinfer_device_info, reserved0)
    F(hwinfer_device_info, spec_peak_bandwidth_bytes_per_s)
    F(hwinfer_device_info, spec_peak_flops_f32) F(hwinfer_device_info, spec_peak_flops_f16)
    F(hwinfer_device_info, spec_peak_flops_bf16) F(hwinfer_device_info, spec_peak_flops_int8)

    /* ---- kernel support and descriptors ---- */
    S(hwinfer_kernel_support) F(hwinfer_kernel_support, struct_size)
    F(hwinfer_kernel_support, supported) F(hwinfer_kernel_support, reason)

    S(hwinfer_kernel_desc) DESC_HEAD(hwinfer_kernel_desc)

    S(hwinfer_gemm_desc) DESC_HEAD(hwinfer_gemm_desc) F(hwinfer_gemm_desc, m)
    F(hwinfer_gemm_desc, n) F(hwinfer_gemm_desc, k) F(hwinfer_gemm_desc, b_transposed)
    F(hwinfer_gemm_desc, reserved0) F(hwinfer_gemm_desc, alpha) F(hwinfer_gemm_desc, beta)
    F(hwinfer_gemm_desc, a) F(hwinfer_gemm_desc, b) F(hwinfer_gemm_desc, c)

    S(hwinfer_matmul_quantized_desc) DESC_HEAD(hwinfer_matmul_quantized_desc)
    F(hwinfer_matmul_quantized_desc, m) F(hwinfer_matmul_quantized_desc, n)
    F(hwinfer_matmul_quantized_desc, k) F(hwinfer_matmul_quantized_desc, x)
    F(hwinfer_matmul_quantized_desc, w) F(hwinfer_matmul_quantized_desc, y)

    S(hwinfer_attention_prefill_desc) DESC_HEAD(hwinfer_attention_prefill_desc)
    F(hwinfer_attention_prefill_desc, n_tokens) F(hwinfer_attention_prefill_desc, n_seqs)
    F(hwinfer_attention_prefill_desc, n_heads) F(hwinfer_attention_prefill_desc, n_kv_heads)
    F(hwinfer_attention_prefill_desc, head_dim) F(hwinfer_attention_prefill_desc, block_size)
    F(hwinfer_attention_prefill_desc, scale) F(hwinfer_attention_prefill_desc, causal)
    F(hwinfer_attention_prefill_desc, q) F(hwinfer_attention_prefill_desc, k)
    F(hwinfer_attention_prefill_desc, v) F(hwinfer_attention_prefill_desc, out)
    F(hwinfer_attention_prefill_desc, query_start) F(hwinfer_attention_prefill_desc, k_cache)
    F(hwinfer_attention_prefill_desc, v_cache) F(hwinfer_attention_prefill_desc, k_scales)
    F(hwinfer_attention_prefill_desc, v_scales) F(hwinfer_attention_prefill_desc, block_tables)
    F(hwinfer_attention_prefill_desc, context_lens)

    S(hwinfer_attention_decode_paged_desc) DESC_HEAD(hwinfer_attention_decode_paged_desc)
    F(hwinfer_attention_decode_paged_desc, n_seqs) F(hwinfer_attention_decode_paged_desc, n_heads)
    F(hwinfer_attention_decode_paged_desc, n_kv_heads)
    F(hwinfer_attention_decode_paged_desc, head_dim)
    F(hwinfer_attention_decode_paged_desc, block_size)
    F(hwinfer_attention_decode_paged_desc, max_blocks_per_seq)
    F(hwinfer_attention_decode_paged_desc, scale) F(hwinfer_attention_decode_paged_desc, reserved0)
    F(hwinfer_attention_decode_paged_desc, q) F(hwinfer_attention_decode_paged_desc, out)
    F(hwinfer_attention_decode_paged_desc, k_cache) F(hwinfer_attention_decode_paged_desc, v_cache)
    F(hwinfer_attention_decode_paged_desc, k_scales)
    F(hwinfer_attention_decode_paged_desc, v_scales)
    F(hwinfer_attention_decode_paged_desc, block_tables)
    F(hwinfer_attention_decode_paged_desc, context_lens)

    S(hwinfer_kv_append_desc) DESC_HEAD(hwinfer_kv_append_desc)
    F(hwinfer_kv_append_desc, n_tokens) F(hwinfer_kv_append_desc, n_kv_heads)
    F(hwinfer_kv_append_desc, head_dim) F(hwinfer_kv_append_desc, block_size)
    F(hwinfer_kv_append_desc, num_blocks) F(hwinfer_kv_append_desc, k)
    F(hwinfer_kv_append_desc, v) F(hwinfer_kv_append_desc, slot_mapping)
    F(hwinfer_kv_append_desc, k_cache) F(hwinfer_kv_append_desc, v_cache)
    F(hwinfer_kv_append_desc, k_scales) F(hwinfer_kv_append_desc, v_scales)

    S(hwinfer_rms_norm_desc) DESC_HEAD(hwinfer_rms_norm_desc) F(hwinfer_rms_norm_desc, n_tokens)
    F(hwinfer_rms_norm_desc, dim) F(hwinfer_rms_norm_desc, eps) F(hwinfer_rms_norm_desc, reserved0)
    F(hwinfer_rms_norm_desc, x) F(hwinfer_rms_norm_desc, residual) F(hwinfer_rms_norm_desc, weight)
    F(hwinfer_rms_norm_desc, out)

    S(hwinfer_rope_desc) DESC_HEAD(hwinfer_rope_desc) F(hwinfer_rope_desc, n_tokens)
    F(hwinfer_rope_desc, n_heads) F(hwinfer_rope_desc, n_kv_heads) F(hwinfer_rope_desc, head_dim)
    F(hwinfer_rope_desc, rotary_dim) F(hwinfer_rope_desc, theta_base) F(hwinfer_rope_desc, mode)
    F(hwinfer_rope_desc, q) F(hwinfer_rope_desc, k) F(hwinfer_rope_desc, positions)

    S(hwinfer_silu_mul_desc) DESC_HEAD(hwinfer_silu_mul_desc) F(hwinfer_silu_mul_desc, n_tokens)
    F(hwinfer_silu_mul_desc, dim) F(hwinfer_silu_mul_desc, gate) F(hwinfer_silu_mul_desc, up)
    F(hwinfer_silu_mul_desc, out)

    S(hwinfer_embedding_desc) DESC_HEAD(hwinfer_embedding_desc)
    F(hwinfer_embedding_desc, n_tokens) F(hwinfer_embedding_desc, vocab)
    F(hwinfer_embedding_desc, dim) F(hwinfer_embedding_desc, table) F(hwinfer_embedding_desc, ids)
    F(hwinfer_embedding_desc, out)

    S(hwinfer_bandwidth_probe_desc) DESC_HEAD(hwinfer_bandwidth_probe_desc)
    F(hwinfer_bandwidth_probe_desc, mode) F(hwinfer_bandwidth_probe_desc, iterations)
    F(hwinfer_bandwidth_probe_desc, size_bytes) F(hwinfer_bandwidth_probe_desc, src)
    F(hwinfer_bandwidth_probe_desc, dst) F(hwinfer_bandwidth_probe_desc, sink)

    /* ---- the tables ---- */
    S(hwinfer_kernel_table) F(hwinfer_kernel_table, struct_size)
    F(hwinfer_kernel_table, reserved0) F(hwinfer_kernel_table, gemm)
    F(hwinfer_kernel_table, matmul_quantized) F(hwinfer_kernel_table, attention_prefill)
    F(hwinfer_kernel_table, attention_decode_paged) F(hwinfer_kernel_table, kv_append)
    F(hwinfer_kernel_table, rms_norm) F(hwinfer_kernel_table, rope)
    F(hwinfer_kernel_table, silu_mul) F(hwinfer_kernel_table, embedding)
    F(hwinfer_kernel_table, bandwidth_probe)

    S(hwinfer_plugin_api) F(hwinfer_plugin_api, struct_size) F(hwinfer_plugin_api, abi_major)
    F(hwinfer_plugin_api, abi_minor) F(hwinfer_plugin_api, reserved0) F(hwinfer_plugin_api, name)
    F(hwinfer_plugin_api, version) F(hwinfer_plugin_api, plugin_init)
    F(hwinfer_plugin_api, plugin_destroy) F(hwinfer_plugin_api, device_count)
    F(hwinfer_plugin_api, device_get_info) F(hwinfer_plugin_api, device_open)
    F(hwinfer_plugin_api, device_close) F(hwinfer_plugin_api, buffer_alloc)
    F(hwinfer_plugin_api, buffer_free) F(hwinfer_plugin_api, buffer_map)
    F(hwinfer_plugin_api, buffer_import_host) F(hwinfer_plugin_api, stream_create)
    F(hwinfer_plugin_api, stream_destroy) F(hwinfer_plugin_api, stream_synchronize)
    F(hwinfer_plugin_api, copy_h2d) F(hwinfer_plugin_api, copy_d2h) F(hwinfer_plugin_api, copy_d2d)
    F(hwinfer_plugin_api, event_create) F(hwinfer_plugin_api, event_destroy)
    F(hwinfer_plugin_api, event_record) F(hwinfer_plugin_api, stream_wait_event)
    F(hwinfer_plugin_api, event_synchronize) F(hwinfer_plugin_api, event_query)
    F(hwinfer_plugin_api, event_elapsed_ns) F(hwinfer_plugin_api, kernel_query)
    F(hwinfer_plugin_api, kernels)
};
/* clang-format on */

#define ABI_LAYOUT_COUNT ABI_LAYOUT_CONCAT(ABI_LAYOUT_TABLE, _count)
const uint32_t ABI_LAYOUT_COUNT =
    (uint32_t)(sizeof(ABI_LAYOUT_TABLE) / sizeof(ABI_LAYOUT_TABLE[0]));
