// kernel_checks.cpp — see kernel_checks.h. Each check: descriptor size, scalar fields, then every
// operand's dtype and shape (view_checks.h). Shapes in the comments use the descriptor's names.
#include "kernel_checks.h"

#include <cinttypes>
#include <cmath>

#include "view_checks.h"

namespace hwinfer::sim {

namespace {

constexpr uint32_t kF32 = HWINFER_DTYPE_F32;
constexpr uint32_t kF16 = HWINFER_DTYPE_F16;
constexpr uint32_t kBF16 = HWINFER_DTYPE_BF16;
constexpr uint32_t kI8 = HWINFER_DTYPE_I8;
constexpr uint32_t kI32 = HWINFER_DTYPE_I32;

#define SIM_RETURN_IF_ERROR(expr)                              \
  do {                                                         \
    if (hwinfer_error* sim_error_ = (expr)) return sim_error_; \
  } while (0)

// The paged pools: k_cache, v_cache [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8, and
// for I8 k_scales, v_scales [num_blocks, n_kv_heads] F32. num_blocks comes from k_cache.
hwinfer_error* check_pools(const hwinfer_device* device, const char* kernel,
                           const hwinfer_tensor_view& k_cache, const hwinfer_tensor_view& v_cache,
                           const hwinfer_tensor_view& k_scales, const hwinfer_tensor_view& v_scales,
                           int64_t num_blocks, int64_t block_size, int64_t n_kv_heads,
                           int64_t head_dim, bool require) {
  SIM_RETURN_IF_ERROR(check_operand(device, k_cache, kernel, "k_cache", {kF16, kI8},
                                    {num_blocks, block_size, n_kv_heads, head_dim}, require));
  SIM_RETURN_IF_ERROR(check_operand(device, v_cache, kernel, "v_cache", {k_cache.dtype},
                                    {num_blocks, block_size, n_kv_heads, head_dim}, require));
  if (k_cache.dtype != kI8) return nullptr;
  SIM_RETURN_IF_ERROR(check_operand(device, k_scales, kernel, "k_scales", {kF32},
                                    {num_blocks, n_kv_heads}, require));
  return check_operand(device, v_scales, kernel, "v_scales", {kF32}, {num_blocks, n_kv_heads},
                       require);
}

}  // namespace

// a: [m, k];  b: [k, n] or [n, k] (b_transposed);  c: [m, n];  each F32 | F16 | BF16
hwinfer_error* check_gemm(const hwinfer_device* device, const hwinfer_gemm_desc& d, bool require) {
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), "gemm"));
  SIM_RETURN_IF_ERROR(check_positive("gemm", "m, n, k", {d.m, d.n, d.k}));
  if (d.b_transposed > 1) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim gemm: b_transposed must be 0 or 1; got %" PRIu32,
                              d.b_transposed);
  }
  SIM_RETURN_IF_ERROR(
      check_operand(device, d.a, "gemm", "a", {kF32, kF16, kBF16}, {d.m, d.k}, require));
  if (d.b_transposed != 0) {
    SIM_RETURN_IF_ERROR(
        check_operand(device, d.b, "gemm", "b", {kF32, kF16, kBF16}, {d.n, d.k}, require));
  } else {
    SIM_RETURN_IF_ERROR(
        check_operand(device, d.b, "gemm", "b", {kF32, kF16, kBF16}, {d.k, d.n}, require));
  }
  return check_operand(device, d.c, "gemm", "c", {kF32, kF16, kBF16}, {d.m, d.n}, require);
}

// x: [m, k] F32;  w: [n, k] Q8_0 | Q4_0;  y: [m, n] F32
hwinfer_error* check_matmul_quantized(const hwinfer_device* device,
                                      const hwinfer_matmul_quantized_desc& d, bool require) {
  const char* kName = "matmul_quantized";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  SIM_RETURN_IF_ERROR(check_positive(kName, "m, n, k", {d.m, d.n, d.k}));
  SIM_RETURN_IF_ERROR(check_operand(device, d.x, kName, "x", {kF32}, {d.m, d.k}, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.w, kName, "w",
                                    {HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0}, {d.n, d.k}, require));
  return check_operand(device, d.y, kName, "y", {kF32}, {d.m, d.n}, require);
}

