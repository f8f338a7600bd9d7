// paged_kv_slots.cpp — the CpuKernels::enqueue overloads of the paged-KV kernels (cpu_kernels.h);
// their validation is sdk/kit (kernel_checks.h, paged_kv_checks.cpp) and the kernels live in
// kv_append.cpp, attention_decode*.cpp, attention_prefill.cpp (rope_kv_append: token_ops.cpp's
// rope work, then kv_append.cpp).
#include "attention_decode.h"
#include "attention_prefill.h"
#include "cpu_kernels.h"
#include "host_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "kv_append.h"
#include "token_ops.h"

namespace hwinfer::cpu {

namespace {

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

// A descriptor that passed backend::check_kv_append as kv_append's problem.
KvAppendProblem kv_append_problem(const hwinfer_kv_append_desc& d) {
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
  return problem;
}

}  // namespace

// ---- KV append ---------------------------------------------------------------------------------
//   k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16;  slot_mapping: [n_tokens] I32
//   k_cache, v_cache (+ scales): the paged layout; outputs, must not overlap each other.

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_kv_append_desc& d) {
  const KvAppendProblem problem = kv_append_problem(d);
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue(
      [problem, pool]() -> hwinfer_error* { return kv_append(problem, *pool); });
}

// ---- RoPE fused with the KV append (ABI 1.1) ---------------------------------------------------
//   q: [n_tokens, n_heads, head_dim], k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16;
//   positions, slot_mapping: [n_tokens] I32;  pools as kv_append.
// The descriptor is checked as its two halves (backend::check_rope_kv_append), then ONE work item
// runs rope's work (token_ops.cpp) and then kv_append on the rotated k: bit for bit the two
// kernels, and a bad slot is reported as kv_append reports it (after the rotation, as when the two
// run one after the other).

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_rope_kv_append_desc& d) {
  hwinfer_rope_desc rope;
  hwinfer_kv_append_desc append;
  hwinfer_split_rope_kv_append(&d, &rope, &append);
  const KvAppendProblem problem = kv_append_problem(append);
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue([rotate = rope_work(rope), problem, pool]() -> hwinfer_error* {
    rotate(*pool);
    return kv_append(problem, *pool);
  });
}

// ---- paged decode attention -------------------------------------------------------------------
//   q, out: [n_seqs, n_heads, head_dim] F32 | F16 (out has q's dtype);  pools: paged layout with
//   num_blocks = k_cache.shape[0];  block_tables: [n_seqs, max_blocks_per_seq];  context_lens.

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream,
                                   const hwinfer_attention_decode_paged_desc& d) {
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
  ThreadPool* pool = stream.pool;
  const bool use_avx2 = cpu_can_use_avx2_kernels();
  return stream.worker.enqueue([problem, pool, use_avx2]() -> hwinfer_error* {
    return attention_decode_paged(problem, *pool, use_avx2);
  });
}

// ---- attention prefill --------------------------------------------------------------------------
//   q, out: [n_tokens, n_heads, head_dim] F32 | F16 (out has q's dtype);  k, v: [n_tokens,
//   n_kv_heads, head_dim] F32 | F16;  query_start: [n_seqs + 1] I32;  optional paged prefix with
//   block_tables [n_seqs, max_blocks_per_seq] (max_blocks_per_seq = its shape[1]), context_lens.

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream,
                                   const hwinfer_attention_prefill_desc& d) {
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
  problem.has_prefix = backend::attention_prefill_has_prefix(d, true);
  if (problem.has_prefix) {
    problem.k_cache = paged_pool(d.k_cache, d.k_scales);
    problem.v_cache = paged_pool(d.v_cache, d.v_scales);
    problem.table = paged_table(d.block_tables, d.context_lens, d.block_size, d.k_cache.shape[0]);
  }
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue(
      [problem, pool]() -> hwinfer_error* { return attention_prefill(problem, *pool); });
}

}  // namespace hwinfer::cpu
