// matmul_q_dequant.cu — the kernels of matmul_quantized that read w through the per-type
// dequantizers of weight_blocks.h (value j of block b, exact in f32), one template per kernel
// instantiated per weight type: y [m, n] F32 = x [m, k] F32 @ dequant(w)^T, w [n, k] GGUF blocks,
// rows of w at any byte address (byte loads), k a multiple of the type's block.
//   matmul_q_gemv_dequant (decode, m <= 8; every type but Q8_0 / Q4_0, which have matmul_q.cu's
//     dp4a path): x already quantized by matmul_q.cu (xq int8 [m, k], xd F32 [m, k / x block]:
//     Q8_0-style 32-value blocks, or Q8_K's 256 for the K-quants). Not llama.cpp's integer dot
//     products: each w value times d_x q_x in f32, summed in f32, so the result is llama.cpp's
//     quantized-x product up to f32 rounding (conformance: NMSE ~1e-13 against that model). A
//     256-thread block is 8 groups of 32 lanes; group g owns row j = 8 blockIdx.x + g of w for
//     all m rows of x (w read once); lane l takes values l, l + 32, ... (adjacent lanes read
//     adjacent values of a block), and a 32-lane shuffle sum ends it (32-lane groups stay inside
//     a 64-lane wavefront). Written for clarity first, not tuned (per-value byte loads).
//   matmul_q_tiled (prefill, m > 8; every type): x stays exact: a 64 x 64 output tile per block
//     of 256 threads (4 x 4 outputs each, as gemm.cu), k-tiles of 32 values (one 32-value block
//     or an eighth of a super-block per row of w), w dequantized as it is loaded into shared
//     memory.
// Must not allocate, synchronise or touch memory outside the views and the scratch it is given.
#include "gpu_device.h"
#include "launch.h"
#include "weight_blocks.h"

namespace hwinfer::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kLanes = 32;  // matmul_q_gemv_dequant: threads per row of w
constexpr int kGroupsPerBlock = kThreads / kLanes;

// matmul_q_gemv_dequant: see the file comment. Rows of x beyond m repeat row m - 1.
template <typename Block, int kM>
__global__ void __launch_bounds__(kThreads)
    matmul_q_gemv_dequant(QuantMatmulProblem p, int64_t x_block_values, const int8_t* xq,
                          const float* xd) {
  const int lane = static_cast<int>(threadIdx.x) % kLanes;
  const int group = static_cast<int>(threadIdx.x) / kLanes;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + group;
  const bool active = j < p.n;
  const uint8_t* row = p.w + (active ? j : 0) * p.w_row_bytes;
  float acc[kM];
  int64_t x_rows[kM];  // the index of row i's value 0 in xq
#pragma unroll
  for (int i = 0; i < kM; ++i) {
    acc[i] = 0.0f;
    x_rows[i] = (i < p.m ? i : p.m - 1) * p.k;
  }
  if (active) {
    for (int64_t l = lane; l < p.k; l += kLanes) {
      const float w = row_value<Block>(row, l);
#pragma unroll
      for (int i = 0; i < kM; ++i) {
        const int64_t e = x_rows[i] + l;
        acc[i] += w * (xd[e / x_block_values] * static_cast<float>(xq[e]));
      }
    }
  }
  const float mine = lanes_sum_rows<kLanes>(acc, lane);  // row |lane|'s sum
  if (active && lane < kM && lane < p.m) {
    p.y[static_cast<int64_t>(lane) * p.y_row_stride + j * p.y_col_stride] = mine;
  }
}

constexpr int kTile = 64;   // matmul_q_tiled: outputs per tile side
constexpr int kTileK = 32;  // values of k per tile: every block size is a multiple
constexpr int kSide = 16;
constexpr int kPerThread = kTile / kSide;
static_assert(kTile == 64 && kSide == 16 && kPerThread == 4,
              "accumulate_register_tile (gpu_device.h) computes 64 x 64 tiles, 4 x 4 per thread");
constexpr int64_t kMaxGridY = 65535;

