// paged_kv_slots.cpp — see paged_kv_slots.h. Validation of the paged-KV descriptors and the
// enqueue slots; the kernels live in kv_append.cpp, attention_decode*.cpp, attention_prefill.cpp.
#include "paged_kv_slots.h"

#include <algorithm>
#include <cinttypes>
#include <initializer_list>
#include <utility>

#include "attention_decode.h"
#include "attention_prefill.h"
#include "host_info.h"
#include "kernel_views.h"
#include "kv_append.h"

namespace hwinfer::cpu {

namespace {

// |view|'s dtype must be one of |allowed| (two values): a known other dtype is INVALID_ARGUMENT,
// an unknown one UNSUPPORTED.
hwinfer_error* check_dtype(const hwinfer_tensor_view& view, const char* kernel, const char* operand,
                           uint32_t allowed0, uint32_t allowed1) {
  if (view.struct_size < sizeof(hwinfer_tensor_view)) return nullptr;  // check_view reports it
  if (view.dtype == allowed0 || view.dtype == allowed1) return nullptr;
  const uint32_t code =
      dtype_is_known(view.dtype) ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNSUPPORTED;
  return hwinfer_make_error(code, "cpu %s: operand %s has dtype %s; expected %s or %s", kernel,
                            operand, dtype_name(view.dtype).c_str(), dtype_name(allowed0).c_str(),
                            dtype_name(allowed1).c_str());
}

// [lowest, end) byte addresses of a checked view with a buffer.
struct ByteRange {
  uintptr_t begin = 0, end = 0;
};
ByteRange byte_range(const hwinfer_tensor_view& view) {
  int64_t low = 0, high = static_cast<int64_t>(dtype_element_bytes(view.dtype));
  for (uint32_t i = 0; i < view.rank; ++i) {
    const int64_t span = (view.shape[i] - 1) * view.strides_bytes[i];
    (span < 0 ? low : high) += span;
  }
  const auto base = reinterpret_cast<uintptr_t>(view_data(view));
  return {base - static_cast<uintptr_t>(-low), base + static_cast<uintptr_t>(high)};
}

bool overlap(const hwinfer_tensor_view& a, const hwinfer_tensor_view& b) {
  if (a.buffer == nullptr || b.buffer == nullptr || a.buffer != b.buffer) return false;
  const ByteRange ra = byte_range(a), rb = byte_range(b);
  return ra.begin < rb.end && rb.begin < ra.end;
}

// One paged pool and its scales: cache [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8
// (innermost contiguous), scales [num_blocks, n_kv_heads] F32 for I8 (ignored for F16).
hwinfer_error* check_pool(const hwinfer_device* device, const char* kernel, const char* cache_name,
                          const char* scales_name, const hwinfer_tensor_view& cache,
                          const hwinfer_tensor_view& scales, int64_t num_blocks, int64_t block_size,
                          int64_t n_kv_heads, int64_t head_dim, bool is_output,
                          bool require_buffers) {
  if (hwinfer_error* error =
          check_dtype(cache, kernel, cache_name, HWINFER_DTYPE_F16, HWINFER_DTYPE_I8)) {
    return error;
  }
  ViewExpectation c =
      expect_view(kernel, cache_name, cache.dtype, "[num_blocks, block_size, n_kv_heads, head_dim]",
                  {num_blocks, block_size, n_kv_heads, head_dim});
  c.contiguous = true;
  c.is_output = is_output;
  if (hwinfer_error* error = check_view(cache, c, device, require_buffers)) return error;
  if (cache.dtype != HWINFER_DTYPE_I8) return nullptr;
  ViewExpectation s = expect_view(kernel, scales_name, HWINFER_DTYPE_F32,
                                  "[num_blocks, n_kv_heads]", {num_blocks, n_kv_heads});
  s.is_output = is_output;
  return check_view(scales, s, device, require_buffers);
}

hwinfer_error* require_positive(const char* kernel, const char* names,
                                std::initializer_list<int64_t> values) {
  for (int64_t value : values) {
    if (value > 0) continue;
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "cpu %s: %s must all be > 0", kernel,
                              names);
  }
  return nullptr;
}

KvAppendSide append_side(const hwinfer_tensor_view& src, const hwinfer_tensor_view& cache,
                         const hwinfer_tensor_view& scales) {
  KvAppendSide side;
  side.src = view_data(src);
  side.src_dtype = src.dtype;
  side.src_token_stride = src.strides_bytes[0];
  side.src_head_stride = src.strides_bytes[1];
  side.pool = view_data(cache);
  side.pool_dtype = cache.dtype;
  side.pool_block_stride = cache.strides_bytes[0];
  side.pool_row_stride = cache.strides_bytes[1];
  side.pool_head_stride = cache.strides_bytes[2];
  if (cache.dtype == HWINFER_DTYPE_I8) {
    side.scales = view_data(scales);
    side.scale_block_stride = scales.strides_bytes[0];
    side.scale_head_stride = scales.strides_bytes[1];
  }
  return side;
}

PagedKvPool paged_pool(const hwinfer_tensor_view& cache, const hwinfer_tensor_view& scales) {
  PagedKvPool pool;
  pool.data = view_data(cache);
  pool.dtype = cache.dtype;
  pool.block_stride = cache.strides_bytes[0];
  pool.row_stride = cache.strides_bytes[1];
  pool.head_stride = cache.strides_bytes[2];
  if (cache.dtype == HWINFER_DTYPE_I8) {
    pool.scales = view_data(scales);
    pool.scale_block_stride = scales.strides_bytes[0];
    pool.scale_head_stride = scales.strides_bytes[1];
  }
  return pool;
}

PagedKvTable paged_table(const hwinfer_tensor_view& block_tables,
                         const hwinfer_tensor_view& context_lens, int64_t block_size,
                         int64_t num_blocks) {
  PagedKvTable table;
  table.block_tables = view_data(block_tables);
  table.row_stride = block_tables.strides_bytes[0];
  table.col_stride = block_tables.strides_bytes[1];
  table.max_blocks_per_seq = block_tables.shape[1];
  table.context_lens = view_data(context_lens);
  table.context_stride = context_lens.strides_bytes[0];
  table.block_size = block_size;
  table.num_blocks = num_blocks;
  return table;
}

// num_blocks of a paged descriptor: the pool's outermost dimension (0 when the view is not rank 4;
// check_pool then reports the rank).
int64_t pool_blocks(const hwinfer_tensor_view& cache) {
  return cache.struct_size >= sizeof(hwinfer_tensor_view) && cache.rank == 4 ? cache.shape[0] : 0;
}

// The block tables and context lengths of |n_seqs| sequences.
hwinfer_error* check_table(const hwinfer_device* device, const char* kernel,
                           const hwinfer_tensor_view& block_tables,
                           const hwinfer_tensor_view& context_lens, int64_t n_seqs,
                           int64_t max_blocks_per_seq, bool require_buffers) {
  const ViewExpectation tables =
      expect_view(kernel, "block_tables", HWINFER_DTYPE_I32, "[n_seqs, max_blocks_per_seq]",
                  {n_seqs, max_blocks_per_seq});
  const ViewExpectation lens =
      expect_view(kernel, "context_lens", HWINFER_DTYPE_I32, "[n_seqs]", {n_seqs});
  if (hwinfer_error* error = check_view(block_tables, tables, device, require_buffers)) {
    return error;
  }
  return check_view(context_lens, lens, device, require_buffers);
}

}  // namespace

