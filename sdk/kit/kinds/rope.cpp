// rope.cpp — rope: rotary position embedding of q and k, in place.
// Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- RoPE --------------------------------------------------------------------------------------
//   q: [n_tokens, n_heads, head_dim], k (optional): [n_tokens, n_kv_heads, head_dim] F32 | F16
//   (innermost contiguous, outer strides free; rotated in place);  positions: [n_tokens] I32.
//   NORMAL and NEOX pairing; rotary_dim even and <= head_dim (even). q, k and positions must not
//   overlap each other.

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_rope_desc& d) {
  constexpr const char* kName = "rope";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kName)) {
    return error;
  }
  if (d.mode != HWINFER_ROPE_NORMAL && d.mode != HWINFER_ROPE_NEOX) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s rope: unknown mode %" PRIu32
                              " (the %s backend has NORMAL=0, "
                              "NEOX=1)",
                              plugin, d.mode, plugin);
  }
  const bool has_k = d.k.buffer != nullptr || (!context.require_buffers && d.k.rank != 0);
  if (d.n_tokens <= 0 || d.n_heads <= 0 || d.head_dim <= 0 || (has_k && d.n_kv_heads <= 0)) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "%s rope: n_tokens, n_heads, head_dim (and n_kv_heads with k) must be > 0; got "
        "n_tokens=%" PRId64 " n_heads=%" PRId64 " n_kv_heads=%" PRId64 " head_dim=%" PRId64,
        plugin, d.n_tokens, d.n_heads, d.n_kv_heads, d.head_dim);
  }
  if (d.head_dim % 2 != 0 || d.rotary_dim <= 0 || d.rotary_dim % 2 != 0 ||
      d.rotary_dim > d.head_dim) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s rope: head_dim must be even and rotary_dim even in [2, "
                              "head_dim]; got head_dim=%" PRId64 " rotary_dim=%" PRId64,
                              plugin, d.head_dim, d.rotary_dim);
  }
  if (!(d.theta_base > 0.0f) || !std::isfinite(d.theta_base)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s rope: theta_base must be finite and > 0; got %g", plugin,
                              static_cast<double>(d.theta_base));
  }
  if (hwinfer_error* error = check_dtype_in(context, d.q, kName, "q",
                                            {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
    return error;
  }
  if (has_k) {
    if (hwinfer_error* error = check_dtype_in(
            context, d.k, kName, "k", {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
      return error;
    }
  }
  if (hwinfer_error* error =
          check_dtype_in(context, d.positions, kName, "positions", {HWINFER_DTYPE_I32}, "I32")) {
    return error;
  }
  ViewExpectation q = expect_view(kName, "q", d.q.dtype, "[n_tokens, n_heads, head_dim]",
                                  {d.n_tokens, d.n_heads, d.head_dim});
  q.contiguous = q.is_output = true;
  if (hwinfer_error* error = check_view(context, d.q, q)) return error;
  if (has_k) {
    ViewExpectation k = expect_view(kName, "k", d.k.dtype, "[n_tokens, n_kv_heads, head_dim]",
                                    {d.n_tokens, d.n_kv_heads, d.head_dim});
    k.contiguous = k.is_output = true;
    if (hwinfer_error* error = check_view(context, d.k, k)) return error;
  }
  if (hwinfer_error* error =
          check_view(context, d.positions, expect_token_vector(kName, "positions", d.n_tokens))) {
    return error;
  }
  if (views_overlap(d.q, d.positions)) return overlap_error(context, kName, "q", "positions");
  if (has_k) {
    if (views_overlap(d.q, d.k)) return overlap_error(context, kName, "q", "k");
    if (views_overlap(d.k, d.positions)) return overlap_error(context, kName, "k", "positions");
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_ROPE, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// rope (in place): q and k (when given) read and written, positions read; 6 flops per rotated
// pair (4 multiplies, 2 adds), rotary_dim / 2 pairs per head.
KernelCost count_cost(const hwinfer_rope_desc& d, const IntArrayReader& /*read_ints*/) {
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

namespace {

KernelSample Rope(uint32_t mode, const char* name) {
  auto d = blank_desc<hwinfer_rope_desc>(HWINFER_KERNEL_ROPE);
  d->n_tokens = kSampleTokens;
  d->n_heads = kSampleHeads;
  d->n_kv_heads = kSampleKvHeads;
  d->head_dim = d->rotary_dim = kSampleHeadDim;
  d->theta_base = 10000.0f;
  d->mode = mode;
  d->q = sample_view(HWINFER_DTYPE_F32, {kSampleTokens, kSampleHeads, kSampleHeadDim});
  d->k = sample_view(HWINFER_DTYPE_F32, {kSampleTokens, kSampleKvHeads, kSampleHeadDim});
  d->positions = sample_view(HWINFER_DTYPE_I32, {kSampleTokens});
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_rope_desc*) {
  return {Rope(HWINFER_ROPE_NORMAL, "rope normal f32"), Rope(HWINFER_ROPE_NEOX, "rope neox f32")};
}

}  // namespace hwinfer::kit
