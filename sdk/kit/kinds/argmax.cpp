// argmax.cpp — argmax (ABI 1.3): the index of each row's largest value, greedy sampling on the
// device. Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- argmax ------------------------------------------------------------------------------------
//   x: [n_rows, n_cols] F32 | F16 (innermost contiguous);  ids: [n_rows] I32 (output, any
//   element-aligned stride), overlapping x not. n_cols fits an I32 index.

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_argmax_desc& d) {
  constexpr const char* kName = "argmax";
  const char* plugin = context.plugin_name;
  HWINFER_KIT_RETURN_IF_ERROR(check_desc_size(plugin, d.struct_size, sizeof(d), kName));
  if (d.n_rows <= 0 || d.n_cols <= 0 || d.n_cols > INT32_MAX) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s argmax: n_rows and n_cols must be > 0 and n_cols <= %" PRId32
                              "; got n_rows=%" PRId64 " n_cols=%" PRId64,
                              plugin, INT32_MAX, d.n_rows, d.n_cols);
  }
  HWINFER_KIT_RETURN_IF_ERROR(check_float_dtype(context, d.x, kName, "x"));
  ViewExpectation x = expect_view(kName, "x", d.x.dtype, "[n_rows, n_cols]", {d.n_rows, d.n_cols});
  x.contiguous = true;
  HWINFER_KIT_RETURN_IF_ERROR(check_view(context, d.x, x));
  ViewExpectation ids = expect_view(kName, "ids", HWINFER_DTYPE_I32, "[n_rows]", {d.n_rows});
  ids.is_output = true;
  HWINFER_KIT_RETURN_IF_ERROR(check_view(context, d.ids, ids));
  if (views_overlap(d.ids, d.x)) return overlap_error(context, kName, "ids", "x");
  return apply_kernel_limits(context, HWINFER_KERNEL_ARGMAX, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// argmax: x read, ids written; one comparison per value.
KernelCost count_cost(const hwinfer_argmax_desc& d, const IntArrayReader& /*read_ints*/) {
  const double rows = Positive(d.n_rows);
  KernelCost cost;
  cost.bytes_read = DtypeBytes(d.x.dtype, rows * Positive(d.n_cols));
  cost.bytes_written = DtypeBytes(HWINFER_DTYPE_I32, rows);
  cost.flops = rows * Positive(d.n_cols);
  return cost;
}

namespace {

KernelSample Argmax(uint32_t dtype, const char* name) {
  auto d = blank_desc<hwinfer_argmax_desc>(HWINFER_KERNEL_ARGMAX);
  d->n_rows = kSampleTokens;
  d->n_cols = 32000;  // a vocabulary
  d->x = sample_view(dtype, {kSampleTokens, 32000});
  d->ids = sample_view(HWINFER_DTYPE_I32, {kSampleTokens});
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_argmax_desc*) {
  return {Argmax(HWINFER_DTYPE_F32, "argmax f32"), Argmax(HWINFER_DTYPE_F16, "argmax f16")};
}

}  // namespace hwinfer::kit
