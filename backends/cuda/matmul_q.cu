// matmul_q.cu — the decode half (m <= 8) of matmul_quantized: y [m, n] F32 = x [m, k] F32 @
// dequant(w)^T, w [n, k] GGUF blocks of any type of plugin.h, rows of w at any byte address. x is
// quantized first as llama.cpp quantizes it for the weight type (docs/weight-types.md), into the
// scratch as xq int8 [m, k] then xd F32 [m, k / x block], the scale kept in f32:
//   quantize_x_q8   32-value blocks (every 32-value weight type; Q4_1 / Q5_1's Q8_1 blocks are
//                   the same integers and scale: their sum only serves integer dot products),
//                   bit for bit the CPU's quantize_x_portable: d = amax / 127, id = d != 0 ? 1 / d
//                   : 0, q = lround(x * id) (ties away from zero). One 32-lane group per block (a
//                   256-thread block does 8 blocks of x); lane t owns value t, the amax is a
//                   32-lane shuffle max (32-lane groups stay inside a 64-lane wavefront).
//   quantize_x_q8k  256-value Q8_K blocks for the K-quants (see the kernel).
// Then Q8_0 and Q4_0 take the integer path below; every other type takes the dequantizing GEMV
// of matmul_q_dequant.cu (f32 products of w's values with xd * xq).
//     matmul_q_gemv  A block of 256 threads is 8 groups of 32; group g owns row j = 8 blockIdx.x +
//                    g of w (output column j) for all m rows of x, so w is read once. The row is
//                    walked in chunks of 64 blocks: the group copies the chunk's bytes to its own
//                    shared staging area (16-byte loads when the rows are 16-byte aligned,
//                    issued one chunk ahead into registers so the next chunk's loads overlap this
//                    chunk's arithmetic; byte loads otherwise), then lane l takes blocks l and
//                    l + 32 of the chunk: integer dot products with dot4_i8 (dp4a) against each x
//                    row's block, sum += d_w * d_x * isum in fp32 per lane, and a 32-lane shuffle
//                    sum at the end (a different summation order than the CPU's, as plugin.h
//                    allows; the conformance bound is on the value).
// The prefill half (m > 8, x exact) is matmul_q_dequant.cu's tiled GEMM.
// Must not allocate, synchronise or touch memory outside the views and the scratch it is given.
#include "gpu_device.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kLanes = 32;  // threads per quant block / per row of w
constexpr int kGroupsPerBlock = kThreads / kLanes;
constexpr int kBlockValues = 32;        // values per quant block
constexpr int kSuperBlockValues = 256;  // values per Q8_K block (the K-quants' x)
constexpr int kBlocksPerLane = 2;       // matmul_q_gemv: blocks per lane per chunk
constexpr int kChunkBlocks = kLanes * kBlocksPerLane;
constexpr int64_t kMaxQuantizeBlocks = 65535;  // quantize_x_q8k's grid (a grid-stride loop)

// std::lround on a float: nearest, ties away from zero (v + 0.5 would misround 0.49999997).
__device__ __forceinline__ int round_half_away(float v) {
  const float a = fabsf(v);
  float t = truncf(a);
  if (a - t >= 0.5f) t += 1.0f;
  return static_cast<int>(v < 0.0f ? -t : t);
}

// x [m, k] -> xq int8 [m * blocks, 32], xd F32 [m * blocks]; one 32-lane group per block.
__global__ void __launch_bounds__(kThreads)
    quantize_x_q8(QuantMatmulProblem p, int64_t total_blocks, int8_t* xq, float* xd) {
  const int lane = static_cast<int>(threadIdx.x) % kLanes;
  const int64_t group =
      static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + static_cast<int>(threadIdx.x) / kLanes;
  const bool active = group < total_blocks;
  const int64_t index = active ? group : total_blocks - 1;  // every lane takes part in the max
  const int64_t blocks = p.k / kBlockValues;
  const int64_t i = index / blocks;
  const int64_t l = (index % blocks) * kBlockValues + lane;
  const float v = p.x[i * p.x_row_stride + l * p.x_col_stride];
  const float amax = lanes_max<kLanes>(fabsf(v));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const int q = round_half_away(v * id);
  if (active) {
    xq[index * kBlockValues + lane] = static_cast<int8_t>(q);
    if (lane == 0) xd[index] = d;
  }
}

