// kernels_attention.cpp — the GPU plugins' attention_decode_paged and attention_prefill enqueue
// slots and their limits (GpuBackend::limits overloads): the shared checks, then the launch
// arguments of paged_kv.h (device addresses, element strides, tile geometry) for
// attention_decode.cu and attention_prefill.cu, which document the algorithms.
//   decode:  q, out [n_seqs, n_heads, head_dim] F32 | F16; paged pools F16 | I8.
//   prefill: q, out [n_tokens, n_heads, head_dim] F32 | F16; k, v [n_tokens, n_kv_heads,
//            head_dim] F32 | F16; query_start [n_seqs + 1] I32; optional paged prefix F16 | I8.
// Refused (UNSUPPORTED): head_dim > kMaxAttentionHeadDim (1024), strides or offsets that are not
// whole elements, counts beyond the kernels' 32-bit fields. Must not read buffer contents on the
// host (context lengths, block ids and query_start are checked by the validation kernels).
#include <algorithm>
#include <cinttypes>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

constexpr const char* kDecode = "attention_decode_paged";
constexpr const char* kPrefill = "attention_prefill";
// The decode partials of all sequences beyond this size are produced and reduced in batches.
constexpr int64_t kDecodeScratchLimitBytes = int64_t{256} << 20;
// Decode partitions: kTileKeys * k keys, k chosen for about this many partitions per sequence.
constexpr int64_t kDecodeTargetParts = 32;
constexpr int64_t kDecodeMaxTilesPerPart = 8;

hwinfer_error* unsupported_size(const char* kernel, const char* what, int64_t value,
                                int64_t limit) {
  return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                            "%s %s: %s = %" PRId64 " is more than the %s kernels support (%" PRId64
                            ")",
                            kPluginName, kernel, what, value, kPluginName, limit);
}

int32_t element_of(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F16:
      return kElementF16;
    case HWINFER_DTYPE_I8:
      return kElementI8;
    default:
      return kElementF32;
  }
}

int64_t element_stride(const hwinfer_tensor_view& view, uint32_t dim) {
  return view.strides_bytes[dim] / static_cast<int64_t>(backend::dtype_element_bytes(view.dtype));
}

HeadRows head_rows(const hwinfer_tensor_view& view) {
  HeadRows rows;
  rows.data = view_data(view);
  rows.element = element_of(view.dtype);
  rows.row_stride = element_stride(view, 0);
  rows.head_stride = element_stride(view, 1);
  return rows;
}

HeadRowsOut head_rows_out(const hwinfer_tensor_view& view) {
  HeadRowsOut rows;
  rows.data = view_data(view);
  rows.element = element_of(view.dtype);
  rows.row_stride = element_stride(view, 0);
  rows.head_stride = element_stride(view, 1);
  return rows;
}

PagedPool paged_pool(const hwinfer_tensor_view& cache, const hwinfer_tensor_view& scales) {
  PagedPool pool;
  pool.data = view_data(cache);
  pool.element = element_of(cache.dtype);
  pool.block_stride = element_stride(cache, 0);
  pool.row_stride = element_stride(cache, 1);
  pool.head_stride = element_stride(cache, 2);
  if (cache.dtype == HWINFER_DTYPE_I8) {
    pool.scales = reinterpret_cast<const float*>(view_data(scales));
    pool.scale_block_stride = element_stride(scales, 0);
    pool.scale_head_stride = element_stride(scales, 1);
  }
  return pool;
}

PagedTable paged_table(const hwinfer_tensor_view& block_tables,
                       const hwinfer_tensor_view& context_lens, int64_t block_size,
                       int64_t num_blocks) {
  PagedTable table;
  table.block_tables = reinterpret_cast<const int32_t*>(view_data(block_tables));
  table.seq_stride = element_stride(block_tables, 0);
  table.entry_stride = element_stride(block_tables, 1);
  table.context_lens = reinterpret_cast<const int32_t*>(view_data(context_lens));
  table.len_stride = element_stride(context_lens, 0);
  table.block_size = static_cast<int32_t>(block_size);
  table.max_blocks = static_cast<int32_t>(block_tables.shape[1]);
  table.num_blocks = num_blocks;
  return table;
}

