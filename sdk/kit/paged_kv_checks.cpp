// paged_kv_checks.cpp — see kernel_checks.h: the checks of the paged-KV kernels (kv_append,
// attention_decode_paged, attention_prefill). Shapes use the descriptor's field names.
//
// The paged layout: a pool cache [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8
// (innermost contiguous), and for an I8 pool its scales [num_blocks, n_kv_heads] F32 (ignored for
// F16); block_tables [n_seqs, max_blocks_per_seq] I32 and context_lens [n_seqs] I32 name the
// blocks of each sequence.
#include <cinttypes>
#include <initializer_list>
#include <utility>

#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/kit/view_checks.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {

namespace {

// One paged pool and its scales (see the top of the file).
hwinfer_error* check_pool(const CheckContext& context, const char* kernel, const char* cache_name,
                          const char* scales_name, const hwinfer_tensor_view& cache,
                          const hwinfer_tensor_view& scales, int64_t num_blocks, int64_t block_size,
                          int64_t n_kv_heads, int64_t head_dim, bool is_output) {
  if (hwinfer_error* error = check_dtype_in(context, cache, kernel, cache_name,
                                            {HWINFER_DTYPE_F16, HWINFER_DTYPE_I8}, "F16 or I8")) {
    return error;
  }
  ViewExpectation c =
      expect_view(kernel, cache_name, cache.dtype, "[num_blocks, block_size, n_kv_heads, head_dim]",
                  {num_blocks, block_size, n_kv_heads, head_dim});
  c.contiguous = true;
  c.is_output = is_output;
  if (hwinfer_error* error = check_view(context, cache, c)) return error;
  if (cache.dtype != HWINFER_DTYPE_I8) return nullptr;
  ViewExpectation s = expect_view(kernel, scales_name, HWINFER_DTYPE_F32,
                                  "[num_blocks, n_kv_heads]", {num_blocks, n_kv_heads});
  s.is_output = is_output;
  return check_view(context, scales, s);
}

// Both pools (k_cache/k_scales, v_cache/v_scales) of a descriptor.
hwinfer_error* check_pools(const CheckContext& context, const char* kernel,
                           const hwinfer_tensor_view& k_cache, const hwinfer_tensor_view& k_scales,
                           const hwinfer_tensor_view& v_cache, const hwinfer_tensor_view& v_scales,
                           int64_t num_blocks, int64_t block_size, int64_t n_kv_heads,
                           int64_t head_dim, bool is_output) {
  if (hwinfer_error* error = check_pool(context, kernel, "k_cache", "k_scales", k_cache, k_scales,
                                        num_blocks, block_size, n_kv_heads, head_dim, is_output)) {
    return error;
  }
  return check_pool(context, kernel, "v_cache", "v_scales", v_cache, v_scales, num_blocks,
                    block_size, n_kv_heads, head_dim, is_output);
}

hwinfer_error* require_positive(const CheckContext& context, const char* kernel, const char* names,
                                std::initializer_list<int64_t> values) {
  for (int64_t value : values) {
    if (value > 0) continue;
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s %s: %s must all be > 0",
                              context.plugin_name, kernel, names);
  }
  return nullptr;
}

// num_blocks of a paged descriptor: the pool's outermost dimension (0 when the view is not rank 4;
// check_pool then reports the rank).
int64_t pool_blocks(const hwinfer_tensor_view& cache) {
  return cache.struct_size >= sizeof(hwinfer_tensor_view) && cache.rank == 4 ? cache.shape[0] : 0;
}

// The block tables and context lengths of |n_seqs| sequences.
hwinfer_error* check_table(const CheckContext& context, const char* kernel,
                           const hwinfer_tensor_view& block_tables,
                           const hwinfer_tensor_view& context_lens, int64_t n_seqs,
                           int64_t max_blocks_per_seq) {
  const ViewExpectation tables =
      expect_view(kernel, "block_tables", HWINFER_DTYPE_I32, "[n_seqs, max_blocks_per_seq]",
                  {n_seqs, max_blocks_per_seq});
  const ViewExpectation lens =
      expect_view(kernel, "context_lens", HWINFER_DTYPE_I32, "[n_seqs]", {n_seqs});
  if (hwinfer_error* error = check_view(context, block_tables, tables)) return error;
  return check_view(context, context_lens, lens);
}