// x [m, k] -> xq int8 [m * k / 256, 256], xd F32 [m * k / 256]: llama.cpp's Q8_K rule, bit for
// bit the oracle's (reference::quantize_activation_block, kQ8_K): max = the value of largest
// magnitude (the first one on ties), iscale = -127 / max, q = min(127, rint(iscale x)) (ties to
// even), d = 1 / iscale; all zero for a block of zeros. One 256-thread block per x block (thread t
// owns value t), a grid-stride loop over the blocks; the maximum is a shared-memory tree (no
// warp operations, so any warp size).
__global__ void __launch_bounds__(kThreads)
    quantize_x_q8k(QuantMatmulProblem p, int64_t total_blocks, int8_t* xq, float* xd) {
  static_assert(kThreads == kSuperBlockValues, "thread t owns value t of a super-block");
  __shared__ float values[kSuperBlockValues];
  __shared__ float magnitudes[kSuperBlockValues];
  __shared__ int firsts[kSuperBlockValues];
  const int t = static_cast<int>(threadIdx.x);
  const int64_t blocks = p.k / kSuperBlockValues;
  for (int64_t index = blockIdx.x; index < total_blocks; index += gridDim.x) {
    const int64_t i = index / blocks;
    const int64_t l = (index % blocks) * kSuperBlockValues + t;
    const float v = p.x[i * p.x_row_stride + l * p.x_col_stride];
    values[t] = v;
    magnitudes[t] = fabsf(v);
    firsts[t] = t;
    __syncthreads();
    for (int half = kSuperBlockValues / 2; half > 0; half /= 2) {
      if (t < half) {
        const float a = magnitudes[t], b = magnitudes[t + half];
        if (b > a || (b == a && firsts[t + half] < firsts[t])) {
          magnitudes[t] = b;
          firsts[t] = firsts[t + half];
        }
      }
      __syncthreads();
    }
    const float amax = magnitudes[0];
    const float max = values[firsts[0]];
    int q = 0;
    float d = 0.0f;
    if (amax != 0.0f) {
      const float iscale = __fdiv_rn(-127.0f, max);
      const int rounded = static_cast<int>(rintf(__fmul_rn(iscale, v)));
      q = rounded < 127 ? rounded : 127;
      d = __fdiv_rn(1.0f, iscale);
    }
    xq[index * kSuperBlockValues + t] = static_cast<int8_t>(q);
    if (t == 0) xd[index] = d;
    __syncthreads();  // every thread has read values[] before the next block overwrites it
  }
}

// The 16-bit word at |p| (2-byte aligned).
__device__ __forceinline__ uint32_t load_u16(const uint8_t* p) {
  return *reinterpret_cast<const uint16_t*>(p);
}

