// silu_mul.cpp — silu_mul: out = silu(gate) * up.
// Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- SiLU-mul ----------------------------------------------------------------------------------
//   gate, up, out: [n_tokens, dim] F32 | F16 (innermost contiguous); out overlaps neither input.

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_silu_mul_desc& d) {
  constexpr const char* kName = "silu_mul";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kName)) {
    return error;
  }
  if (d.n_tokens <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s silu_mul: n_tokens and dim must be > 0; got n_tokens=%" PRId64
                              " dim=%" PRId64,
                              plugin, d.n_tokens, d.dim);
  }
  if (hwinfer_error* error = check_float_dtype(context, d.gate, kName, "gate")) return error;
  if (hwinfer_error* error = check_float_dtype(context, d.up, kName, "up")) return error;
  if (hwinfer_error* error = check_float_dtype(context, d.out, kName, "out")) return error;
  if (hwinfer_error* error = check_view(
          context, d.gate, expect_matrix(kName, "gate", d.gate.dtype, d.n_tokens, d.dim, false))) {
    return error;
  }
  if (hwinfer_error* error = check_view(
          context, d.up, expect_matrix(kName, "up", d.up.dtype, d.n_tokens, d.dim, false))) {
    return error;
  }
  if (hwinfer_error* error = check_view(
          context, d.out, expect_matrix(kName, "out", d.out.dtype, d.n_tokens, d.dim, true))) {
    return error;
  }
  if (views_overlap(d.out, d.gate)) return overlap_error(context, kName, "out", "gate");
  if (views_overlap(d.out, d.up)) return overlap_error(context, kName, "out", "up");
  return apply_kernel_limits(context, HWINFER_KERNEL_SILU_MUL, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// silu_mul: gate and up read, out written; 5 flops per element (x / (1 + exp(-x)) * up).
KernelCost count_cost(const hwinfer_silu_mul_desc& d, const IntArrayReader& /*read_ints*/) {
  const double values = Positive(d.n_tokens) * Positive(d.dim);
  KernelCost cost;
  cost.bytes_read = DtypeBytes(d.gate.dtype, values) + DtypeBytes(d.up.dtype, values);
  cost.bytes_written = DtypeBytes(d.out.dtype, values);
  cost.flops = 5.0 * values;
  return cost;
}

namespace {

KernelSample SiluMul() {
  auto d = blank_desc<hwinfer_silu_mul_desc>(HWINFER_KERNEL_SILU_MUL);
  d->n_tokens = kSampleTokens;
  d->dim = kSampleDim;
  d->gate = d->up = d->out = sample_view(HWINFER_DTYPE_F32, {kSampleTokens, kSampleDim});
  return sample("silu_mul f32", d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_silu_mul_desc*) { return {SiluMul()}; }

}  // namespace hwinfer::kit