// Block ids times block_size index an I32 slot space: max_blocks_per_seq * block_size must fit.
hwinfer_error* check_slots_fit_i32(const CheckContext& context, const char* kernel,
                                   int64_t max_blocks_per_seq, int64_t block_size) {
  if (max_blocks_per_seq <= INT32_MAX / block_size) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: max_blocks_per_seq * block_size must fit an I32",
                            context.plugin_name, kernel);
}

// The cached keys and values a paged attention reads: both pools (inputs) and the block table of
// |d| (an attention_decode_paged or attention_prefill descriptor), with |num_blocks| and
// |max_blocks_per_seq| as the caller derived them.
template <typename Desc>
hwinfer_error* check_paged_cache(const CheckContext& context, const char* kernel, const Desc& d,
                                 int64_t num_blocks, int64_t max_blocks_per_seq) {
  if (hwinfer_error* error =
          check_pools(context, kernel, d.k_cache, d.k_scales, d.v_cache, d.v_scales, num_blocks,
                      d.block_size, d.n_kv_heads, d.head_dim, false)) {
    return error;
  }
  return check_table(context, kernel, d.block_tables, d.context_lens, d.n_seqs, max_blocks_per_seq);
}

// q [rows, n_heads, head_dim] F32 | F16 (innermost contiguous) and out, the same shape and dtype,
// an output. |shape_names| names the shape in messages.
struct QueryAndOutput {
  ViewExpectation q, out;
};
QueryAndOutput expect_query_and_output(const char* kernel, const hwinfer_tensor_view& q,
                                       const char* shape_names, int64_t rows, int64_t n_heads,
                                       int64_t head_dim) {
  QueryAndOutput e;
  e.q = expect_view(kernel, "q", q.dtype, shape_names, {rows, n_heads, head_dim});
  e.q.contiguous = true;
  e.out = e.q;
  e.out.operand = "out";
  e.out.is_output = true;
  return e;
}

}  // namespace

// ---- KV append ---------------------------------------------------------------------------------
//   k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16 (innermost contiguous);  slot_mapping:
//   [n_tokens] I32;  k_cache, v_cache (+ scales): the paged layout; outputs, must not overlap each
//   other. num_blocks * block_size must fit an I32 slot.

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_kv_append_desc& d) {
  constexpr const char* kKernel = "kv_append";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kKernel)) {
    return error;
  }
  if (hwinfer_error* error = require_positive(
          context, kKernel, "n_tokens, n_kv_heads, head_dim, block_size and num_blocks",
          {d.n_tokens, d.n_kv_heads, d.head_dim, d.block_size, d.num_blocks})) {
    return error;
  }
  if (d.num_blocks > INT32_MAX / d.block_size) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s kv_append: num_blocks * block_size must fit an I32 slot", plugin);
  }
  for (const auto* src : {&d.k, &d.v}) {
    if (hwinfer_error* error =
            check_dtype_in(context, *src, kKernel, src == &d.k ? "k" : "v",
                           {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
      return error;
    }
  }
  ViewExpectation k = expect_view(kKernel, "k", d.k.dtype, "[n_tokens, n_kv_heads, head_dim]",
                                  {d.n_tokens, d.n_kv_heads, d.head_dim});
  ViewExpectation v = k;
  v.operand = "v";
  v.dtype = d.v.dtype;
  k.contiguous = v.contiguous = true;
  const ViewExpectation slots =
      expect_view(kKernel, "slot_mapping", HWINFER_DTYPE_I32, "[n_tokens]", {d.n_tokens});
  if (hwinfer_error* error = check_view(context, d.k, k)) return error;
  if (hwinfer_error* error = check_view(context, d.v, v)) return error;
  if (hwinfer_error* error = check_view(context, d.slot_mapping, slots)) return error;
  if (hwinfer_error* error =
          check_pools(context, kKernel, d.k_cache, d.k_scales, d.v_cache, d.v_scales, d.num_blocks,
                      d.block_size, d.n_kv_heads, d.head_dim, true)) {
    return error;
  }
  const bool i8 = d.k_cache.dtype == HWINFER_DTYPE_I8;
  const bool v_i8 = d.v_cache.dtype == HWINFER_DTYPE_I8;
  const bool overlapping =
      views_overlap(d.k_cache, d.v_cache) ||
      (i8 && (views_overlap(d.k_scales, d.k_cache) || views_overlap(d.k_scales, d.v_cache))) ||
      (v_i8 && (views_overlap(d.v_scales, d.k_cache) || views_overlap(d.v_scales, d.v_cache))) ||
      (i8 && v_i8 && views_overlap(d.k_scales, d.v_scales));
  if (overlapping) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s kv_append: the output pools and scales overlap in memory",
                              plugin);
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_KV_APPEND, &d);
}