// ---- KV append ---------------------------------------------------------------------------------
//   k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16;  slot_mapping: [n_tokens] I32
//   k_cache, v_cache (+ scales): the paged layout; outputs, must not overlap each other.

hwinfer_error* check_kv_append(const hwinfer_device* device, const hwinfer_kv_append_desc& d,
                               bool require_buffers) {
  constexpr const char* kKernel = "kv_append";
  if (hwinfer_error* error = check_desc_size(d.struct_size, sizeof(d), kKernel)) return error;
  if (hwinfer_error* error =
          require_positive(kKernel, "n_tokens, n_kv_heads, head_dim, block_size and num_blocks",
                           {d.n_tokens, d.n_kv_heads, d.head_dim, d.block_size, d.num_blocks})) {
    return error;
  }
  if (d.num_blocks > INT32_MAX / d.block_size) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu kv_append: num_blocks * block_size must fit an I32 slot");
  }
  for (const auto* src : {&d.k, &d.v}) {
    if (hwinfer_error* error = check_dtype(*src, kKernel, src == &d.k ? "k" : "v",
                                           HWINFER_DTYPE_F32, HWINFER_DTYPE_F16)) {
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
  if (hwinfer_error* error = check_view(d.k, k, device, require_buffers)) return error;
  if (hwinfer_error* error = check_view(d.v, v, device, require_buffers)) return error;
  if (hwinfer_error* error = check_view(d.slot_mapping, slots, device, require_buffers)) {
    return error;
  }
  if (hwinfer_error* error =
          check_pool(device, kKernel, "k_cache", "k_scales", d.k_cache, d.k_scales, d.num_blocks,
                     d.block_size, d.n_kv_heads, d.head_dim, true, require_buffers)) {
    return error;
  }
  if (hwinfer_error* error =
          check_pool(device, kKernel, "v_cache", "v_scales", d.v_cache, d.v_scales, d.num_blocks,
                     d.block_size, d.n_kv_heads, d.head_dim, true, require_buffers)) {
    return error;
  }
  const bool i8 = d.k_cache.dtype == HWINFER_DTYPE_I8;
  const bool v_i8 = d.v_cache.dtype == HWINFER_DTYPE_I8;
  const bool overlapping =
      overlap(d.k_cache, d.v_cache) ||
      (i8 && (overlap(d.k_scales, d.k_cache) || overlap(d.k_scales, d.v_cache))) ||
      (v_i8 && (overlap(d.v_scales, d.k_cache) || overlap(d.v_scales, d.v_cache))) ||
      (i8 && v_i8 && overlap(d.k_scales, d.v_scales));
  if (overlapping) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu kv_append: the output pools and scales overlap in memory");
  }
  return nullptr;
}

