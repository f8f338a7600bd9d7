// kind_support.h — what several kernel kinds' files (kinds/<kind>.cpp) share: view expectations
// and dtype checks of their descriptor checks, the paged-KV pool and table checks, the byte counts
// of their costs, and the small shapes their samples use. Internal to the kit's sources: installed
// beside them (share/hwinfer/kit/kinds), not with the public headers.
//
// The paged layout: a pool cache [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8
// (innermost contiguous), and for an I8 pool its scales [num_blocks, n_kv_heads] F32 (ignored for
// F16); block_tables [n_seqs, max_blocks_per_seq] I32 and context_lens [n_seqs] I32 name the
// blocks of each sequence.
#ifndef HWINFER_SDK_KIT_KINDS_KIND_SUPPORT_H_
#define HWINFER_SDK_KIT_KINDS_KIND_SUPPORT_H_

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/kernel_cost.h"
#include "hwinfer/kit/kernel_samples.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/kit/view_checks.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {

// ---- checks: row views (rms_norm, silu_mul), token vectors (rope, embedding) -------------------

// A [n_tokens, dim] view of |dtype|, innermost contiguous.
inline ViewExpectation expect_matrix(const char* kernel, const char* operand, uint32_t dtype,
                                     int64_t rows, int64_t cols, bool is_output) {
  ViewExpectation e = expect_view(kernel, operand, dtype, "[n_tokens, dim]", {rows, cols});
  e.contiguous = true;
  e.is_output = is_output;
  return e;
}

inline hwinfer_error* check_float_dtype(const CheckContext& context,
                                        const hwinfer_tensor_view& view, const char* kernel,
                                        const char* operand) {
  return check_dtype_in(context, view, kernel, operand, {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16},
                        "F32 or F16");
}

// [n_tokens] I32 (positions, ids); any element-aligned stride.
inline ViewExpectation expect_token_vector(const char* kernel, const char* operand,
                                           int64_t n_tokens) {
  return expect_view(kernel, operand, HWINFER_DTYPE_I32, "[n_tokens]", {n_tokens});
}

// ---- checks: the paged-KV pools and tables (kv_append, attention_decode_paged, prefill) ---------

// One paged pool and its scales (see the top of the file).
inline hwinfer_error* check_pool(const CheckContext& context, const char* kernel,
                                 const char* cache_name, const char* scales_name,
                                 const hwinfer_tensor_view& cache,
                                 const hwinfer_tensor_view& scales, int64_t num_blocks,
                                 int64_t block_size, int64_t n_kv_heads, int64_t head_dim,
                                 bool is_output) {
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
inline hwinfer_error* check_pools(const CheckContext& context, const char* kernel,
                                  const hwinfer_tensor_view& k_cache,
                                  const hwinfer_tensor_view& k_scales,
                                  const hwinfer_tensor_view& v_cache,
                                  const hwinfer_tensor_view& v_scales, int64_t num_blocks,
                                  int64_t block_size, int64_t n_kv_heads, int64_t head_dim,
                                  bool is_output) {
  if (hwinfer_error* error = check_pool(context, kernel, "k_cache", "k_scales", k_cache, k_scales,
                                        num_blocks, block_size, n_kv_heads, head_dim, is_output)) {
    return error;
  }
  return check_pool(context, kernel, "v_cache", "v_scales", v_cache, v_scales, num_blocks,
                    block_size, n_kv_heads, head_dim, is_output);
}

inline hwinfer_error* require_positive(const CheckContext& context, const char* kernel,
                                       const char* names, std::initializer_list<int64_t> values) {
  for (int64_t value : values) {
    if (value > 0) continue;
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s %s: %s must all be > 0",
                              context.plugin_name, kernel, names);
  }
  return nullptr;
}

// num_blocks of a paged descriptor: the pool's outermost dimension (0 when the view is not rank 4;
// check_pool then reports the rank).
inline int64_t pool_blocks(const hwinfer_tensor_view& cache) {
  return cache.struct_size >= sizeof(hwinfer_tensor_view) && cache.rank == 4 ? cache.shape[0] : 0;
}

