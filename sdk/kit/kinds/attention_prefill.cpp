// attention_prefill.cpp — attention_prefill: causal attention of new tokens, after an optional
// paged prefix. Everything a kernel kind needs besides its kernels, in one file
// (docs/plugin-kit.md): its descriptor check (the one every backend's enqueue slot and kernel_query
// run), its cost (the bytes and FLOPs the core counts for MBU and MFU) and its samples (what
// `hwinfer plugin check` asks a device about). Listed in hwinfer/kernel_kinds.def; found by the
// kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

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

namespace hwinfer::kit {

// (query, key) pairs of one sequence with |n| new tokens after a cached prefix of |prefix|:
// causal: new token i (1-based) sees prefix + i keys; full: every new token sees prefix + n.
double AttentionPairs(double n, double prefix, bool causal) {
  return causal ? n * prefix + n * (n + 1) / 2 : n * (prefix + n);
}

// attention_prefill: the new tokens of n_seqs sequences (query_start), each after an optional
// cached prefix (context_lens) when k_cache is given.
KernelCost count_cost(const hwinfer_attention_prefill_desc& d, const IntArrayReader& read_ints) {
  const double n_tokens = Positive(d.n_tokens), n_heads = Positive(d.n_heads);
  const double n_kv_heads = Positive(d.n_kv_heads), head_dim = Positive(d.head_dim);
  const double block_size = Positive(d.block_size);
  const size_t n_seqs = static_cast<size_t>(Positive(d.n_seqs));
  const bool causal = d.causal != 0;
  // The prefix is there when the cache is given (at query time: described, rank != 0).
  const bool has_prefix = d.k_cache.buffer != nullptr || d.k_cache.rank != 0;
  const double max_blocks = d.block_tables.rank == 2 ? Positive(d.block_tables.shape[1]) : 0.0;
  const double capacity = max_blocks * block_size;

  KernelCost cost;
  std::vector<int32_t> starts, lens;
  const bool have_starts = ReadInts(read_ints, d.query_start, n_seqs + 1, &starts);
  const bool have_lens = !has_prefix || ReadInts(read_ints, d.context_lens, n_seqs, &lens);
  double pairs = 0, prefix_tokens = 0, prefix_blocks = 0;
  if (have_starts && have_lens) {
    for (size_t s = 0; s < n_seqs; ++s) {
      const double n = std::max(0.0, static_cast<double>(starts[s + 1]) - starts[s]);
      const double prefix =
          has_prefix ? std::clamp(static_cast<double>(lens[s]), 0.0, capacity) : 0.0;
      pairs += AttentionPairs(n, prefix, causal);
      prefix_tokens += prefix;
      prefix_blocks += CeilDiv(prefix, block_size);
    }
  } else {
    // Upper bound: all new tokens in one sequence (n(n+1)/2 bounds any split of n), every
    // sequence's prefix at the block table's capacity.
    const double prefix = has_prefix ? capacity : 0.0;
    pairs = AttentionPairs(n_tokens, prefix, causal);
    const double seqs = static_cast<double>(n_seqs);
    prefix_tokens = seqs * prefix;
    prefix_blocks = has_prefix ? seqs * max_blocks : 0.0;
    cost.upper_bound = true;
  }
  const double q_values = n_tokens * n_heads * head_dim;
  const double kv_values = n_tokens * n_kv_heads * head_dim;
  cost.flops = 4.0 * head_dim * n_heads * pairs;
  cost.bytes_read = DtypeBytes(d.q.dtype, q_values) + DtypeBytes(d.k.dtype, kv_values) +
                    DtypeBytes(d.v.dtype, kv_values);
  if (has_prefix) {
    cost.bytes_read +=
        PagedKvReadBytes(d.k_cache.dtype, prefix_tokens, prefix_blocks, n_kv_heads, head_dim);
  }
  cost.bytes_written = DtypeBytes(d.q.dtype, q_values);
  cost.compute_dtype = d.q.dtype == HWINFER_DTYPE_F16 ? HWINFER_DTYPE_F16 : HWINFER_DTYPE_F32;
  return cost;
}

namespace {

KernelSample Prefill() {
  auto d = blank_desc<hwinfer_attention_prefill_desc>(HWINFER_KERNEL_ATTENTION_PREFILL);
  d->n_tokens = kSampleTokens;
  d->n_seqs = 1;
  d->n_heads = kSampleHeads;
  d->n_kv_heads = kSampleKvHeads;
  d->head_dim = kSampleHeadDim;
  d->scale = 0.125f;
  d->causal = 1;
  d->q = d->out = sample_view(HWINFER_DTYPE_F16, {kSampleTokens, kSampleHeads, kSampleHeadDim});
  d->k = d->v = sample_view(HWINFER_DTYPE_F16, {kSampleTokens, kSampleKvHeads, kSampleHeadDim});
  d->query_start = sample_view(HWINFER_DTYPE_I32, {2});
  d->k_cache = d->v_cache = d->k_scales = d->v_scales = d->block_tables = d->context_lens =
      no_view();
  return sample("attention_prefill f16", d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_attention_prefill_desc*) { return {Prefill()}; }

}  // namespace hwinfer::kit