hwinfer_error* enqueue_kv_append(hwinfer_stream* stream, const hwinfer_kv_append_desc* desc) {
  return guarded("kv_append", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "kv_append: stream")) return error;
    if (hwinfer_error* error = require_non_null(desc, "kv_append: desc")) return error;
    if (hwinfer_error* error = check_kv_append(stream->device, *desc, true)) return error;
    const hwinfer_kv_append_desc& d = *desc;
    KvAppendProblem problem;
    problem.n_tokens = d.n_tokens;
    problem.n_kv_heads = d.n_kv_heads;
    problem.head_dim = d.head_dim;
    problem.block_size = d.block_size;
    problem.num_blocks = d.num_blocks;
    problem.slots = view_data(d.slot_mapping);
    problem.slot_stride = d.slot_mapping.strides_bytes[0];
    problem.k = append_side(d.k, d.k_cache, d.k_scales);
    problem.v = append_side(d.v, d.v_cache, d.v_scales);
    ThreadPool* pool = stream->pool;
    return stream->worker.enqueue(
        [problem, pool]() -> hwinfer_error* { return kv_append(problem, *pool); });
  });
}

// ---- paged decode attention -------------------------------------------------------------------
//   q, out: [n_seqs, n_heads, head_dim] F32 | F16 (out has q's dtype);  pools: paged layout with
//   num_blocks = k_cache.shape[0];  block_tables: [n_seqs, max_blocks_per_seq];  context_lens.

hwinfer_error* check_attention_decode_paged(const hwinfer_device* device,
                                            const hwinfer_attention_decode_paged_desc& d,
                                            bool require_buffers) {
  constexpr const char* kKernel = "attention_decode_paged";
  if (hwinfer_error* error = check_desc_size(d.struct_size, sizeof(d), kKernel)) return error;
  const int64_t num_blocks = pool_blocks(d.k_cache);
  if (hwinfer_error* error = require_positive(
          kKernel,
          "n_seqs, n_heads, n_kv_heads, head_dim, block_size, max_blocks_per_seq and num_blocks "
          "(k_cache.shape[0])",
          {d.n_seqs, d.n_heads, d.n_kv_heads, d.head_dim, d.block_size, d.max_blocks_per_seq,
           num_blocks})) {
    return error;
  }
  if (hwinfer_error* error = backend::check_heads(kPluginName, kKernel, d.n_heads, d.n_kv_heads)) {
    return error;
  }
  if (d.max_blocks_per_seq > INT32_MAX / d.block_size) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu %s: max_blocks_per_seq * block_size must fit an I32", kKernel);
  }
  if (hwinfer_error* error = check_dtype(d.q, kKernel, "q", HWINFER_DTYPE_F32, HWINFER_DTYPE_F16)) {
    return error;
  }
  ViewExpectation q = expect_view(kKernel, "q", d.q.dtype, "[n_seqs, n_heads, head_dim]",
                                  {d.n_seqs, d.n_heads, d.head_dim});
  q.contiguous = true;
  ViewExpectation out = q;
  out.operand = "out";
  out.is_output = true;
  if (hwinfer_error* error = check_view(d.q, q, device, require_buffers)) return error;
  if (hwinfer_error* error = check_view(d.out, out, device, require_buffers)) return error;
  if (hwinfer_error* error =
          check_pool(device, kKernel, "k_cache", "k_scales", d.k_cache, d.k_scales, num_blocks,
                     d.block_size, d.n_kv_heads, d.head_dim, false, require_buffers)) {
    return error;
  }
  if (hwinfer_error* error =
          check_pool(device, kKernel, "v_cache", "v_scales", d.v_cache, d.v_scales, num_blocks,
                     d.block_size, d.n_kv_heads, d.head_dim, false, require_buffers)) {
    return error;
  }
  return check_table(device, kKernel, d.block_tables, d.context_lens, d.n_seqs,
                     d.max_blocks_per_seq, require_buffers);
}

