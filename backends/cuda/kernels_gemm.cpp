// kernels_gemm.cpp — the gemm slot of the GPU plugins: c [m, n] = alpha * a [m, k] @ B + beta * c,
// B = b [k, n] or (b_transposed) b [n, k], each operand F32, F16 or BF16 in any combination, any
// non-negative element strides, fp32 accumulation. Routes, from the descriptor alone (never from
// buffer contents):
//   m <= kGemvMaxRows (8, decode) -> gemv.cu (weights read once; 16-byte loads where aligned);
//   otherwise                     -> the vendor BLAS when the plugin loaded one (option gemm,
//                                    vendor_blas.h) and it takes these operands, else gemm.cu's
//                                    tiled kernel.
// gemm_limits adds what these kernels cannot run (strides that are not whole non-negative
// elements, dimensions of 2^31 or more) as UNSUPPORTED with the reason. No link-time BLAS: the
// plugin must load without the vendor's BLAS libraries (vendor_blas.cpp dlopens cuBLAS).
#include <cinttypes>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"
#include "launch.h"
#include "vendor_blas.h"

namespace hwinfer::gpu {

namespace {

constexpr int64_t kMaxDimension = INT32_MAX;  // the kernels' grids and 32-bit tile counters

// |view| as a MatrixOperand (strides in elements; require_whole_elements has checked they divide).
MatrixOperand matrix_operand(const hwinfer_tensor_view& view) {
  const auto element = static_cast<int64_t>(backend::dtype_element_bytes(view.dtype));
  MatrixOperand operand{};
  operand.data = view_data(view);
  operand.dtype = view.dtype;
  operand.row_stride = view.strides_bytes[0] / element;
  operand.col_stride = view.strides_bytes[1] / element;
  return operand;
}

}  // namespace

hwinfer_error* GpuBackend::limits(const backend::CheckContext& /*context*/,
                                  const hwinfer_gemm_desc& desc) {
  GPU_RETURN_IF_ERROR(require_whole_elements(desc.a, "gemm", "a"));
  GPU_RETURN_IF_ERROR(require_whole_elements(desc.b, "gemm", "b"));
  GPU_RETURN_IF_ERROR(require_whole_elements(desc.c, "gemm", "c"));
  if (desc.m > kMaxDimension || desc.n > kMaxDimension || desc.k > kMaxDimension) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s gemm: m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                              ": the %s gemm kernels take m, n and k below 2^31",
                              kPluginName, desc.m, desc.n, desc.k, kPluginName);
  }
  return nullptr;
}

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream, const hwinfer_gemm_desc& desc) {
  GPU_RETURN_IF_ERROR(use_device(stream.device, "gemm"));
  bool vendor = false;
  GPU_RETURN_IF_ERROR(try_vendor_gemm(&stream, desc, &vendor));
  if (vendor) return nullptr;
  GemmProblem problem{};
  problem.m = desc.m;
  problem.n = desc.n;
  problem.k = desc.k;
  problem.alpha = desc.alpha;
  problem.beta = desc.beta;
  problem.a = matrix_operand(desc.a);
  problem.b = matrix_operand(desc.b);
  problem.c = matrix_operand(desc.c);
  if (desc.b_transposed != 0) {  // b [n, k]: the logical [k, n] has the strides swapped
    const int64_t along_n = problem.b.row_stride;
    problem.b.row_stride = problem.b.col_stride;
    problem.b.col_stride = along_n;
  }
  // A dimension of extent 1 is never stepped along: give it the contiguous stride so the
  // kernels' layout tests (contiguous along k, aligned rows) see the layout that matters.
  if (problem.k == 1) {
    problem.a.col_stride = 1;
    problem.b.row_stride = 1;
  }
  const gpuError_t result = problem.m <= kGemvMaxRows ? launch_gemv(problem, stream.stream)
                                                      : launch_gemm_tiled(problem, stream.stream);
  return check_runtime(result, "gemm", "kernel launch");
}

}  // namespace hwinfer::gpu
