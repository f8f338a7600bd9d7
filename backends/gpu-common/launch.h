// launch.h — the kernel launchers of backends/gpu-common: plain host functions, defined in the
// .cu files (compiled by nvcc or hipcc), called by the kernels_*.cpp enqueue functions (compiled
// by the host compiler). Arguments are device addresses, element counts and strides; shapes in the
// comments. Each launcher only launches (no allocation, no synchronisation) and returns the
// runtime's launch error.
#ifndef HWINFER_BACKENDS_GPU_COMMON_LAUNCH_H_
#define HWINFER_BACKENDS_GPU_COMMON_LAUNCH_H_

#include <cstdint>

#include "gpu_runtime.h"

namespace hwinfer::gpu {

// probe.cu — the bandwidth probe (plugin.h's HWINFER_PROBE_*): every byte of |size_bytes| is
// touched each iteration with 16-byte accesses where the addresses allow.
//   READ: src [size_bytes] -> sink [>= 64 bytes];  COPY: src -> dst;  WRITE: dst.
gpuError_t launch_bandwidth_probe(uint32_t mode, uint32_t iterations, uint64_t size_bytes,
                                  const uint8_t* src, uint8_t* dst, uint8_t* sink,
                                  uint32_t compute_units, gpuStream_t stream);

// One matrix operand of gemm / matmul_quantized: the device address of element [0, 0], its dtype
// (HWINFER_DTYPE_F32, F16 or BF16) and its strides in ELEMENTS (non-negative).
struct MatrixOperand {
  uint8_t* data;
  uint32_t dtype;
  int64_t row_stride;  // elements between rows
  int64_t col_stride;  // elements between columns
};

// c [m, n] = alpha * a [m, k] @ b [k, n] + beta * c (beta == 0: c is write-only), fp32
// accumulation. b is the LOGICAL [k, n] matrix: for a gemm with b_transposed = 1 (b stored
// [n, k]) the caller passes b's strides swapped. m, n, k in [1, 2^31).
struct GemmProblem {
  int64_t m, n, k;
  float alpha, beta;
  MatrixOperand a;  // [m, k]
  MatrixOperand b;  // [k, n]
  MatrixOperand c;  // [m, n]
};

// gemv.cu — m <= kGemvMaxRows (decode). With a and b contiguous along k (b's row stride 1: the
// b_transposed weight layout) one 32-thread group per output column streams the weights once
// with 16-byte loads where aligned; otherwise threads own output columns (coalesced along n).
inline constexpr int64_t kGemvMaxRows = 8;
gpuError_t launch_gemv(const GemmProblem& problem, gpuStream_t stream);

// gemm.cu — any m: 64 x 64 shared-memory tiles, k-tile 16, 4 x 4 outputs per thread, any strides.
gpuError_t launch_gemm_tiled(const GemmProblem& problem, gpuStream_t stream);

// matmul_q.cu — matmul_quantized: y [m, n] F32 = x [m, k] F32 @ dequant(w)^T, w [n, k] Q8_0 or
// Q4_0 GGUF blocks (|w_row_bytes| between rows, any byte alignment), k % 32 == 0.
struct QuantMatmulProblem {
  int64_t m, n, k;
  bool q4;  // w is Q4_0 (18-byte blocks), else Q8_0 (34-byte blocks)
  const uint8_t* w;
  int64_t w_row_bytes;
  const float* x;  // x[i, l] = x[i * x_row_stride + l * x_col_stride]
  int64_t x_row_stride, x_col_stride;
  float* y;  // y[i, j] = y[i * y_row_stride + j * y_col_stride]
  int64_t y_row_stride, y_col_stride;
};
// The bytes of scratch launch_matmul_q_gemv needs (x quantized: m * k int8 + m * k / 32 F32).
inline uint64_t matmul_q_gemv_scratch_bytes(int64_t m, int64_t k) {
  return static_cast<uint64_t>(m) * static_cast<uint64_t>(k) / 32 * 36;
}
// m <= kGemvMaxRows: x quantized into |scratch| (16-byte aligned) with the CPU backend's rule,
// then integer (dp4a) dot products per block.
gpuError_t launch_matmul_q_gemv(const QuantMatmulProblem& problem, uint8_t* scratch,
                                gpuStream_t stream);
// Any m (used for m > kGemvMaxRows): x exact, w dequantized into the tiles of an F32 GEMM.
gpuError_t launch_matmul_q_tiled(const QuantMatmulProblem& problem, gpuStream_t stream);

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_GPU_COMMON_LAUNCH_H_