// The block tables and context lengths of |n_seqs| sequences.
inline hwinfer_error* check_table(const CheckContext& context, const char* kernel,
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
inline hwinfer_error* check_slots_fit_i32(const CheckContext& context, const char* kernel,
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
inline hwinfer_error* check_paged_cache(const CheckContext& context, const char* kernel,
                                        const Desc& d, int64_t num_blocks,
                                        int64_t max_blocks_per_seq) {
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
inline QueryAndOutput expect_query_and_output(const char* kernel, const hwinfer_tensor_view& q,
                                              const char* shape_names, int64_t rows,
                                              int64_t n_heads, int64_t head_dim) {
  QueryAndOutput e;
  e.q = expect_view(kernel, "q", q.dtype, shape_names, {rows, n_heads, head_dim});
  e.q.contiguous = true;
  e.out = e.q;
  e.out.operand = "out";
  e.out.is_output = true;
  return e;
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// ---- costs -------------------------------------------------------------------------------------

// Bytes of |values| values of |dtype| (quantized: whole blocks along the innermost dimension).
// Unknown dtypes count 0.
inline double DtypeBytes(uint32_t dtype, double values) {
  switch (dtype) {
    case HWINFER_DTYPE_F32:
    case HWINFER_DTYPE_I32:
      return 4.0 * values;
    case HWINFER_DTYPE_F16:
    case HWINFER_DTYPE_BF16:
      return 2.0 * values;
    case HWINFER_DTYPE_I8:
      return values;
    default:
      // Block-quantized: each type's own bytes per block (0 for an unknown dtype).
      return hwinfer_dtype_block_values(dtype) == 0
                 ? 0.0
                 : values / hwinfer_dtype_block_values(dtype) * hwinfer_dtype_block_bytes(dtype);
  }
}

inline double Positive(int64_t value) { return value > 0 ? static_cast<double>(value) : 0.0; }

// The int32 values of |view| through |read_ints|, when it has them and there are at least
// |min_count|.
inline bool ReadInts(const IntArrayReader& read_ints, const hwinfer_tensor_view& view,
                     size_t min_count, std::vector<int32_t>* out) {
  if (!read_ints) return false;
  out->clear();
  return read_ints(view, out) && out->size() >= min_count;
}

// K and V bytes of |tokens| cached tokens spread over |blocks| blocks: rows of n_kv_heads x
// head_dim in the pool dtype, plus one F32 scale per (block, head) for each I8 pool.
inline double PagedKvReadBytes(uint32_t pool_dtype, double tokens, double blocks, double n_kv_heads,
                               double head_dim) {
  double bytes = 2.0 * DtypeBytes(pool_dtype, tokens * n_kv_heads * head_dim);
  if (pool_dtype == HWINFER_DTYPE_I8) bytes += 2.0 * 4.0 * blocks * n_kv_heads;
  return bytes;
}

inline double CeilDiv(double a, double b) { return b > 0 ? std::ceil(a / b) : 0.0; }

// ---- samples: 64-wide matrices, 8 query heads over 2 KV heads of dim 64, blocks of 16 tokens ----

inline constexpr int64_t kSampleTokens = 16, kSampleHeads = 8, kSampleKvHeads = 2,
                         kSampleHeadDim = 64, kSampleBlock = 16, kSampleBlocks = 4, kSampleDim = 64;

// A zeroed descriptor of |kind| with its struct_size set.
template <typename Desc>
std::shared_ptr<Desc> blank_desc(uint32_t kind) {
  auto desc = std::make_shared<Desc>();
  std::memset(desc.get(), 0, sizeof(Desc));
  desc->struct_size = sizeof(Desc);
  desc->kind = kind;
  return desc;
}

// An absent optional operand.
inline hwinfer_tensor_view no_view() {
  hwinfer_tensor_view view;
  std::memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);
  return view;
}

// A row-major view of |shape| without a buffer (block dtypes: blocks packed along the innermost
// dimension, innermost stride 0).
inline hwinfer_tensor_view sample_view(uint32_t dtype, std::initializer_list<int64_t> shape) {
  hwinfer_tensor_view view = no_view();
  view.dtype = dtype;
  view.rank = static_cast<uint32_t>(std::min<size_t>(shape.size(), HWINFER_MAX_RANK));
  uint32_t i = 0;
  for (int64_t dim : shape) {
    if (i == view.rank) break;
    view.shape[i++] = dim;
  }
  if (view.rank == 0) return view;
  const int64_t inner = view.shape[view.rank - 1];
  const uint32_t block = hwinfer_dtype_block_values(dtype);
  int64_t stride = block != 0 ? inner / block * hwinfer_dtype_block_bytes(dtype)
                              : inner * static_cast<int64_t>(backend::dtype_element_bytes(dtype));
  view.strides_bytes[view.rank - 1] =
      block != 0 ? 0 : static_cast<int64_t>(backend::dtype_element_bytes(dtype));
  for (int d = static_cast<int>(view.rank) - 2; d >= 0; --d) {
    view.strides_bytes[d] = stride;
    stride *= view.shape[d];
  }
  return view;
}

template <typename Desc>
KernelSample sample(std::string name, std::shared_ptr<Desc> desc) {
  return {std::move(name), std::reinterpret_pointer_cast<hwinfer_kernel_desc>(desc)};
}

// The paged pools of an attention or append sample, in |kv_dtype| (I8 pools get their scales).
template <typename Desc>
void set_sample_pools(Desc& d, uint32_t kv_dtype) {
  d.k_cache = d.v_cache =
      sample_view(kv_dtype, {kSampleBlocks, kSampleBlock, kSampleKvHeads, kSampleHeadDim});
  d.k_scales = d.v_scales = kv_dtype == HWINFER_DTYPE_I8
                                ? sample_view(HWINFER_DTYPE_F32, {kSampleBlocks, kSampleKvHeads})
                                : no_view();
}

}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_KINDS_KIND_SUPPORT_H_
