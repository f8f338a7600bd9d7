// matmul_quantized.cpp — matmul_quantized: y = x x w^T with GGUF block-quantized weights.
// Everything a kernel kind needs besides its kernels, in one file (docs/plugin-kit.md): its
// descriptor check (the one every backend's enqueue slot and kernel_query run), its cost (the
// bytes and FLOPs the core counts for MBU and MFU) and its samples (what `hwinfer plugin check`
// asks a device about). Listed in hwinfer/kernel_kinds.def; found by the kit's CMake glob.
#include "kind_support.h"

namespace hwinfer::backend {

// ---- quantized matmul --------------------------------------------------------------------------
//   x: [m, k] F32;  w: [n, k] Q8_0 | Q4_0 (blocks along k, k % 32 == 0);  y: [m, n] F32
// x and y: any element-aligned strides (y must not overlap itself); w: any non-negative row stride.

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_matmul_quantized_desc& d) {
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error =
          check_desc_size(plugin, d.struct_size, sizeof(d), "matmul_quantized")) {
    return error;
  }
  const bool has_w = d.w.struct_size >= sizeof(hwinfer_tensor_view);
  if (has_w) {
    if (hwinfer_error* error = check_weight_dtype(context, "matmul_quantized", "w", d.w.dtype)) {
      return error;
    }
  }
  const int64_t block = has_w ? hwinfer_dtype_block_values(d.w.dtype) : HWINFER_QK8_0;
  if (d.m <= 0 || d.n <= 0 || d.k <= 0 || d.k % block != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s matmul_quantized: m, n and k must be > 0 and k a multiple of "
                              "the %" PRId64 "-value block; got m=%" PRId64 " n=%" PRId64
                              " k=%" PRId64,
                              plugin, block, d.m, d.n, d.k);
  }
  const ViewExpectation x =
      expect_view("matmul_quantized", "x", HWINFER_DTYPE_F32, "[m, k]", {d.m, d.k});
  const ViewExpectation w = expect_view("matmul_quantized", "w", d.w.dtype, "[n, k]", {d.n, d.k});
  ViewExpectation y = expect_view("matmul_quantized", "y", HWINFER_DTYPE_F32, "[m, n]", {d.m, d.n});
  y.is_output = true;
  if (hwinfer_error* error = check_view(context, d.x, x)) return error;
  if (hwinfer_error* error = check_block_view(context, d.w, w)) return error;
  if (hwinfer_error* error = check_view(context, d.y, y)) return error;
  return apply_kernel_limits(context, HWINFER_KERNEL_MATMUL_QUANTIZED, &d);
}

}  // namespace hwinfer::backend

namespace hwinfer::kit {

// matmul_quantized: y[m,n] F32 = x[m,k] F32 x w[n,k] (Q8_0 | Q4_0 blocks).
KernelCost count_cost(const hwinfer_matmul_quantized_desc& d, const IntArrayReader& /*read_ints*/) {
  const double m = Positive(d.m), n = Positive(d.n), k = Positive(d.k);
  KernelCost cost;
  cost.flops = 2.0 * m * n * k;
  cost.bytes_read = DtypeBytes(HWINFER_DTYPE_F32, m * k) + DtypeBytes(d.w.dtype, n * k);
  cost.bytes_written = DtypeBytes(HWINFER_DTYPE_F32, m * n);
  cost.compute_dtype = HWINFER_DTYPE_I8;
  return cost;
}

namespace {

KernelSample MatmulQuantized(uint32_t dtype, const char* name) {
  auto d = blank_desc<hwinfer_matmul_quantized_desc>(HWINFER_KERNEL_MATMUL_QUANTIZED);
  d->m = 1;
  d->n = d->k = kSampleDim;
  d->x = sample_view(HWINFER_DTYPE_F32, {1, kSampleDim});
  d->w = sample_view(dtype, {kSampleDim, kSampleDim});
  d->y = sample_view(HWINFER_DTYPE_F32, {1, kSampleDim});
  return sample(name, d);
}

}  // namespace

std::vector<KernelSample> samples(const hwinfer_matmul_quantized_desc*) {
  return {MatmulQuantized(HWINFER_DTYPE_Q8_0, "matmul_quantized q8_0"),
          MatmulQuantized(HWINFER_DTYPE_Q4_0, "matmul_quantized q4_0")};
}

}  // namespace hwinfer::kit
