// widen.cu — weights widened to F32 for the vendor BLAS's F32 GEMM (vendor_blas.cpp): rows of F16,
// BF16 or any GGUF block dtype into a dense F32 block. Every value is exact in f32, so a GEMM on
// the widened rows keeps the f32 contract of gemm (F32 activations x half weights) and of
// matmul_quantized's prefill path (x exact, w dequantized), with the BLAS's speed.
//   src: |rows| rows |src_row_bytes| apart (any byte address for the block dtypes, 2-byte aligned
//   for F16/BF16), each |cols| values;  dst: [rows, cols] F32, dense.
// One thread per value (grid-stride along the row), rows along grid y. Memory-bound; not tuned.
#include "gpu_device.h"
#include "launch.h"
#include "weight_blocks.h"

namespace hwinfer::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocksPerRow = 64;
constexpr int64_t kMaxGridY = 65535;

// Value |i| of a row, per source format: Half<false> F16, Half<true> BF16, Blocks<B> GGUF blocks.
template <bool kBf16>
struct Half {
  __device__ static float value(const uint8_t* row, int64_t i) {
    const uint16_t bits = reinterpret_cast<const uint16_t*>(row)[i];
    return kBf16 ? bf16_to_float(bits) : f16_to_float(bits);
  }
};
template <typename Block>
struct Blocks {
  __device__ static float value(const uint8_t* row, int64_t i) { return row_value<Block>(row, i); }
};

template <typename Source>
__global__ void __launch_bounds__(kThreads)
    widen_rows(int64_t rows, int64_t cols, const uint8_t* src, int64_t src_row_bytes, float* dst) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const uint8_t* row = src + r * src_row_bytes;
    for (int64_t i = first; i < cols; i += step) dst[r * cols + i] = Source::value(row, i);
  }
}

template <typename Source>
gpuError_t launch_widen(int64_t rows, int64_t cols, const uint8_t* src, int64_t src_row_bytes,
                        float* dst, gpuStream_t stream) {
  int64_t blocks = (cols + kThreads - 1) / kThreads;
  blocks = blocks < 1 ? 1 : (blocks > kMaxBlocksPerRow ? kMaxBlocksPerRow : blocks);
  const dim3 grid(static_cast<unsigned>(blocks),
                  static_cast<unsigned>(rows < kMaxGridY ? (rows < 1 ? 1 : rows) : kMaxGridY));
  auto* kernel = &widen_rows<Source>;
  GPU_LAUNCH(kernel, grid, kThreads, 0, stream, rows, cols, src, src_row_bytes, dst);
  return GPU(GetLastError)();
}

}  // namespace

gpuError_t launch_widen_rows(uint32_t dtype, int64_t rows, int64_t cols, const uint8_t* src,
                             int64_t src_row_bytes, float* dst, gpuStream_t stream) {
  if (dtype == HWINFER_DTYPE_F16) {
    return launch_widen<Half<false>>(rows, cols, src, src_row_bytes, dst, stream);
  }
  if (dtype == HWINFER_DTYPE_BF16) {
    return launch_widen<Half<true>>(rows, cols, src, src_row_bytes, dst, stream);
  }
  return with_weight_block(dtype, [&](auto block) {
    return launch_widen<Blocks<decltype(block)>>(rows, cols, src, src_row_bytes, dst, stream);
  });
}

}  // namespace hwinfer::gpu