// q, out: [n_tokens, n_heads, head_dim];  k, v: [n_tokens, n_kv_heads, head_dim]  F32 | F16;
// query_start: [n_seqs + 1] I32;  optional cached prefix: the pools, block_tables
// [n_seqs, max_blocks] I32 and context_lens [n_seqs] I32.
hwinfer_error* check_attention_prefill(const hwinfer_device* device,
                                       const hwinfer_attention_prefill_desc& d, bool require) {
  const char* kName = "attention_prefill";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  SIM_RETURN_IF_ERROR(check_positive(kName, "n_tokens, n_seqs, n_heads, n_kv_heads, head_dim",
                                     {d.n_tokens, d.n_seqs, d.n_heads, d.n_kv_heads, d.head_dim}));
  SIM_RETURN_IF_ERROR(backend::check_heads(kPluginName, kName, d.n_heads, d.n_kv_heads));
  if (d.causal > 1) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim attention_prefill: causal must be 0 or 1; got %" PRIu32,
                              d.causal);
  }
  SIM_RETURN_IF_ERROR(check_operand(device, d.q, kName, "q", {kF32, kF16},
                                    {d.n_tokens, d.n_heads, d.head_dim}, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.k, kName, "k", {kF32, kF16},
                                    {d.n_tokens, d.n_kv_heads, d.head_dim}, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.v, kName, "v", {kF32, kF16},
                                    {d.n_tokens, d.n_kv_heads, d.head_dim}, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.out, kName, "out", {d.q.dtype},
                                    {d.n_tokens, d.n_heads, d.head_dim}, require));
  SIM_RETURN_IF_ERROR(
      check_operand(device, d.query_start, kName, "query_start", {kI32}, {d.n_seqs + 1}, require));
  const bool has_prefix = d.k_cache.buffer != nullptr || (!require && d.k_cache.rank != 0);
  if (!has_prefix) return nullptr;
  SIM_RETURN_IF_ERROR(check_positive(kName, "block_size (with a cached prefix)", {d.block_size}));
  const int64_t num_blocks = d.k_cache.rank == 4 ? d.k_cache.shape[0] : 0;
  const int64_t max_blocks = d.block_tables.rank == 2 ? d.block_tables.shape[1] : 0;
  SIM_RETURN_IF_ERROR(check_positive(kName, "k_cache num_blocks, block_tables max_blocks",
                                     {num_blocks, max_blocks}));
  SIM_RETURN_IF_ERROR(check_pools(device, kName, d.k_cache, d.v_cache, d.k_scales, d.v_scales,
                                  num_blocks, d.block_size, d.n_kv_heads, d.head_dim, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.block_tables, kName, "block_tables", {kI32},
                                    {d.n_seqs, max_blocks}, require));
  return check_operand(device, d.context_lens, kName, "context_lens", {kI32}, {d.n_seqs}, require);
}

// q, out: [n_seqs, n_heads, head_dim] F32 | F16;  pools;  block_tables [n_seqs,
// max_blocks_per_seq] I32;  context_lens [n_seqs] I32
hwinfer_error* check_attention_decode_paged(const hwinfer_device* device,
                                            const hwinfer_attention_decode_paged_desc& d,
                                            bool require) {
  const char* kName = "attention_decode_paged";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  SIM_RETURN_IF_ERROR(check_positive(
      kName, "n_seqs, n_heads, n_kv_heads, head_dim, block_size, max_blocks_per_seq",
      {d.n_seqs, d.n_heads, d.n_kv_heads, d.head_dim, d.block_size, d.max_blocks_per_seq}));
  SIM_RETURN_IF_ERROR(backend::check_heads(kPluginName, kName, d.n_heads, d.n_kv_heads));
  SIM_RETURN_IF_ERROR(check_operand(device, d.q, kName, "q", {kF32, kF16},
                                    {d.n_seqs, d.n_heads, d.head_dim}, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.out, kName, "out", {d.q.dtype},
                                    {d.n_seqs, d.n_heads, d.head_dim}, require));
  const int64_t num_blocks = d.k_cache.rank == 4 ? d.k_cache.shape[0] : 0;
  SIM_RETURN_IF_ERROR(check_positive(kName, "k_cache num_blocks", {num_blocks}));
  SIM_RETURN_IF_ERROR(check_pools(device, kName, d.k_cache, d.v_cache, d.k_scales, d.v_scales,
                                  num_blocks, d.block_size, d.n_kv_heads, d.head_dim, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.block_tables, kName, "block_tables", {kI32},
                                    {d.n_seqs, d.max_blocks_per_seq}, require));
  return check_operand(device, d.context_lens, kName, "context_lens", {kI32}, {d.n_seqs}, require);
}

