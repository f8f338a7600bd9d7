// attention_decode_paged.cpp — attention_decode_paged: one query per sequence over its paged KV
// cache. Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

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

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// attention_decode_paged: one query per sequence over context_lens[s] cached tokens.
KernelCost count_cost(const hwinfer_attention_decode_paged_desc& d,
                      const IntArrayReader& read_ints) {
  const double n_seqs = Positive(d.n_seqs), n_heads = Positive(d.n_heads);
  const double n_kv_heads = Positive(d.n_kv_heads), head_dim = Positive(d.head_dim);
  const double block_size = Positive(d.block_size);
  const double capacity = Positive(d.max_blocks_per_seq) * block_size;
  KernelCost cost;
  double tokens = 0, blocks = 0;
  std::vector<int32_t> lens;
  if (ReadInts(read_ints, d.context_lens, static_cast<size_t>(n_seqs), &lens)) {
    for (size_t s = 0; s < static_cast<size_t>(n_seqs); ++s) {
      const double len = std::clamp(static_cast<double>(lens[s]), 0.0, capacity);
      tokens += len;
      blocks += CeilDiv(len, block_size);
    }
  } else {
    tokens = n_seqs * capacity;
    blocks = n_seqs * Positive(d.max_blocks_per_seq);
    cost.upper_bound = true;
  }
  const double q_values = n_seqs * n_heads * head_dim;
  cost.flops = 4.0 * head_dim * n_heads * tokens;
  cost.bytes_read = DtypeBytes(d.q.dtype, q_values) +
                    PagedKvReadBytes(d.k_cache.dtype, tokens, blocks, n_kv_heads, head_dim);
  cost.bytes_written = DtypeBytes(d.q.dtype, q_values);
  cost.compute_dtype = d.q.dtype == HWINFER_DTYPE_F16 ? HWINFER_DTYPE_F16 : HWINFER_DTYPE_F32;
  return cost;
}

namespace {

KernelSample Decode(uint32_t kv_dtype, const char* name) {
  auto d = blank_desc<hwinfer_attention_decode_paged_desc>(HWINFER_KERNEL_ATTENTION_DECODE_PAGED);
  d->n_seqs = 1;
  d->n_heads = kSampleHeads;
  d->n_kv_heads = kSampleKvHeads;
  d->head_dim = kSampleHeadDim;
  d->block_size = kSampleBlock;
  d->max_blocks_per_seq = kSampleBlocks;
  d->scale = 0.125f;
  d->q = d->out = sample_view(HWINFER_DTYPE_F16, {1, kSampleHeads, kSampleHeadDim});
  set_sample_pools(*d, kv_dtype);
  d->block_tables = sample_view(HWINFER_DTYPE_I32, {1, kSampleBlocks});
  d->context_lens = sample_view(HWINFER_DTYPE_I32, {1});
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_attention_decode_paged_desc*) {
  return {Decode(HWINFER_DTYPE_F16, "attention_decode_paged f16-kv"),
          Decode(HWINFER_DTYPE_I8, "attention_decode_paged i8-kv")};
}

}  // namespace hwinfer::kit
