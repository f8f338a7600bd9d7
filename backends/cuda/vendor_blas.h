// vendor_blas.h — the prefill GEMM through the vendor's BLAS, loaded at run time: cuBLAS in the
// cuda plugin (dlopen of libcublas.so.13, .12, .11, then libcublas.so; HWINFER_CUBLAS_LIBRARY
// names the one file to try instead), the CPU emulator's stand-in in the
// gpuemu plugin, none in the hip plugin (Debian has no hipBLAS / rocBLAS package). No link-time
// dependency: the plugin loads and works where the library is absent.
//
// The plugin option `gemm` (plugin_init) picks the path of gemm with m > kGemvMaxRows:
//   auto     the vendor BLAS when it loads (only tried when there are devices), else the
//            built-in tiled kernel (gemm.cu);
//   cublas   the vendor BLAS, or plugin_init fails naming the library files tried ("blas" is a
//            synonym); the hip plugin rejects both;
//   builtin  the built-in kernel.
// plugin_init logs at INFO which path is used and why. Even with the vendor BLAS, a gemm whose
// operands it cannot take (mixed A / B dtypes other than the weights' case below, a C dtype other
// than F32 or A's, strided innermost dimensions, leading dimensions below the inner extent or of
// 2^31 or more) uses the built-in kernel; m <= kGemvMaxRows always uses gemv.cu.
//
// Weights the BLAS cannot take as they are: F16 / BF16 weights [n, k] (b_transposed) against F32
// activations and output (the executor's gemm), and matmul_quantized's GGUF block weights for
// m > kGemvMaxRows, go through try_vendor_weight_product: the weights are widened to F32 (exactly)
// into the stream's scratch, a chunk of rows at a time, and an F32 GemmEx runs on each chunk. The
// result keeps the f32 contract (no product is rounded to half precision); on an H200 the F32
// GemmEx ran at 8-11x the built-in kernels' rate (docs/PERFORMANCE.md, 2026-12-04).
//
// Row-major -> column-major: row-major C [m, n] = alpha * A [m, k] @ op(B) + beta * C is, read
// column-major, C^T [n, m] = alpha * op(B)^T @ A^T + beta * C^T, i.e. GemmEx(transa = b_transposed
// ? T : N, transb = N, M = n, N = m, K = k, A = b (ld = b's row stride), B = a (ld = a's row
// stride), C = c (ld = c's row stride)), fp32 compute (CUBLAS_COMPUTE_32F, never TF32).
//
// One handle per device, created on the first gemm that uses it and destroyed with the plugin;
// each call binds it to the calling stream (SetStream) and to that stream's scratch area as its
// workspace (SetWorkspace), under a mutex, so concurrent streams never share a workspace.
#ifndef HWINFER_BACKENDS_CUDA_VENDOR_BLAS_H_
#define HWINFER_BACKENDS_CUDA_VENDOR_BLAS_H_

#include "gpu_internal.h"

namespace hwinfer::gpu {

enum class GemmOption { kAuto, kVendorBlas, kBuiltin };

// The value of plugin option `gemm`: INVALID_ARGUMENT naming the value and the accepted ones
// (and, in the hip plugin, why cublas / blas cannot be had).
hwinfer_error* parse_gemm_option(const char* value, GemmOption* out);

// plugin_init, after enumerate_devices: loads the vendor BLAS when |option| asks for it (auto:
// only when |plugin| has devices), sets plugin->blas (null: the built-in kernel) and logs the path
// at INFO. FAILED_PRECONDITION naming the files tried when |option| is kVendorBlas and it cannot
// be loaded.
hwinfer_error* select_gemm_path(hwinfer_plugin* plugin, GemmOption option);

// Enqueues |desc| (already checked by check_gemm) through the vendor BLAS when the plugin has one
// and it can take the gemm; *used says whether it did (false: nothing was enqueued, use the
// built-in kernel). An error from the library is returned as INTERNAL naming the status.
hwinfer_error* try_vendor_gemm(hwinfer_stream* stream, const hwinfer_gemm_desc& desc, bool* used);

// y [m, n] F32 = alpha * x [m, k] F32 @ w^T + beta * y (y not read when beta == 0), w [n, k]: rows
// of |w_dtype| (F16, BF16 or a block dtype of plugin.h) |w_row_bytes| apart. Leading dimensions
// in elements; rows of x and y contiguous.
struct WeightProduct {
  int64_t m, n, k;
  float alpha, beta;
  const float* x;
  int64_t x_ld;
  uint32_t w_dtype;
  const uint8_t* w;
  int64_t w_row_bytes;
  float* y;
  int64_t y_ld;
};

// Enqueues |product| through the vendor BLAS (w widened to F32 chunk by chunk, see above) when the
// plugin has one, m > kGemvMaxRows and the dimensions fit its 32-bit arguments; *used says whether
// it did (false: nothing was enqueued).
hwinfer_error* try_vendor_weight_product(hwinfer_stream* stream, const WeightProduct& product,
                                         bool* used);

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_VENDOR_BLAS_H_