// matmul_q_tiled: see the file comment.
template <typename Block>
__global__ void __launch_bounds__(kThreads) matmul_q_tiled(QuantMatmulProblem p, int64_t tiles_m) {
  static_assert(Block::kValues % kTileK == 0, "a k-tile lies inside one block");
  __shared__ float x_tile[kTileK][kTile + 1];
  __shared__ float w_tile[kTileK][kTile + 1];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % kSide;
  const int ty = tid / kSide;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const bool x_along_k = p.x_col_stride == 1;
  // w: thread tid dequantizes values 8 part .. 8 part + 7 of the k-tile in row n0 + wn.
  const int wn = tid / 4;
  const int part = tid % 4;
  const int64_t w_row = n0 + wn;
  for (int64_t tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {
    const int64_t m0 = tile_m * kTile;
    float acc[kPerThread][kPerThread];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
#pragma unroll
      for (int c = 0; c < kPerThread; ++c) acc[r][c] = 0.0f;
    }
    for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
#pragma unroll
      for (int r = 0; r < kTile * kTileK / kThreads; ++r) {
        const int e = tid + r * kThreads;
        const int kk = x_along_k ? e % kTileK : e / kTile;
        const int mm = x_along_k ? e / kTileK : e % kTile;
        const int64_t row = m0 + mm;
        x_tile[kk][mm] = row < p.m ? p.x[row * p.x_row_stride + (k0 + kk) * p.x_col_stride] : 0.0f;
      }
      if (w_row < p.n) {
        const uint8_t* block = p.w + w_row * p.w_row_bytes + (k0 / Block::kValues) * Block::kBytes;
        const int first = static_cast<int>(k0 % Block::kValues) + 8 * part;
#pragma unroll
        for (int v = 0; v < 8; ++v) w_tile[8 * part + v][wn] = Block::value(block, first + v);
      } else {
#pragma unroll
        for (int v = 0; v < 8; ++v) w_tile[8 * part + v][wn] = 0.0f;
      }
      __syncthreads();
      accumulate_register_tile<kTileK>(x_tile, w_tile, tx, ty, acc);
      __syncthreads();  // the tiles have been read before the next k-tile overwrites them
    }
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const int64_t row = m0 + ty + kSide * r;
#pragma unroll
      for (int c = 0; c < kPerThread; ++c) {
        const int64_t column = n0 + tx + kSide * c;
        if (row < p.m && column < p.n) {
          p.y[row * p.y_row_stride + column * p.y_col_stride] = acc[r][c];
        }
      }
    }
  }
}

template <typename Block, int kM>
gpuError_t launch_gemv_dequant_rows(const QuantMatmulProblem& p, int64_t x_block_values,
                                    const int8_t* xq, const float* xd, gpuStream_t stream) {
  const dim3 grid(static_cast<unsigned>((p.n + kGroupsPerBlock - 1) / kGroupsPerBlock));
  auto* launched_kernel = &matmul_q_gemv_dequant<Block, kM>;
  GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, x_block_values, xq, xd);
  return GPU(GetLastError)();
}

}  // namespace

gpuError_t launch_matmul_q_gemv_dequant(const QuantMatmulProblem& problem, int64_t x_block_values,
                                        const int8_t* xq, const float* xd, gpuStream_t stream) {
  return with_weight_block(problem.w_dtype, [&](auto block) {
    using Block = decltype(block);
    if (problem.m == 1)
      return launch_gemv_dequant_rows<Block, 1>(problem, x_block_values, xq, xd, stream);
    if (problem.m <= 4)
      return launch_gemv_dequant_rows<Block, 4>(problem, x_block_values, xq, xd, stream);
    return launch_gemv_dequant_rows<Block, 8>(problem, x_block_values, xq, xd, stream);
  });
}

gpuError_t launch_matmul_q_tiled(const QuantMatmulProblem& problem, gpuStream_t stream) {
  const int64_t tiles_n = (problem.n + kTile - 1) / kTile;
  const int64_t tiles_m = (problem.m + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(tiles_n),
                  static_cast<unsigned>(tiles_m < kMaxGridY ? tiles_m : kMaxGridY));
  return with_weight_block(problem.w_dtype, [&](auto block) {
    using Block = decltype(block);
    GPU_LAUNCH(matmul_q_tiled<Block>, grid, kThreads, 0, stream, problem, tiles_m);
    return GPU(GetLastError)();
  });
}

}  // namespace hwinfer::gpu