hwinfer_error* enqueue_attention_decode_paged(hwinfer_stream* stream,
                                              const hwinfer_attention_decode_paged_desc* desc) {
  return guarded("attention_decode_paged", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "attention_decode_paged: stream")) {
      return error;
    }
    if (hwinfer_error* error = require_non_null(desc, "attention_decode_paged: desc")) return error;
    if (hwinfer_error* error = check_attention_decode_paged(stream->device, *desc, true)) {
      return error;
    }
    const hwinfer_attention_decode_paged_desc& d = *desc;
    AttentionDecodeProblem problem;
    problem.n_seqs = d.n_seqs;
    problem.n_heads = d.n_heads;
    problem.n_kv_heads = d.n_kv_heads;
    problem.head_dim = d.head_dim;
    problem.scale = d.scale;
    problem.dtype = d.q.dtype;
    problem.q = view_data(d.q);
    problem.q_seq_stride = d.q.strides_bytes[0];
    problem.q_head_stride = d.q.strides_bytes[1];
    problem.out = view_data(d.out);
    problem.out_seq_stride = d.out.strides_bytes[0];
    problem.out_head_stride = d.out.strides_bytes[1];
    problem.k = paged_pool(d.k_cache, d.k_scales);
    problem.v = paged_pool(d.v_cache, d.v_scales);
    problem.table = paged_table(d.block_tables, d.context_lens, d.block_size, d.k_cache.shape[0]);
    ThreadPool* pool = stream->pool;
    const bool use_avx2 = cpu_can_use_avx2_kernels();
    return stream->worker.enqueue([problem, pool, use_avx2]() -> hwinfer_error* {
      return attention_decode_paged(problem, *pool, use_avx2);
    });
  });
}

// ---- attention prefill --------------------------------------------------------------------------
//   q, out: [n_tokens, n_heads, head_dim] F32 | F16 (out has q's dtype);  k, v: [n_tokens,
//   n_kv_heads, head_dim] F32 | F16;  query_start: [n_seqs + 1] I32;  optional paged prefix with
//   block_tables [n_seqs, max_blocks_per_seq] (max_blocks_per_seq = its shape[1]), context_lens.

namespace {

bool prefill_has_prefix(const hwinfer_attention_prefill_desc& d, bool require_buffers) {
  if (d.k_cache.struct_size < sizeof(hwinfer_tensor_view)) return false;
  return d.k_cache.buffer != nullptr || (!require_buffers && d.k_cache.rank != 0);
}

int64_t table_width(const hwinfer_tensor_view& block_tables) {
  return block_tables.struct_size >= sizeof(hwinfer_tensor_view) && block_tables.rank == 2
             ? block_tables.shape[1]
             : 0;
}

}  // namespace

