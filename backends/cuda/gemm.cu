// gemm.cu — the tiled gemm for every shape the decode GEMV (gemv.cu) does not take (prefill,
// m > 8): c [m, n] = alpha * a [m, k] @ b [k, n] + beta * c, each operand F32, F16 or BF16 with
// any non-negative element strides (b is the logical [k, n]: a b_transposed weight arrives with
// its strides swapped), fp32 accumulation.
//
// Grid: x = the 64-column tiles of n, y = the 64-row tiles of m (grid-strided past 65535). Block:
// 256 threads, thread (tx, ty) = (tid % 16, tid / 16) computes the 4 x 4 outputs rows
// m0 + ty + 16 r, columns n0 + tx + 16 c (r, c < 4). Per k-tile of 16: every thread loads 4
// elements of a's 64 x 16 tile and 4 of b's 16 x 64 tile, converted to fp32 into shared memory
// (zero outside the matrix), consecutive threads reading consecutive addresses along whichever of
// the tile's dimensions has stride 1; then 16 rank-1 updates from shared memory.
// Correctness first, not tuned: no double buffering, no tensor cores. Next step on CUDA: cuBLAS
// (cublasGemmEx) for prefill, loaded at run time so the plugin still loads without the toolkit's
// shared libraries (docs/gpu-backends.md); hipBLAS likewise for HIP.
// Must not allocate, synchronise or touch memory outside the views.
#include "gpu_device.h"
#include "hwinfer/plugin.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 16;
constexpr int kSide = 16;  // threads along each side of the 64 x 64 tile (4 outputs each)
constexpr int kPerThread = kTileM / kSide;
static_assert(kTileM == 64 && kTileN == 64 && kSide == 16 && kPerThread == 4,
              "accumulate_register_tile (gpu_device.h) computes 64 x 64 tiles, 4 x 4 per thread");
constexpr int64_t kMaxGridY = 65535;

__global__ void __launch_bounds__(kThreads) gemm_tiled(GemmProblem p, int64_t tiles_m) {
  // Stored k-major (tile[kk][row or column]); +1 keeps the transposing stores off one bank.
  __shared__ float a_tile[kTileK][kTileM + 1];
  __shared__ float b_tile[kTileK][kTileN + 1];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % kSide;
  const int ty = tid / kSide;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  const bool a_along_k = p.a.col_stride == 1;  // a's rows contiguous: threads walk k
  const bool b_along_k = p.b.row_stride == 1 && p.b.col_stride != 1;  // b stored [n, k]
  for (int64_t tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {
    const int64_t m0 = tile_m * kTileM;
    float acc[kPerThread][kPerThread];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
      for (int c = 0; c < kPerThread; ++c) acc[r][c] = 0.0f;
    }
    for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
#pragma unroll
      for (int r = 0; r < kTileM * kTileK / kThreads; ++r) {
        const int e = tid + r * kThreads;
        const int kk = a_along_k ? e % kTileK : e / kTileM;
        const int mm = a_along_k ? e / kTileK : e % kTileM;
        const int64_t row = m0 + mm;
        const int64_t l = k0 + kk;
        a_tile[kk][mm] =
            row < p.m && l < p.k
                ? load_float_element(p.a.data, p.a.dtype, row * p.a.row_stride + l * p.a.col_stride)
                : 0.0f;
      }
#pragma unroll
      for (int r = 0; r < kTileN * kTileK / kThreads; ++r) {
        const int e = tid + r * kThreads;
        const int kk = b_along_k ? e % kTileK : e / kTileN;
        const int nn = b_along_k ? e / kTileK : e % kTileN;
        const int64_t column = n0 + nn;
        const int64_t l = k0 + kk;
        b_tile[kk][nn] = column < p.n && l < p.k
                             ? load_float_element(p.b.data, p.b.dtype,
                                                  l * p.b.row_stride + column * p.b.col_stride)
                             : 0.0f;
      }
      __syncthreads();
      accumulate_register_tile<kTileK>(a_tile, b_tile, tx, ty, acc);
      __syncthreads();  // the tiles have been read before the next k-tile overwrites them
    }
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const int64_t row = m0 + ty + kSide * r;
#pragma unroll
      for (int c = 0; c < kPerThread; ++c) {
        const int64_t column = n0 + tx + kSide * c;
        if (row < p.m && column < p.n) {
          const int64_t at = row * p.c.row_stride + column * p.c.col_stride;
          float result = p.alpha * acc[r][c];
          if (p.beta != 0.0f) result += p.beta * load_float_element(p.c.data, p.c.dtype, at);
          store_float_element(p.c.data, p.c.dtype, at, result);
        }
      }
    }
  }
}

}  // namespace

gpuError_t launch_gemm_tiled(const GemmProblem& problem, gpuStream_t stream) {
  const int64_t tiles_n = (problem.n + kTileN - 1) / kTileN;
  const int64_t tiles_m = (problem.m + kTileM - 1) / kTileM;
  const dim3 grid(static_cast<unsigned>(tiles_n),
                  static_cast<unsigned>(tiles_m < kMaxGridY ? tiles_m : kMaxGridY));
  GPU_LAUNCH(gemm_tiled, grid, kThreads, 0, stream, problem, tiles_m);
  return GPU(GetLastError)();
}

}  // namespace hwinfer::gpu