// matmul_q_gemv: see the file comment. |wide|: every row of w starts 16-byte aligned.
template <bool kQ4, int kM>
__global__ void __launch_bounds__(kThreads)
    matmul_q_gemv(QuantMatmulProblem p, bool wide, const int8_t* xq, const float* xd) {
  constexpr int kBlockBytes = kQ4 ? 18 : 34;
  constexpr int kChunkBytes = kChunkBlocks * kBlockBytes;  // 1152 or 2176: whole 16-byte words
  constexpr int kChunkWords = kChunkBytes / 16;
  constexpr int kWordsPerLane = (kChunkWords + kLanes - 1) / kLanes;
  constexpr int kQuantWords = kQ4 ? 4 : 8;  // 32-bit words of quants per block
  static_assert(kChunkBytes % 16 == 0, "a chunk is whole 16-byte words");
  __shared__ uint4 stage_words[kGroupsPerBlock * kChunkWords];

  const int lane = static_cast<int>(threadIdx.x) % kLanes;
  const int group = static_cast<int>(threadIdx.x) / kLanes;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + group;
  const bool active = j < p.n;
  const int64_t blocks = p.k / kBlockValues;
  const uint8_t* row = p.w + (active ? j : 0) * p.w_row_bytes;
  uint4* stage = stage_words + group * kChunkWords;
  const uint8_t* stage_bytes = reinterpret_cast<const uint8_t*>(stage);

  float acc[kM];
#pragma unroll
  for (int i = 0; i < kM; ++i) acc[i] = 0.0f;
  int64_t x_rows[kM];  // the block index of row i's block 0 in xq / xd (rows >= m repeat m - 1)
#pragma unroll
  for (int i = 0; i < kM; ++i) x_rows[i] = (i < p.m ? i : p.m - 1) * blocks;

  // The whole 16-byte words of the chunk at block |b0| into |words| (wide path only).
  auto fetch = [&](int64_t b0, uint4(&words)[kWordsPerLane]) {
    const int64_t count = blocks - b0 < kChunkBlocks ? blocks - b0 : kChunkBlocks;
    const int whole = static_cast<int>(count * kBlockBytes / 16);
    const uint4* src = reinterpret_cast<const uint4*>(row + b0 * kBlockBytes);
#pragma unroll
    for (int r = 0; r < kWordsPerLane; ++r) {
      const int w = lane + r * kLanes;
      if (active && w < whole) words[r] = src[w];
    }
  };

  uint4 next[kWordsPerLane];
  if (wide) fetch(0, next);
  for (int64_t b0 = 0; b0 < blocks; b0 += kChunkBlocks) {
    const int count = static_cast<int>(blocks - b0 < kChunkBlocks ? blocks - b0 : kChunkBlocks);
    const int bytes = count * kBlockBytes;
    const uint8_t* src = row + b0 * kBlockBytes;
    if (active) {
      int first_byte = 0;  // bytes before this were copied as whole words
      if (wide) {
        const int whole = bytes / 16;
#pragma unroll
        for (int r = 0; r < kWordsPerLane; ++r) {
          const int w = lane + r * kLanes;
          if (w < whole) stage[w] = next[r];
        }
        first_byte = whole * 16;
      }
      uint8_t* stage_out = reinterpret_cast<uint8_t*>(stage);
      for (int t = first_byte + lane; t < bytes; t += kLanes) stage_out[t] = src[t];
    }
    __syncthreads();
    if (wide && b0 + kChunkBlocks < blocks) fetch(b0 + kChunkBlocks, next);
    if (active) {
#pragma unroll
      for (int r = 0; r < kBlocksPerLane; ++r) {
        const int q = lane + r * kLanes;
        if (q < count) {
          const uint8_t* block = stage_bytes + q * kBlockBytes;  // 2-byte aligned
          const float d_w = f16_to_float(static_cast<uint16_t>(load_u16(block)));
          uint32_t quants[kQuantWords];
#pragma unroll
          for (int u = 0; u < kQuantWords; ++u) {
            quants[u] = load_u16(block + 2 + 4 * u) | (load_u16(block + 4 + 4 * u) << 16);
          }
          const int64_t b = b0 + q;
#pragma unroll
          for (int i = 0; i < kM; ++i) {
            const int64_t x_block = x_rows[i] + b;
            const int4* x_words = reinterpret_cast<const int4*>(xq + x_block * kBlockValues);
            const int4 x_lo = x_words[0];
            const int4 x_hi = x_words[1];
            const int xs[8] = {x_lo.x, x_lo.y, x_lo.z, x_lo.w, x_hi.x, x_hi.y, x_hi.z, x_hi.w};
            int isum = 0;
            if constexpr (kQ4) {
              // sum (n - 8) x = sum n x - 8 sum x, n the unsigned nibble.
              int x_sum = 0;
#pragma unroll
              for (int u = 0; u < 4; ++u) {
                const int lo = static_cast<int>(quants[u] & 0x0f0f0f0fu);
                const int hi = static_cast<int>((quants[u] >> 4) & 0x0f0f0f0fu);
                isum = dot4_i8(lo, xs[u], isum);
                isum = dot4_i8(hi, xs[u + 4], isum);
                x_sum = dot4_i8(0x01010101, xs[u], x_sum);
                x_sum = dot4_i8(0x01010101, xs[u + 4], x_sum);
              }
              isum -= 8 * x_sum;
            } else {
#pragma unroll
              for (int u = 0; u < 8; ++u) isum = dot4_i8(static_cast<int>(quants[u]), xs[u], isum);
            }
            acc[i] += d_w * xd[x_block] * static_cast<float>(isum);
          }
        }
      }
    }
    __syncthreads();  // the stage has been read before the next chunk overwrites it
  }
  const float mine = lanes_sum_rows<kLanes>(acc, lane);  // row |lane|'s sum
  if (active && lane < kM && lane < p.m) {
    p.y[static_cast<int64_t>(lane) * p.y_row_stride + j * p.y_col_stride] = mine;
  }
}

