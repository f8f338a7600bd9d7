// rms_norm.cpp — rms_norm: root-mean-square normalisation, optionally fused with a residual add.
// Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- RMSNorm -----------------------------------------------------------------------------------
//   x, out, residual: [n_tokens, dim] F32 | F16 (innermost contiguous);  weight: [dim] F32.
//   residual (optional, present when it has a buffer) is updated in place. Outputs must not
//   overlap inputs (except residual, which is in/out by definition).

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_rms_norm_desc& d) {
  constexpr const char* kName = "rms_norm";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kName)) {
    return error;
  }
  if (d.n_tokens <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s rms_norm: n_tokens and dim must be > 0; got n_tokens=%" PRId64
                              " dim=%" PRId64,
                              plugin, d.n_tokens, d.dim);
  }
  if (!(d.eps >= 0.0f) || !std::isfinite(d.eps)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s rms_norm: eps must be finite and >= 0; got %g", plugin,
                              static_cast<double>(d.eps));
  }
  const bool has_residual = d.residual.buffer != nullptr;
  if (hwinfer_error* error = check_float_dtype(context, d.x, kName, "x")) return error;
  if (hwinfer_error* error = check_float_dtype(context, d.out, kName, "out")) return error;
  if (has_residual) {
    if (hwinfer_error* error = check_float_dtype(context, d.residual, kName, "residual")) {
      return error;
    }
  }
  if (hwinfer_error* error = check_view(
          context, d.x, expect_matrix(kName, "x", d.x.dtype, d.n_tokens, d.dim, false))) {
    return error;
  }
  ViewExpectation weight = expect_view(kName, "weight", HWINFER_DTYPE_F32, "[dim]", {d.dim});
  weight.contiguous = true;
  if (hwinfer_error* error = check_view(context, d.weight, weight)) return error;
  if (hwinfer_error* error = check_view(
          context, d.out, expect_matrix(kName, "out", d.out.dtype, d.n_tokens, d.dim, true))) {
    return error;
  }
  if (has_residual) {
    CheckContext with_buffer = context;  // a residual is present only with its buffer
    with_buffer.require_buffers = true;
    if (hwinfer_error* error = check_view(
            with_buffer, d.residual,
            expect_matrix(kName, "residual", d.residual.dtype, d.n_tokens, d.dim, true))) {
      return error;
    }
  }
  if (views_overlap(d.out, d.x)) return overlap_error(context, kName, "out", "x");
  if (views_overlap(d.out, d.weight)) return overlap_error(context, kName, "out", "weight");
  if (has_residual) {
    if (views_overlap(d.out, d.residual)) return overlap_error(context, kName, "out", "residual");
    if (views_overlap(d.residual, d.x)) return overlap_error(context, kName, "residual", "x");
    if (views_overlap(d.residual, d.weight)) {
      return overlap_error(context, kName, "residual", "weight");
    }
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_RMS_NORM, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// rms_norm: x (+ residual read and written) and weight read, out written; 4 flops per element
// (square, sum, scale, weight) + 1 for the residual add.
KernelCost count_cost(const hwinfer_rms_norm_desc& d, const IntArrayReader& /*read_ints*/) {
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

namespace {

KernelSample RmsNorm() {
  auto d = blank_desc<hwinfer_rms_norm_desc>(HWINFER_KERNEL_RMS_NORM);
  d->n_tokens = kSampleTokens;
  d->dim = kSampleDim;
  d->eps = 1e-5f;
  d->x = d->residual = d->out = sample_view(HWINFER_DTYPE_F32, {kSampleTokens, kSampleDim});
  d->weight = sample_view(HWINFER_DTYPE_F32, {kSampleDim});
  return sample("rms_norm f32 (fused residual)", d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_rms_norm_desc*) { return {RmsNorm()}; }

}  // namespace hwinfer::kit
