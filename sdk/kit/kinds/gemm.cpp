// gemm.cpp — gemm: c = alpha * a x b + beta * c in F32, F16 or BF16.
// Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- GEMM --------------------------------------------------------------------------------------
//   a: [m, k];  b: [k, n] (or [n, k] when b_transposed);  c: [m, n];  each F32, F16 or BF16
// Any element-aligned strides (b transposed is just other strides); c must not overlap itself.

namespace {

hwinfer_error* check_gemm_dtype(const CheckContext& context, uint32_t dtype, const char* operand) {
  if (dtype == HWINFER_DTYPE_F32 || dtype == HWINFER_DTYPE_F16 || dtype == HWINFER_DTYPE_BF16) {
    return nullptr;
  }
  if (dtype_is_known(dtype)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s gemm: operand %s has dtype %s; gemm takes F32, F16 or BF16",
                              context.plugin_name, operand, dtype_name(dtype).c_str());
  }
  return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED, "%s gemm: operand %s has unknown %s",
                            context.plugin_name, operand, dtype_name(dtype).c_str());
}

}  // namespace

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_gemm_desc& d) {
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), "gemm")) {
    return error;
  }
  if (d.m <= 0 || d.n <= 0 || d.k <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s gemm: m, n and k must be > 0; got m=%" PRId64 " n=%" PRId64
                              " k=%" PRId64,
                              plugin, d.m, d.n, d.k);
  }
  if (d.b_transposed > 1) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s gemm: b_transposed must be 0 or 1; got %" PRIu32, plugin,
                              d.b_transposed);
  }
  const struct {
    const hwinfer_tensor_view* view;
    const char* name;
  } operands[] = {{&d.a, "a"}, {&d.b, "b"}, {&d.c, "c"}};
  for (const auto& operand : operands) {
    if (operand.view->struct_size < sizeof(hwinfer_tensor_view)) break;  // check_view reports it
    if (hwinfer_error* error = check_gemm_dtype(context, operand.view->dtype, operand.name)) {
      return error;
    }
  }
  // The dtypes are each operand's own (checked above; check_view reports a short view).
  const ViewExpectation a = expect_view("gemm", "a", d.a.dtype, "[m, k]", {d.m, d.k});
  const ViewExpectation b = d.b_transposed != 0
                                ? expect_view("gemm", "b", d.b.dtype, "[n, k]", {d.n, d.k})
                                : expect_view("gemm", "b", d.b.dtype, "[k, n]", {d.k, d.n});
  ViewExpectation c = expect_view("gemm", "c", d.c.dtype, "[m, n]", {d.m, d.n});
  c.is_output = true;
  if (hwinfer_error* error = check_view(context, d.a, a)) return error;
  if (hwinfer_error* error = check_view(context, d.b, b)) return error;
  if (hwinfer_error* error = check_view(context, d.c, c)) return error;
  return apply_kernel_limits(context, HWINFER_KERNEL_GEMM, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// The narrower of a and b's float dtypes: where either operand is F16 or BF16 the product runs
// at that precision's peak; F32 only when both are F32.
uint32_t GemmComputeDtype(uint32_t a, uint32_t b) {
  if (a == HWINFER_DTYPE_BF16 || b == HWINFER_DTYPE_BF16) return HWINFER_DTYPE_BF16;
  if (a == HWINFER_DTYPE_F16 || b == HWINFER_DTYPE_F16) return HWINFER_DTYPE_F16;
  return HWINFER_DTYPE_F32;
}

// gemm: c[m,n] = alpha * a[m,k] x B[k,n] + beta * c.
KernelCost count_cost(const hwinfer_gemm_desc& d, const IntArrayReader& /*read_ints*/) {
  const double m = Positive(d.m), n = Positive(d.n), k = Positive(d.k);
  KernelCost cost;
  cost.flops = 2.0 * m * n * k;
  cost.bytes_read = DtypeBytes(d.a.dtype, m * k) + DtypeBytes(d.b.dtype, k * n);
  if (d.beta != 0.0f) cost.bytes_read += DtypeBytes(d.c.dtype, m * n);
  cost.bytes_written = DtypeBytes(d.c.dtype, m * n);
  cost.compute_dtype = GemmComputeDtype(d.a.dtype, d.b.dtype);
  return cost;
}

namespace {

KernelSample Gemm(uint32_t dtype, const char* name) {
  auto d = blank_desc<hwinfer_gemm_desc>(HWINFER_KERNEL_GEMM);
  d->m = d->n = d->k = kSampleDim;
  d->b_transposed = 1;
  d->alpha = 1.0f;
  d->a = d->b = d->c = sample_view(dtype, {kSampleDim, kSampleDim});
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_gemm_desc*) {
  return {Gemm(HWINFER_DTYPE_F32, "gemm f32"), Gemm(HWINFER_DTYPE_F16, "gemm f16"),
          Gemm(HWINFER_DTYPE_BF16, "gemm bf16")};
}

}  // namespace hwinfer::kit
