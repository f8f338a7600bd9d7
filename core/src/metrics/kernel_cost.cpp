// kernel_cost.cpp — CountKernelCost: the bytes and FLOPs of one kernel descriptor (see
// hwinfer/kernel_cost.h for the counting rules). Reads only the descriptor's scalar fields, the
// operand dtypes, and (through |read_ints|) the int32 context lengths / query starts attention
// needs. Must never fail, allocate device memory or look at tensor contents otherwise.
//
// Sizes: plain dtypes by element (F32/I32 4, F16/BF16 2, I8 1); quantized dtypes by block
// (Q8_0 34 bytes and Q4_0 18 bytes per 32 values, plugin.h). All counts are doubles, so huge
// shapes cannot overflow.
#include "hwinfer/kernel_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hwinfer/plugin_support.h"

namespace hwinfer {

namespace {

// Bytes of |values| values of |dtype| (quantized: whole blocks along the innermost dimension).
// Unknown dtypes count 0.
double DtypeBytes(uint32_t dtype, double values) {
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

double Positive(int64_t value) { return value > 0 ? static_cast<double>(value) : 0.0; }

template <typename Desc>
const Desc& As(const hwinfer_kernel_desc& desc) {
  return reinterpret_cast<const Desc&>(desc);
}

// The int32 values of |view| through |read_ints|, when it has them and there are at least
// |min_count|.
bool ReadInts(const IntArrayReader& read_ints, const hwinfer_tensor_view& view, size_t min_count,
              std::vector<int32_t>* out) {
  if (!read_ints) return false;
  out->clear();
  return read_ints(view, out) && out->size() >= min_count;
}

// The narrower of a and b's float dtypes: where either operand is F16 or BF16 the product runs
// at that precision's peak; F32 only when both are F32.
uint32_t GemmComputeDtype(uint32_t a, uint32_t b) {
  if (a == HWINFER_DTYPE_BF16 || b == HWINFER_DTYPE_BF16) return HWINFER_DTYPE_BF16;
  if (a == HWINFER_DTYPE_F16 || b == HWINFER_DTYPE_F16) return HWINFER_DTYPE_F16;
  return HWINFER_DTYPE_F32;
}

// gemm: c[m,n] = alpha * a[m,k] x B[k,n] + beta * c.
KernelCost Count(const hwinfer_gemm_desc& d, const IntArrayReader& /*read_ints*/) {
  const double m = Positive(d.m), n = Positive(d.n), k = Positive(d.k);
  KernelCost cost;
  cost.flops = 2.0 * m * n * k;
  cost.bytes_read = DtypeBytes(d.a.dtype, m * k) + DtypeBytes(d.b.dtype, k * n);
  if (d.beta != 0.0f) cost.bytes_read += DtypeBytes(d.c.dtype, m * n);
  cost.bytes_written = DtypeBytes(d.c.dtype, m * n);
  cost.compute_dtype = GemmComputeDtype(d.a.dtype, d.b.dtype);
  return cost;
}

// matmul_quantized: y[m,n] F32 = x[m,k] F32 x w[n,k] (Q8_0 | Q4_0 blocks).
KernelCost Count(const hwinfer_matmul_quantized_desc& d, const IntArrayReader& /*read_ints*/) {
  const double m = Positive(d.m), n = Positive(d.n), k = Positive(d.k);
  KernelCost cost;
  cost.flops = 2.0 * m * n * k;
  cost.bytes_read = DtypeBytes(HWINFER_DTYPE_F32, m * k) + DtypeBytes(d.w.dtype, n * k);
  cost.bytes_written = DtypeBytes(HWINFER_DTYPE_F32, m * n);
  cost.compute_dtype = HWINFER_DTYPE_I8;
  return cost;
}

// K and V bytes of |tokens| cached tokens spread over |blocks| blocks: rows of n_kv_heads x
// head_dim in the pool dtype, plus one F32 scale per (block, head) for each I8 pool.
double PagedKvReadBytes(uint32_t pool_dtype, double tokens, double blocks, double n_kv_heads,
                        double head_dim) {
  double bytes = 2.0 * DtypeBytes(pool_dtype, tokens * n_kv_heads * head_dim);
  if (pool_dtype == HWINFER_DTYPE_I8) bytes += 2.0 * 4.0 * blocks * n_kv_heads;
  return bytes;
}

double CeilDiv(double a, double b) { return b > 0 ? std::ceil(a / b) : 0.0; }

// attention_decode_paged: one query per sequence over context_lens[s] cached tokens.
KernelCost Count(const hwinfer_attention_decode_paged_desc& d, const IntArrayReader& read_ints) {
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

// (query, key) pairs of one sequence with |n| new tokens after a cached prefix of |prefix|:
// causal: new token i (1-based) sees prefix + i keys; full: every new token sees prefix + n.
double AttentionPairs(double n, double prefix, bool causal) {
  return causal ? n * prefix + n * (n + 1) / 2 : n * (prefix + n);
}

// attention_prefill: the new tokens of n_seqs sequences (query_start), each after an optional
// cached prefix (context_lens) when k_cache is given.
KernelCost Count(const hwinfer_attention_prefill_desc& d, const IntArrayReader& read_ints) {
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

// kv_append: n_tokens rows of K and V read, the same rows written into the pools (pool dtype).
KernelCost Count(const hwinfer_kv_append_desc& d, const IntArrayReader& /*read_ints*/) {
  const double values = Positive(d.n_tokens) * Positive(d.n_kv_heads) * Positive(d.head_dim);
  KernelCost cost;
  cost.bytes_read = DtypeBytes(d.k.dtype, values) + DtypeBytes(d.v.dtype, values);
  cost.bytes_written = DtypeBytes(d.k_cache.dtype, values) + DtypeBytes(d.v_cache.dtype, values);
  return cost;
}

// rms_norm: x (+ residual read and written) and weight read, out written; 4 flops per element
// (square, sum, scale, weight) + 1 for the residual add.
KernelCost Count(const hwinfer_rms_norm_desc& d, const IntArrayReader& /*read_ints*/) {
  const double dim = Positive(d.dim), values = Positive(d.n_tokens) * dim;
  const bool fused = d.residual.buffer != nullptr;
  KernelCost cost;
  cost.bytes_read = DtypeBytes(d.x.dtype, values) + DtypeBytes(HWINFER_DTYPE_F32, dim);
  cost.bytes_written = DtypeBytes(d.out.dtype, values);
  if (fused) {
    cost.bytes_read += DtypeBytes(d.residual.dtype, values);
    cost.bytes_written += DtypeBytes(d.residual.dtype, values);
  }
  cost.flops = (fused ? 5.0 : 4.0) * values;
  return cost;
}

// rope (in place): q and k (when given) read and written, positions read; 6 flops per rotated
// pair (4 multiplies, 2 adds), rotary_dim / 2 pairs per head.
KernelCost Count(const hwinfer_rope_desc& d, const IntArrayReader& /*read_ints*/) {
  const double n_tokens = Positive(d.n_tokens), head_dim = Positive(d.head_dim);
  const double heads = Positive(d.n_heads) + (d.k.buffer != nullptr ? Positive(d.n_kv_heads) : 0);
  const double q_values = n_tokens * Positive(d.n_heads) * head_dim;
  const double k_values =
      d.k.buffer != nullptr ? n_tokens * Positive(d.n_kv_heads) * head_dim : 0.0;
  const double qk_bytes = DtypeBytes(d.q.dtype, q_values) + DtypeBytes(d.k.dtype, k_values);
  KernelCost cost;
  cost.bytes_read = qk_bytes + DtypeBytes(HWINFER_DTYPE_I32, n_tokens);
  cost.bytes_written = qk_bytes;
  cost.flops = 3.0 * Positive(d.rotary_dim) * heads * n_tokens;
  return cost;
}

// rope_kv_append: what its two halves count, less the k and v round trip the fusion saves
// (the rotated k is not read back for the append).
KernelCost Count(const hwinfer_rope_kv_append_desc& d, const IntArrayReader& read_ints) {
  hwinfer_rope_desc rope;
  hwinfer_kv_append_desc append;
  hwinfer_split_rope_kv_append(&d, &rope, &append);
  KernelCost cost = Count(rope, read_ints);
  const KernelCost appended = Count(append, read_ints);
  cost.bytes_read +=
      appended.bytes_read -
      DtypeBytes(d.k.dtype, Positive(d.n_tokens) * Positive(d.n_kv_heads) * Positive(d.head_dim));
  cost.bytes_written += appended.bytes_written;
  return cost;
}

// silu_mul: gate and up read, out written; 5 flops per element (x / (1 + exp(-x)) * up).
KernelCost Count(const hwinfer_silu_mul_desc& d, const IntArrayReader& /*read_ints*/) {
  const double values = Positive(d.n_tokens) * Positive(d.dim);
  KernelCost cost;
  cost.bytes_read = DtypeBytes(d.gate.dtype, values) + DtypeBytes(d.up.dtype, values);
  cost.bytes_written = DtypeBytes(d.out.dtype, values);
  cost.flops = 5.0 * values;
  return cost;
}

// embedding: ids and the n_tokens looked-up table rows read, F32 rows written; no flops.
KernelCost Count(const hwinfer_embedding_desc& d, const IntArrayReader& /*read_ints*/) {
  const double n_tokens = Positive(d.n_tokens), values = n_tokens * Positive(d.dim);
  KernelCost cost;
  cost.bytes_read = DtypeBytes(HWINFER_DTYPE_I32, n_tokens) + DtypeBytes(d.table.dtype, values);
  cost.bytes_written = DtypeBytes(HWINFER_DTYPE_F32, values);
  return cost;
}

// bandwidth_probe: size x iterations per direction the mode moves; no flops.
KernelCost Count(const hwinfer_bandwidth_probe_desc& d, const IntArrayReader& /*read_ints*/) {
  const double moved = static_cast<double>(d.size_bytes) * d.iterations;
  KernelCost cost;
  if (d.mode == HWINFER_PROBE_READ || d.mode == HWINFER_PROBE_COPY) cost.bytes_read = moved;
  if (d.mode == HWINFER_PROBE_WRITE || d.mode == HWINFER_PROBE_COPY) cost.bytes_written = moved;
  return cost;
}

// True when |desc| is at least as large as |Desc| (a short descriptor counts zero).
template <typename Desc>
bool Fits(const hwinfer_kernel_desc& desc) {
  return desc.struct_size >= sizeof(Desc);
}

// |desc| counted as its kind's descriptor |Desc| by that kind's Count overload; zero when |desc|
// is too short to be one.
template <typename Desc>
KernelCost CountAs(const hwinfer_kernel_desc& desc, const IntArrayReader& read_ints) {
  return Fits<Desc>(desc) ? Count(As<Desc>(desc), read_ints) : KernelCost{};
}

}  // namespace

KernelCost CountKernelCost(const hwinfer_kernel_desc& desc, const IntArrayReader& read_ints) {
  switch (desc.kind) {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  case HWINFER_KERNEL_##KIND:                                  \
    return CountAs<descriptor>(desc, read_ints);
#include "hwinfer/kernel_kinds.def"
    default:
      return KernelCost{};
  }
}

namespace {

// Index into CostTotals::flops_by_dtype: f32, f16, bf16, int8.
int DtypeSlot(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F16:
      return 1;
    case HWINFER_DTYPE_BF16:
      return 2;
    case HWINFER_DTYPE_I8:
      return 3;
    default:
      return 0;
  }
}

}  // namespace

void CostTotals::Add(const KernelCost& cost) {
  bytes += cost.bytes();
  flops += cost.flops;
  flops_by_dtype[DtypeSlot(cost.compute_dtype)] += cost.flops;
}

uint32_t CostTotals::compute_dtype() const {
  constexpr uint32_t kDtypes[4] = {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16,
                                   HWINFER_DTYPE_I8};
  int best = 0;
  for (int i = 1; i < 4; ++i) {
    if (flops_by_dtype[i] > flops_by_dtype[best]) best = i;
  }
  return kDtypes[best];
}

}  // namespace hwinfer