// k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16;  slot_mapping: [n_tokens] I32;  pools
hwinfer_error* check_kv_append(const hwinfer_device* device, const hwinfer_kv_append_desc& d,
                               bool require) {
  const char* kName = "kv_append";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  SIM_RETURN_IF_ERROR(
      check_positive(kName, "n_tokens, n_kv_heads, head_dim, block_size, num_blocks",
                     {d.n_tokens, d.n_kv_heads, d.head_dim, d.block_size, d.num_blocks}));
  SIM_RETURN_IF_ERROR(check_operand(device, d.k, kName, "k", {kF32, kF16},
                                    {d.n_tokens, d.n_kv_heads, d.head_dim}, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.v, kName, "v", {kF32, kF16},
                                    {d.n_tokens, d.n_kv_heads, d.head_dim}, require));
  SIM_RETURN_IF_ERROR(
      check_operand(device, d.slot_mapping, kName, "slot_mapping", {kI32}, {d.n_tokens}, require));
  return check_pools(device, kName, d.k_cache, d.v_cache, d.k_scales, d.v_scales, d.num_blocks,
                     d.block_size, d.n_kv_heads, d.head_dim, require);
}

// x, out, residual (optional): [n_tokens, dim] F32 | F16;  weight: [dim] F32
hwinfer_error* check_rms_norm(const hwinfer_device* device, const hwinfer_rms_norm_desc& d,
                              bool require) {
  const char* kName = "rms_norm";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  SIM_RETURN_IF_ERROR(check_positive(kName, "n_tokens, dim", {d.n_tokens, d.dim}));
  if (!std::isfinite(d.eps) || d.eps < 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim rms_norm: eps must be finite and >= 0; got %g",
                              static_cast<double>(d.eps));
  }
  SIM_RETURN_IF_ERROR(
      check_operand(device, d.x, kName, "x", {kF32, kF16}, {d.n_tokens, d.dim}, require));
  if (d.residual.buffer != nullptr) {
    SIM_RETURN_IF_ERROR(check_operand(device, d.residual, kName, "residual", {kF32, kF16},
                                      {d.n_tokens, d.dim}, require));
  }
  SIM_RETURN_IF_ERROR(check_operand(device, d.weight, kName, "weight", {kF32}, {d.dim}, require));
  return check_operand(device, d.out, kName, "out", {kF32, kF16}, {d.n_tokens, d.dim}, require);
}

// q: [n_tokens, n_heads, head_dim], k (optional): [n_tokens, n_kv_heads, head_dim] F32 | F16;
// positions: [n_tokens] I32
hwinfer_error* check_rope(const hwinfer_device* device, const hwinfer_rope_desc& d, bool require) {
  const char* kName = "rope";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  const bool has_k = d.k.buffer != nullptr || (!require && d.k.rank != 0);
  SIM_RETURN_IF_ERROR(
      check_positive(kName, "n_tokens, n_heads, head_dim", {d.n_tokens, d.n_heads, d.head_dim}));
  if (has_k) SIM_RETURN_IF_ERROR(check_positive(kName, "n_kv_heads (with k)", {d.n_kv_heads}));
  if (d.head_dim % 2 != 0 || d.rotary_dim % 2 != 0 || d.rotary_dim < 2 ||
      d.rotary_dim > d.head_dim) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim rope: head_dim must be even and rotary_dim even in [2, "
                              "head_dim]; got head_dim=%" PRId64 " rotary_dim=%" PRId64,
                              d.head_dim, d.rotary_dim);
  }
  if (!std::isfinite(d.theta_base) || d.theta_base <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim rope: theta_base must be finite and > 0; got %g",
                              static_cast<double>(d.theta_base));
  }
  if (d.mode != HWINFER_ROPE_NORMAL && d.mode != HWINFER_ROPE_NEOX) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "sim rope: unknown mode %" PRIu32 " (NORMAL=0, NEOX=1)", d.mode);
  }
  SIM_RETURN_IF_ERROR(check_operand(device, d.q, kName, "q", {kF32, kF16},
                                    {d.n_tokens, d.n_heads, d.head_dim}, require));
  if (has_k) {
    SIM_RETURN_IF_ERROR(check_operand(device, d.k, kName, "k", {kF32, kF16},
                                      {d.n_tokens, d.n_kv_heads, d.head_dim}, require));
  }
  return check_operand(device, d.positions, kName, "positions", {kI32}, {d.n_tokens}, require);
}