// ---- RoPE fused with the KV append ---------------------------------------------------------
//   exactly what rope and kv_append accept for its two halves (hwinfer_split_rope_kv_append), with
//   k given (it is appended); then the plugin's limits for the fused kind.

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_rope_kv_append_desc& d) {
  if (hwinfer_error* error =
          check_desc_size(context.plugin_name, d.struct_size, sizeof(d), "rope_kv_append")) {
    return error;
  }
  hwinfer_rope_desc rope;
  hwinfer_kv_append_desc append;
  hwinfer_split_rope_kv_append(&d, &rope, &append);
  if (hwinfer_error* error = check_kernel(context, rope)) return error;
  if (hwinfer_error* error = check_kernel(context, append)) return error;
  return apply_kernel_limits(context, HWINFER_KERNEL_ROPE_KV_APPEND, &d);
}

// ---- paged decode attention -------------------------------------------------------------------
//   q, out: [n_seqs, n_heads, head_dim] F32 | F16 (innermost contiguous; out has q's dtype);
//   pools: the paged layout with num_blocks = k_cache.shape[0];  block_tables: [n_seqs,
//   max_blocks_per_seq];  context_lens: [n_seqs]. n_heads a multiple of n_kv_heads.

hwinfer_error* check_kernel(const CheckContext& context,
                            const hwinfer_attention_decode_paged_desc& d) {
  constexpr const char* kKernel = "attention_decode_paged";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kKernel)) {
    return error;
  }
  const int64_t num_blocks = pool_blocks(d.k_cache);
  if (hwinfer_error* error = require_positive(
          context, kKernel,
          "n_seqs, n_heads, n_kv_heads, head_dim, block_size, max_blocks_per_seq and num_blocks "
          "(k_cache.shape[0])",
          {d.n_seqs, d.n_heads, d.n_kv_heads, d.head_dim, d.block_size, d.max_blocks_per_seq,
           num_blocks})) {
    return error;
  }
  if (hwinfer_error* error = check_heads(plugin, kKernel, d.n_heads, d.n_kv_heads)) return error;
  if (hwinfer_error* error =
          check_slots_fit_i32(context, kKernel, d.max_blocks_per_seq, d.block_size)) {
    return error;
  }
  if (hwinfer_error* error = check_dtype_in(context, d.q, kKernel, "q",
                                            {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
    return error;
  }
  const QueryAndOutput q_out = expect_query_and_output(kKernel, d.q, "[n_seqs, n_heads, head_dim]",
                                                       d.n_seqs, d.n_heads, d.head_dim);
  if (hwinfer_error* error = check_view(context, d.q, q_out.q)) return error;
  if (hwinfer_error* error = check_view(context, d.out, q_out.out)) return error;
  if (hwinfer_error* error =
          check_paged_cache(context, kKernel, d, num_blocks, d.max_blocks_per_seq)) {
    return error;
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_ATTENTION_DECODE_PAGED, &d);
}

// ---- attention prefill --------------------------------------------------------------------------
//   q, out: [n_tokens, n_heads, head_dim] F32 | F16 (innermost contiguous; out has q's dtype);
//   k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16;  query_start: [n_seqs + 1] I32;  optional
//   paged prefix (attention_prefill_has_prefix) with block_tables [n_seqs, max_blocks_per_seq]
//   (max_blocks_per_seq = its shape[1]) and context_lens [n_seqs].

namespace {

int64_t table_width(const hwinfer_tensor_view& block_tables) {
  return block_tables.struct_size >= sizeof(hwinfer_tensor_view) && block_tables.rank == 2
             ? block_tables.shape[1]
             : 0;
}

}  // namespace

bool attention_prefill_has_prefix(const hwinfer_attention_prefill_desc& d, bool require_buffers) {
  if (d.k_cache.struct_size < sizeof(hwinfer_tensor_view)) return false;
  return d.k_cache.buffer != nullptr || (!require_buffers && d.k_cache.rank != 0);
}

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_attention_prefill_desc& d) {
  constexpr const char* kKernel = "attention_prefill";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kKernel)) {
    return error;
  }
  if (hwinfer_error* error =
          require_positive(context, kKernel, "n_tokens, n_seqs, n_heads, n_kv_heads and head_dim",
                           {d.n_tokens, d.n_seqs, d.n_heads, d.n_kv_heads, d.head_dim})) {
    return error;
  }
  if (hwinfer_error* error = check_heads(plugin, kKernel, d.n_heads, d.n_kv_heads)) return error;
  if (d.causal > 1) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s attention_prefill: causal must be 0 or 1; got %" PRIu32, plugin,
                              d.causal);
  }
  if (d.n_tokens > INT32_MAX) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s attention_prefill: n_tokens must fit query_start's I32", plugin);
  }
  const struct {
    const hwinfer_tensor_view* view;
    const char* name;
  } inputs[] = {{&d.q, "q"}, {&d.k, "k"}, {&d.v, "v"}};
  for (const auto& input : inputs) {
    if (hwinfer_error* error =
            check_dtype_in(context, *input.view, kKernel, input.name,
                           {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
      return error;
    }
  }
  const QueryAndOutput q_out = expect_query_and_output(
      kKernel, d.q, "[n_tokens, n_heads, head_dim]", d.n_tokens, d.n_heads, d.head_dim);
  ViewExpectation k = expect_view(kKernel, "k", d.k.dtype, "[n_tokens, n_kv_heads, head_dim]",
                                  {d.n_tokens, d.n_kv_heads, d.head_dim});
  k.contiguous = true;
  ViewExpectation v = k;
  v.operand = "v";
  v.dtype = d.v.dtype;
  const ViewExpectation starts =
      expect_view(kKernel, "query_start", HWINFER_DTYPE_I32, "[n_seqs + 1]", {d.n_seqs + 1});
  const std::pair<const hwinfer_tensor_view*, const ViewExpectation*> operands[] = {
      {&d.q, &q_out.q}, {&d.k, &k}, {&d.v, &v}, {&d.out, &q_out.out}, {&d.query_start, &starts}};
  for (const auto& [view, expected] : operands) {
    if (hwinfer_error* error = check_view(context, *view, *expected)) return error;
  }
  if (attention_prefill_has_prefix(d, context.require_buffers)) {
    const int64_t num_blocks = pool_blocks(d.k_cache);
    const int64_t max_blocks = table_width(d.block_tables);
    if (hwinfer_error* error =
            require_positive(context, kKernel,
                             "with a cached prefix, block_size, num_blocks (k_cache.shape[0]) and "
                             "max_blocks_per_seq (block_tables.shape[1])",
                             {d.block_size, num_blocks, max_blocks})) {
      return error;
    }
    if (hwinfer_error* error = check_slots_fit_i32(context, kKernel, max_blocks, d.block_size)) {
      return error;
    }
    if (hwinfer_error* error = check_paged_cache(context, kKernel, d, num_blocks, max_blocks)) {
      return error;
    }
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_ATTENTION_PREFILL, &d);
}

}  // namespace hwinfer::backend
