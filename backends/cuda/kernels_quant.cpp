// kernels_quant.cpp — the matmul_quantized slot of the GPU plugins: y [m, n] F32 = x [m, k] F32 @
// dequant(w)^T, w [n, k] GGUF blocks of every block dtype of plugin.h (rows at any byte offset and
// stride), on two paths chosen from m alone (the CPU backend, backends/cpu/matmul_quantized.h,
// quantizes x at larger m too, as llama.cpp's CPU backend does):
//   m <= kGemvMaxRows (8, decode): x quantized to 8-bit blocks in the stream's scratch as
//     llama.cpp quantizes it for the type, then the GEMV (matmul_q.cu, matmul_q_dequant.cu);
//   larger m (prefill): x exact, w dequantized to F32 and multiplied by the vendor BLAS where the
//     plugin has one (vendor_blas.h, try_vendor_weight_product), else dequantized into the tiles
//     of the built-in F32 GEMM (matmul_q_tiled).
// matmul_quantized_limits adds what the kernels cannot run (strides that are not whole
// non-negative elements, dimensions of 2^31 or more) as UNSUPPORTED with the reason. Must not read
// buffer contents on the host.
#include <cinttypes>

#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"
#include "launch.h"
#include "vendor_blas.h"

namespace hwinfer::gpu {

namespace {

constexpr int64_t kMaxDimension = INT32_MAX;  // the kernels' grids and 32-bit chunk counters

}  // namespace

hwinfer_error* GpuBackend::limits(const backend::CheckContext& /*context*/,
                                  const hwinfer_matmul_quantized_desc& desc) {
  GPU_RETURN_IF_ERROR(require_whole_elements(desc.x, "matmul_quantized", "x"));
  GPU_RETURN_IF_ERROR(require_whole_elements(desc.w, "matmul_quantized", "w"));
  GPU_RETURN_IF_ERROR(require_whole_elements(desc.y, "matmul_quantized", "y"));
  if (desc.m > kMaxDimension || desc.n > kMaxDimension || desc.k > kMaxDimension) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s matmul_quantized: m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                              ": the %s matmul_quantized kernels take m, n and k below 2^31",
                              kPluginName, desc.m, desc.n, desc.k, kPluginName);
  }
  return nullptr;
}

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream,
                                   const hwinfer_matmul_quantized_desc& desc) {
  QuantMatmulProblem problem{};
  problem.m = desc.m;
  problem.n = desc.n;
  problem.k = desc.k;
  problem.w_dtype = desc.w.dtype;
  problem.w = view_data(desc.w);
  problem.w_row_bytes = desc.w.strides_bytes[0];
  problem.x = reinterpret_cast<const float*>(view_data(desc.x));
  problem.x_row_stride = desc.x.strides_bytes[0] / 4;
  problem.x_col_stride = desc.x.strides_bytes[1] / 4;
  problem.y = reinterpret_cast<float*>(view_data(desc.y));
  problem.y_row_stride = desc.y.strides_bytes[0] / 4;
  problem.y_col_stride = desc.y.strides_bytes[1] / 4;
  GPU_RETURN_IF_ERROR(use_device(stream.device, "matmul_quantized"));
  if (problem.m > kGemvMaxRows) {
    if (problem.x_col_stride == 1 && problem.y_col_stride == 1) {
      const WeightProduct product{problem.m,
                                  problem.n,
                                  problem.k,
                                  1.0f,
                                  0.0f,
                                  problem.x,
                                  problem.x_row_stride,
                                  problem.w_dtype,
                                  problem.w,
                                  problem.w_row_bytes,
                                  problem.y,
                                  problem.y_row_stride};
      bool vendor = false;
      GPU_RETURN_IF_ERROR(try_vendor_weight_product(&stream, product, &vendor));
      if (vendor) return nullptr;
    }
    return check_runtime(launch_matmul_q_tiled(problem, stream.stream), "matmul_quantized",
                         "kernel launch");
  }
  uint8_t* scratch = nullptr;
  GPU_RETURN_IF_ERROR(
      stream_scratch(&stream, matmul_q_gemv_scratch_bytes(problem.m, problem.k), &scratch));
  return check_runtime(launch_matmul_q_gemv(problem, scratch, stream.stream), "matmul_quantized",
                       "kernel launch");
}

}  // namespace hwinfer::gpu