// gate, up, out: [n_tokens, dim] F32 | F16
hwinfer_error* check_silu_mul(const hwinfer_device* device, const hwinfer_silu_mul_desc& d,
                              bool require) {
  const char* kName = "silu_mul";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  SIM_RETURN_IF_ERROR(check_positive(kName, "n_tokens, dim", {d.n_tokens, d.dim}));
  SIM_RETURN_IF_ERROR(
      check_operand(device, d.gate, kName, "gate", {kF32, kF16}, {d.n_tokens, d.dim}, require));
  SIM_RETURN_IF_ERROR(
      check_operand(device, d.up, kName, "up", {kF32, kF16}, {d.n_tokens, d.dim}, require));
  return check_operand(device, d.out, kName, "out", {kF32, kF16}, {d.n_tokens, d.dim}, require);
}

// table: [vocab, dim] F32 | F16 | BF16 | Q8_0 | Q4_0;  ids: [n_tokens] I32;  out: [n_tokens, dim]
// F32
hwinfer_error* check_embedding(const hwinfer_device* device, const hwinfer_embedding_desc& d,
                               bool require) {
  const char* kName = "embedding";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  SIM_RETURN_IF_ERROR(check_positive(kName, "n_tokens, vocab, dim", {d.n_tokens, d.vocab, d.dim}));
  SIM_RETURN_IF_ERROR(check_operand(device, d.table, kName, "table",
                                    {kF32, kF16, kBF16, HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0},
                                    {d.vocab, d.dim}, require));
  SIM_RETURN_IF_ERROR(check_operand(device, d.ids, kName, "ids", {kI32}, {d.n_tokens}, require));
  return check_operand(device, d.out, kName, "out", {kF32}, {d.n_tokens, d.dim}, require);
}

// src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8 (READ)
hwinfer_error* check_bandwidth_probe(const hwinfer_device* device,
                                     const hwinfer_bandwidth_probe_desc& d, bool require) {
  const char* kName = "bandwidth_probe";
  SIM_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  if (d.mode != HWINFER_PROBE_READ && d.mode != HWINFER_PROBE_COPY &&
      d.mode != HWINFER_PROBE_WRITE) {
    return hwinfer_make_error(
        HWINFER_STATUS_UNSUPPORTED,
        "sim bandwidth_probe: unknown mode %" PRIu32 " (READ=0, COPY=1, WRITE=2)", d.mode);
  }
  if (d.size_bytes == 0 || d.size_bytes > static_cast<uint64_t>(INT64_MAX)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim bandwidth_probe: size_bytes must be in [1, 2^63); got %" PRIu64,
                              d.size_bytes);
  }
  const auto size = static_cast<int64_t>(d.size_bytes);
  if (d.mode != HWINFER_PROBE_WRITE) {
    SIM_RETURN_IF_ERROR(check_operand(device, d.src, kName, "src", {kI8}, {size}, require));
  }
  if (d.mode != HWINFER_PROBE_READ) {
    SIM_RETURN_IF_ERROR(check_operand(device, d.dst, kName, "dst", {kI8}, {size}, require));
  }
  if (d.mode != HWINFER_PROBE_READ) return nullptr;
  const int64_t sink_bytes = d.sink.rank == 1 ? d.sink.shape[0] : 0;
  if (sink_bytes < 64) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim bandwidth_probe: sink must be [>= 64] I8; got rank %" PRIu32
                              " with %" PRId64 " bytes",
                              d.sink.rank, sink_bytes);
  }
  return check_operand(device, d.sink, kName, "sink", {kI8}, {sink_bytes}, require);
}

}  // namespace hwinfer::sim