hwinfer_error* check_attention_prefill(const hwinfer_device* device,
                                       const hwinfer_attention_prefill_desc& d,
                                       bool require_buffers) {
  constexpr const char* kKernel = "attention_prefill";
  if (hwinfer_error* error = check_desc_size(d.struct_size, sizeof(d), kKernel)) return error;
  if (hwinfer_error* error =
          require_positive(kKernel, "n_tokens, n_seqs, n_heads, n_kv_heads and head_dim",
                           {d.n_tokens, d.n_seqs, d.n_heads, d.n_kv_heads, d.head_dim})) {
    return error;
  }
  if (hwinfer_error* error = backend::check_heads(kPluginName, kKernel, d.n_heads, d.n_kv_heads)) {
    return error;
  }
  if (d.causal > 1) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu attention_prefill: causal must be 0 or 1; got %" PRIu32,
                              d.causal);
  }
  if (d.n_tokens > INT32_MAX) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu attention_prefill: n_tokens must fit query_start's I32");
  }
  const struct {
    const hwinfer_tensor_view* view;
    const char* name;
  } inputs[] = {{&d.q, "q"}, {&d.k, "k"}, {&d.v, "v"}};
  for (const auto& input : inputs) {
    if (hwinfer_error* error =
            check_dtype(*input.view, kKernel, input.name, HWINFER_DTYPE_F32, HWINFER_DTYPE_F16)) {
      return error;
    }
  }
  ViewExpectation q = expect_view(kKernel, "q", d.q.dtype, "[n_tokens, n_heads, head_dim]",
                                  {d.n_tokens, d.n_heads, d.head_dim});
  q.contiguous = true;
  ViewExpectation out = q;
  out.operand = "out";
  out.is_output = true;
  ViewExpectation k = expect_view(kKernel, "k", d.k.dtype, "[n_tokens, n_kv_heads, head_dim]",
                                  {d.n_tokens, d.n_kv_heads, d.head_dim});
  k.contiguous = true;
  ViewExpectation v = k;
  v.operand = "v";
  v.dtype = d.v.dtype;
  const ViewExpectation starts =
      expect_view(kKernel, "query_start", HWINFER_DTYPE_I32, "[n_seqs + 1]", {d.n_seqs + 1});
  const std::pair<const hwinfer_tensor_view*, const ViewExpectation*> operands[] = {
      {&d.q, &q}, {&d.k, &k}, {&d.v, &v}, {&d.out, &out}, {&d.query_start, &starts}};
  for (const auto& [view, expected] : operands) {
    if (hwinfer_error* error = check_view(*view, *expected, device, require_buffers)) return error;
  }
  if (!prefill_has_prefix(d, require_buffers)) return nullptr;
  const int64_t num_blocks = pool_blocks(d.k_cache);
  const int64_t max_blocks = table_width(d.block_tables);
  if (hwinfer_error* error = require_positive(
          kKernel,
          "with a cached prefix, block_size, num_blocks (k_cache.shape[0]) and max_blocks_per_seq "
          "(block_tables.shape[1])",
          {d.block_size, num_blocks, max_blocks})) {
    return error;
  }
  if (max_blocks > INT32_MAX / d.block_size) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu %s: max_blocks_per_seq * block_size must fit an I32", kKernel);
  }
  if (hwinfer_error* error =
          check_pool(device, kKernel, "k_cache", "k_scales", d.k_cache, d.k_scales, num_blocks,
                     d.block_size, d.n_kv_heads, d.head_dim, false, require_buffers)) {
    return error;
  }
  if (hwinfer_error* error =
          check_pool(device, kKernel, "v_cache", "v_scales", d.v_cache, d.v_scales, num_blocks,
                     d.block_size, d.n_kv_heads, d.head_dim, false, require_buffers)) {
    return error;
  }
  return check_table(device, kKernel, d.block_tables, d.context_lens, d.n_seqs, max_blocks,
                     require_buffers);
}

hwinfer_error* enqueue_attention_prefill(hwinfer_stream* stream,
                                         const hwinfer_attention_prefill_desc* desc) {
  return guarded("attention_prefill", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "attention_prefill: stream")) return error;
    if (hwinfer_error* error = require_non_null(desc, "attention_prefill: desc")) return error;
    if (hwinfer_error* error = check_attention_prefill(stream->device, *desc, true)) return error;
    const hwinfer_attention_prefill_desc& d = *desc;
    auto matrix = [](const hwinfer_tensor_view& view) {
      TokenMatrix m;
      m.data = view_data(view);
      m.dtype = view.dtype;
      m.token_stride = view.strides_bytes[0];
      m.head_stride = view.strides_bytes[1];
      return m;
    };
    AttentionPrefillProblem problem;
    problem.n_tokens = d.n_tokens;
    problem.n_seqs = d.n_seqs;
    problem.n_heads = d.n_heads;
    problem.n_kv_heads = d.n_kv_heads;
    problem.head_dim = d.head_dim;
    problem.scale = d.scale;
    problem.causal = d.causal != 0;
    problem.q = matrix(d.q);
    problem.k = matrix(d.k);
    problem.v = matrix(d.v);
    problem.out = view_data(d.out);
    problem.out_token_stride = d.out.strides_bytes[0];
    problem.out_head_stride = d.out.strides_bytes[1];
    problem.query_start = view_data(d.query_start);
    problem.query_start_stride = d.query_start.strides_bytes[0];
    problem.has_prefix = prefill_has_prefix(d, true);
    if (problem.has_prefix) {
      problem.k_cache = paged_pool(d.k_cache, d.k_scales);
      problem.v_cache = paged_pool(d.v_cache, d.v_scales);
      problem.table = paged_table(d.block_tables, d.context_lens, d.block_size, d.k_cache.shape[0]);
    }
    ThreadPool* pool = stream->pool;
    return stream->worker.enqueue(
        [problem, pool]() -> hwinfer_error* { return attention_prefill(problem, *pool); });
  });
}

}  // namespace hwinfer::cpu