bool aligned16(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

template <bool kQ4>
void launch_gemv_rows(const QuantMatmulProblem& p, bool wide, const int8_t* xq, const float* xd,
                      dim3 grid, gpuStream_t stream) {
  if (p.m == 1) {
    {
      auto* launched_kernel = &matmul_q_gemv<kQ4, 1>;
      GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, wide, xq, xd);
    }
  } else if (p.m == 2) {
    {
      auto* launched_kernel = &matmul_q_gemv<kQ4, 2>;
      GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, wide, xq, xd);
    }
  } else if (p.m <= 4) {
    {
      auto* launched_kernel = &matmul_q_gemv<kQ4, 4>;
      GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, wide, xq, xd);
    }
  } else {
    {
      auto* launched_kernel = &matmul_q_gemv<kQ4, 8>;
      GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, wide, xq, xd);
    }
  }
}

}  // namespace

gpuError_t launch_matmul_q_gemv(const QuantMatmulProblem& problem, uint8_t* scratch,
                                gpuStream_t stream) {
  const QuantMatmulProblem& p = problem;
  const bool super_blocks = hwinfer_dtype_block_values(p.w_dtype) == kSuperBlockValues;
  const int x_block_values = super_blocks ? kSuperBlockValues : kBlockValues;
  const int64_t total_blocks = p.m * (p.k / x_block_values);
  auto* xq = reinterpret_cast<int8_t*>(scratch);
  auto* xd = reinterpret_cast<float*>(scratch + total_blocks * x_block_values);
  if (super_blocks) {
    const int64_t grid = total_blocks < kMaxQuantizeBlocks ? total_blocks : kMaxQuantizeBlocks;
    GPU_LAUNCH(quantize_x_q8k, dim3(static_cast<unsigned>(grid)), kThreads, 0, stream, p,
               total_blocks, xq, xd);
  } else {
    const dim3 quantize_grid(
        static_cast<unsigned>((total_blocks + kGroupsPerBlock - 1) / kGroupsPerBlock));
    GPU_LAUNCH(quantize_x_q8, quantize_grid, kThreads, 0, stream, p, total_blocks, xq, xd);
  }
  const gpuError_t quantized = GPU(GetLastError)();
  if (quantized != gpuSuccess) return quantized;
  if (p.w_dtype != HWINFER_DTYPE_Q4_0 && p.w_dtype != HWINFER_DTYPE_Q8_0) {
    return launch_matmul_q_gemv_dequant(p, x_block_values, xq, xd, stream);
  }
  const bool wide = aligned16(p.w) && (p.n == 1 || p.w_row_bytes % 16 == 0);
  const dim3 grid(static_cast<unsigned>((p.n + kGroupsPerBlock - 1) / kGroupsPerBlock));
  if (p.w_dtype == HWINFER_DTYPE_Q4_0) {
    launch_gemv_rows<true>(p, wide, xq, xd, grid, stream);
  } else {
    launch_gemv_rows<false>(p, wide, xq, xd, grid, stream);
  }
  return GPU(GetLastError)();
}

}  // namespace hwinfer::gpu