// Query rows a block holds for |head_dim| (attention_tile.h's limits).
int32_t rows_per_block(int64_t head_dim) {
  return static_cast<int32_t>(std::min<int64_t>(kMaxRows, kMaxRowFloats / head_dim));
}

// The largest divisor of |n| that is at most |limit| (>= 1).
int32_t largest_divisor_at_most(int64_t n, int32_t limit) {
  for (int32_t d = limit; d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// The pools, scales (I8 only), block table and context lengths must be whole elements.
hwinfer_error* require_whole_paged(const char* kernel, const hwinfer_tensor_view& k_cache,
                                   const hwinfer_tensor_view& v_cache,
                                   const hwinfer_tensor_view& k_scales,
                                   const hwinfer_tensor_view& v_scales,
                                   const hwinfer_tensor_view& block_tables,
                                   const hwinfer_tensor_view& context_lens) {
  GPU_RETURN_IF_ERROR(require_whole_elements(k_cache, kernel, "k_cache"));
  GPU_RETURN_IF_ERROR(require_whole_elements(v_cache, kernel, "v_cache"));
  if (k_cache.dtype == HWINFER_DTYPE_I8) {
    GPU_RETURN_IF_ERROR(require_whole_elements(k_scales, kernel, "k_scales"));
  }
  if (v_cache.dtype == HWINFER_DTYPE_I8) {
    GPU_RETURN_IF_ERROR(require_whole_elements(v_scales, kernel, "v_scales"));
  }
  GPU_RETURN_IF_ERROR(require_whole_elements(block_tables, kernel, "block_tables"));
  return require_whole_elements(context_lens, kernel, "context_lens");
}

// Counts the kernels keep in 32-bit fields.
hwinfer_error* require_i32(const char* kernel, const char* what, int64_t value) {
  if (value <= INT32_MAX - 1) return nullptr;
  return unsupported_size(kernel, what, value, INT32_MAX - 1);
}

}  // namespace

hwinfer_error* GpuBackend::limits(const backend::CheckContext& /*context*/,
                                  const hwinfer_attention_decode_paged_desc& d) {
  GPU_RETURN_IF_ERROR(require_whole_elements(d.q, kDecode, "q"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.out, kDecode, "out"));
  GPU_RETURN_IF_ERROR(require_whole_paged(kDecode, d.k_cache, d.v_cache, d.k_scales, d.v_scales,
                                          d.block_tables, d.context_lens));
  if (d.head_dim > kMaxAttentionHeadDim) {
    return unsupported_size(kDecode, "head_dim", d.head_dim, kMaxAttentionHeadDim);
  }
  GPU_RETURN_IF_ERROR(require_i32(kDecode, "n_seqs", d.n_seqs));
  return require_i32(kDecode, "n_heads", d.n_heads);
}

hwinfer_error* GpuBackend::limits(const backend::CheckContext& context,
                                  const hwinfer_attention_prefill_desc& d) {
  const bool require_buffers = context.require_buffers;
  GPU_RETURN_IF_ERROR(require_whole_elements(d.q, kPrefill, "q"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.k, kPrefill, "k"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.v, kPrefill, "v"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.out, kPrefill, "out"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.query_start, kPrefill, "query_start"));
  if (d.head_dim > kMaxAttentionHeadDim) {
    return unsupported_size(kPrefill, "head_dim", d.head_dim, kMaxAttentionHeadDim);
  }
  GPU_RETURN_IF_ERROR(require_i32(kPrefill, "n_seqs", d.n_seqs));
  GPU_RETURN_IF_ERROR(require_i32(kPrefill, "n_heads", d.n_heads));
  if (!backend::attention_prefill_has_prefix(d, require_buffers)) return nullptr;
  return require_whole_paged(kPrefill, d.k_cache, d.v_cache, d.k_scales, d.v_scales, d.block_tables,
                             d.context_lens);
}

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream,
                                   const hwinfer_attention_decode_paged_desc& desc) {
  const hwinfer_attention_decode_paged_desc& d = desc;
  DecodeArgs args;
  args.n_seqs = static_cast<int32_t>(d.n_seqs);
  args.n_heads = static_cast<int32_t>(d.n_heads);
  args.n_kv_heads = static_cast<int32_t>(d.n_kv_heads);
  args.head_dim = static_cast<int32_t>(d.head_dim);
  args.scale = d.scale;
  args.q = head_rows(d.q);
  args.out = head_rows_out(d.out);
  args.k = paged_pool(d.k_cache, d.k_scales);
  args.v = paged_pool(d.v_cache, d.v_scales);
  args.table = paged_table(d.block_tables, d.context_lens, d.block_size, d.k_cache.shape[0]);
  args.heads_per_block =
      largest_divisor_at_most(d.n_heads / d.n_kv_heads, rows_per_block(d.head_dim));
  const int64_t max_tokens = d.max_blocks_per_seq * d.block_size;  // fits an I32 (checked)
  const int64_t tiles_per_part = std::clamp<int64_t>(
      (max_tokens + kTileKeys * kDecodeTargetParts - 1) / (kTileKeys * kDecodeTargetParts), 1,
      kDecodeMaxTilesPerPart);
  args.partition_tokens = static_cast<int32_t>(kTileKeys * tiles_per_part);
  args.n_parts =
      static_cast<int32_t>((max_tokens + args.partition_tokens - 1) / args.partition_tokens);
  const int64_t seq_bytes = d.n_heads * static_cast<int64_t>(args.n_parts) * (d.head_dim + 2) * 4;
  args.batch_seqs =
      static_cast<int32_t>(std::clamp<int64_t>(kDecodeScratchLimitBytes / seq_bytes, 1, d.n_seqs));
  args.error_word = stream.error_word;
  GPU_RETURN_IF_ERROR(use_device(stream.device, kDecode));
  uint8_t* scratch = nullptr;
  GPU_RETURN_IF_ERROR(stream_scratch(
      &stream, static_cast<uint64_t>(args.scratch_floats()) * sizeof(float), &scratch));
  const gpuError_t result =
      launch_attention_decode_paged(args, reinterpret_cast<float*>(scratch), stream.stream);
  return check_runtime(result, kDecode, "kernel launch");
}

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream,
                                   const hwinfer_attention_prefill_desc& desc) {
  const hwinfer_attention_prefill_desc& d = desc;
  PrefillArgs args;
  args.n_tokens = static_cast<int32_t>(d.n_tokens);
  args.n_seqs = static_cast<int32_t>(d.n_seqs);
  args.n_heads = static_cast<int32_t>(d.n_heads);
  args.n_kv_heads = static_cast<int32_t>(d.n_kv_heads);
  args.head_dim = static_cast<int32_t>(d.head_dim);
  args.scale = d.scale;
  args.causal = d.causal != 0 ? 1 : 0;
  args.q = head_rows(d.q);
  args.k = head_rows(d.k);
  args.v = head_rows(d.v);
  args.out = head_rows_out(d.out);
  args.query_start = reinterpret_cast<const int32_t*>(view_data(d.query_start));
  args.query_start_stride = element_stride(d.query_start, 0);
  if (backend::attention_prefill_has_prefix(d, true)) {
    args.has_prefix = 1;
    args.k_cache = paged_pool(d.k_cache, d.k_scales);
    args.v_cache = paged_pool(d.v_cache, d.v_scales);
    args.table = paged_table(d.block_tables, d.context_lens, d.block_size, d.k_cache.shape[0]);
  }
  const int32_t rows = rows_per_block(d.head_dim);
  args.heads_per_block = largest_divisor_at_most(d.n_heads / d.n_kv_heads, rows);
  args.tokens_per_block = rows / args.heads_per_block;
  args.error_word = stream.error_word;
  GPU_RETURN_IF_ERROR(use_device(stream.device, kPrefill));
  const gpuError_t result = launch_attention_prefill(args, stream.stream);
  return check_runtime(result, kPrefill, "kernel launch");
}

}  // namespace hwinfer::gpu
