// gemv.cu — gemm for decode shapes (m <= kGemvMaxRows = 8), c [m, n] = alpha * a [m, k] @ b [k, n]
// + beta * c with every operand F32, F16 or BF16 and fp32 accumulation. Two kernels:
//   gemv_dot     a and b contiguous along k (b stored [n, k]: the weight layout, b_transposed = 1).
//                A block of 256 threads is 8 groups of 32 threads; group g owns output column
//                j = 8 * blockIdx.x + g (one row of the stored b) for every row of a at once, so
//                each weight byte is read once. Lanes stride along the row in 16-byte units
//                (uint4: 4 F32 or 8 F16/BF16 weights; four units in flight per lane) when the row
//                starts are 16-byte aligned, else element by element; a is read from L1/L2 (float4
//                / uint4 loads when its rows are 16-byte aligned). Per-lane fp32 sums, then a
//                32-lane shuffle sum (xor offsets < 32 stay inside a 32-aligned lane group on
//                wave32 and wave64 alike, so the launch geometry does not depend on the warp size).
//   gemv_columns any strides (b stored [k, n], or non-contiguous operands). A block of 256 threads
//                is 64 columns x 4 k-slices: thread (tx, ty) owns column j = 64 * blockIdx.x + tx
//                and sums k = ty, ty + 4, ... (neighbouring threads read neighbouring elements of a
//                row of b: coalesced along n); the 4 slices meet in shared memory.
// Rows i >= m of the unrolled row loop (kM is m rounded up to 1, 2, 4 or 8) re-read row m - 1 and
// are never written. Must not allocate, synchronise or read anything outside the views.
#include "gpu_device.h"
#include "hwinfer/plugin.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kLanes = 32;                           // threads per output column (gemv_dot)
constexpr int kColumnsPerBlock = kThreads / kLanes;  // gemv_dot
constexpr int kUnroll = 4;                           // 16-byte units in flight per lane
constexpr int kColumnTile = 64;                      // gemv_columns: columns per block
constexpr int kSlices = kThreads / kColumnTile;      // gemv_columns: k-slices per block

// c[i, j] = alpha * sum + beta * c[i, j] (c not read when beta == 0).
__device__ __forceinline__ void write_output(const GemmProblem& p, int64_t i, int64_t j,
                                             float sum) {
  const int64_t at = i * p.c.row_stride + j * p.c.col_stride;
  float result = p.alpha * sum;
  if (p.beta != 0.0f) result += p.beta * load_float_element(p.c.data, p.c.dtype, at);
  store_float_element(p.c.data, p.c.dtype, at, result);
}

// A 16-bit word of dtype kDtype (F16 or BF16) as float.
template <uint32_t kDtype>
__device__ __forceinline__ float half_bits_to_float(uint32_t bits) {
  const auto half = static_cast<uint16_t>(bits & 0xffffu);
  return kDtype == HWINFER_DTYPE_F16 ? f16_to_float(half) : bf16_to_float(half);
}

// The kElems values of one 16-byte unit of b (dtype kB) as floats.
template <uint32_t kB, int kElems>
__device__ __forceinline__ void unpack_unit(const uint4& unit, float (&w)[kElems]) {
  if constexpr (kB == HWINFER_DTYPE_F32) {
    w[0] = __uint_as_float(unit.x);
    w[1] = __uint_as_float(unit.y);
    w[2] = __uint_as_float(unit.z);
    w[3] = __uint_as_float(unit.w);
  } else {
    const uint32_t words[4] = {unit.x, unit.y, unit.z, unit.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      w[2 * q] = half_bits_to_float<kB>(words[q]);
      w[2 * q + 1] = half_bits_to_float<kB>(words[q] >> 16);
    }
  }
}

// Elements l0 .. l0 + kElems - 1 of a row of a (dtype |dtype|). |vector|: the row starts 16-byte
// aligned (l0 is a multiple of kElems, so the vector loads below are aligned).
template <int kElems>
__device__ __forceinline__ void load_a_values(const uint8_t* row, uint32_t dtype, int64_t l0,
                                              bool vector, float (&out)[kElems]) {
  if (vector && dtype == HWINFER_DTYPE_F32) {
    const float4* at = reinterpret_cast<const float4*>(reinterpret_cast<const float*>(row) + l0);
#pragma unroll
    for (int q = 0; q < kElems / 4; ++q) {
      const float4 v = at[q];
      out[4 * q] = v.x;
      out[4 * q + 1] = v.y;
      out[4 * q + 2] = v.z;
      out[4 * q + 3] = v.w;
    }
  } else if (vector) {
    const uint16_t* at = reinterpret_cast<const uint16_t*>(row) + l0;
    uint32_t words[kElems / 2];
    if constexpr (kElems == 8) {
      const uint4 v = *reinterpret_cast<const uint4*>(at);
      words[0] = v.x;
      words[1] = v.y;
      words[2] = v.z;
      words[3] = v.w;
    } else {
      const uint2 v = *reinterpret_cast<const uint2*>(at);
      words[0] = v.x;
      words[1] = v.y;
    }
    const bool f16 = dtype == HWINFER_DTYPE_F16;
#pragma unroll
    for (int q = 0; q < kElems / 2; ++q) {
      const auto lo = static_cast<uint16_t>(words[q] & 0xffffu);
      const auto hi = static_cast<uint16_t>(words[q] >> 16);
      out[2 * q] = f16 ? f16_to_float(lo) : bf16_to_float(lo);
      out[2 * q + 1] = f16 ? f16_to_float(hi) : bf16_to_float(hi);
    }
  } else {
#pragma unroll
    for (int e = 0; e < kElems; ++e) out[e] = load_float_element(row, dtype, l0 + e);
  }
}

// gemv_dot: see the file comment. |wide|: every row of b starts 16-byte aligned; |a_vector|: every
// row of a does. a's and b's element strides along k are 1.
template <uint32_t kB, int kM>
__global__ void __launch_bounds__(kThreads) gemv_dot(GemmProblem p, bool wide, bool a_vector) {
  constexpr int kElems = kB == HWINFER_DTYPE_F32 ? 4 : 8;  // values per 16-byte unit
  const int lane = static_cast<int>(threadIdx.x) % kLanes;
  const int64_t j =
      static_cast<int64_t>(blockIdx.x) * kColumnsPerBlock + static_cast<int>(threadIdx.x) / kLanes;
  const bool active = j < p.n;
  float acc[kM];
#pragma unroll
  for (int i = 0; i < kM; ++i) acc[i] = 0.0f;
  if (active) {
    const int64_t b_element = kB == HWINFER_DTYPE_F32 ? 4 : 2;
    const uint8_t* b_row = p.b.data + j * p.b.col_stride * b_element;
    const int64_t a_element = p.a.dtype == HWINFER_DTYPE_F32 ? 4 : 2;
    const uint8_t* a_rows[kM];
#pragma unroll
    for (int i = 0; i < kM; ++i) {
      const int64_t row = i < p.m ? i : p.m - 1;
      a_rows[i] = p.a.data + row * p.a.row_stride * a_element;
    }
    const int64_t units = wide ? p.k / kElems : 0;
    const uint4* b_units = reinterpret_cast<const uint4*>(b_row);
    auto accumulate = [&](const uint4& unit, int64_t u) {
      float w[kElems];
      unpack_unit<kB, kElems>(unit, w);
#pragma unroll
      for (int i = 0; i < kM; ++i) {
        float a_values[kElems];
        load_a_values<kElems>(a_rows[i], p.a.dtype, u * kElems, a_vector, a_values);
        float s = 0.0f;
#pragma unroll
        for (int e = 0; e < kElems; ++e) s = fmaf(a_values[e], w[e], s);
        acc[i] += s;
      }
    };
    int64_t u = lane;
    for (; u + (kUnroll - 1) * kLanes < units; u += kUnroll * kLanes) {
      uint4 loaded[kUnroll];
#pragma unroll
      for (int r = 0; r < kUnroll; ++r) loaded[r] = b_units[u + r * kLanes];
#pragma unroll
      for (int r = 0; r < kUnroll; ++r) accumulate(loaded[r], u + r * kLanes);
    }
    for (; u < units; u += kLanes) accumulate(b_units[u], u);
    // The elements past the last whole unit (all of them when not wide).
    for (int64_t l = units * kElems + lane; l < p.k; l += kLanes) {
      const float w = load_float_element(b_row, kB, l);
#pragma unroll
      for (int i = 0; i < kM; ++i) acc[i] += load_float_element(a_rows[i], p.a.dtype, l) * w;
    }
  }
  const float mine = lanes_sum_rows<kLanes>(acc, lane);  // row |lane|'s sum
  if (active && lane < kM && lane < p.m) write_output(p, lane, j, mine);
}

// gemv_columns: see the file comment. Any element strides.
template <int kM>
__global__ void __launch_bounds__(kThreads) gemv_columns(GemmProblem p) {
  __shared__ float partial[kM][kSlices][kColumnTile];
  const int tx = static_cast<int>(threadIdx.x) % kColumnTile;
  const int ty = static_cast<int>(threadIdx.x) / kColumnTile;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kColumnTile + tx;
  float acc[kM];
#pragma unroll
  for (int i = 0; i < kM; ++i) acc[i] = 0.0f;
  if (j < p.n) {
    for (int64_t l = ty; l < p.k; l += kSlices) {
      const float w =
          load_float_element(p.b.data, p.b.dtype, l * p.b.row_stride + j * p.b.col_stride);
#pragma unroll
      for (int i = 0; i < kM; ++i) {
        const int64_t row = i < p.m ? i : p.m - 1;
        acc[i] +=
            load_float_element(p.a.data, p.a.dtype, row * p.a.row_stride + l * p.a.col_stride) * w;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kM; ++i) partial[i][ty][tx] = acc[i];
  __syncthreads();
  if (ty == 0 && j < p.n) {
#pragma unroll
    for (int i = 0; i < kM; ++i) {
      if (i < p.m) {
        float sum = 0.0f;
#pragma unroll
        for (int s = 0; s < kSlices; ++s) sum += partial[i][s][tx];
        write_output(p, i, j, sum);
      }
    }
  }
}

bool aligned16(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

int64_t element_bytes(uint32_t dtype) { return dtype == HWINFER_DTYPE_F32 ? 4 : 2; }

template <uint32_t kB>
void launch_dot_rows(const GemmProblem& p, bool wide, bool a_vector, dim3 grid,
                     gpuStream_t stream) {
  if (p.m == 1) {
    {
      auto* launched_kernel = &gemv_dot<kB, 1>;
      GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, wide, a_vector);
    }
  } else if (p.m == 2) {
    {
      auto* launched_kernel = &gemv_dot<kB, 2>;
      GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, wide, a_vector);
    }
  } else if (p.m <= 4) {
    {
      auto* launched_kernel = &gemv_dot<kB, 4>;
      GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, wide, a_vector);
    }
  } else {
    {
      auto* launched_kernel = &gemv_dot<kB, 8>;
      GPU_LAUNCH(launched_kernel, grid, kThreads, 0, stream, p, wide, a_vector);
    }
  }
}

}  // namespace

gpuError_t launch_gemv(const GemmProblem& problem, gpuStream_t stream) {
  const GemmProblem& p = problem;
  const bool k_contiguous = p.k == 1 || (p.a.col_stride == 1 && p.b.row_stride == 1);
  if (k_contiguous) {
    const int64_t b_row_bytes = p.b.col_stride * element_bytes(p.b.dtype);
    const int64_t a_row_bytes = p.a.row_stride * element_bytes(p.a.dtype);
    const bool wide = aligned16(p.b.data) && (p.n == 1 || b_row_bytes % 16 == 0);
    const bool a_vector = aligned16(p.a.data) && (p.m == 1 || a_row_bytes % 16 == 0);
    const dim3 grid(static_cast<unsigned>((p.n + kColumnsPerBlock - 1) / kColumnsPerBlock));
    switch (p.b.dtype) {
      case HWINFER_DTYPE_F32:
        launch_dot_rows<HWINFER_DTYPE_F32>(p, wide, a_vector, grid, stream);
        break;
      case HWINFER_DTYPE_F16:
        launch_dot_rows<HWINFER_DTYPE_F16>(p, wide, a_vector, grid, stream);
        break;
      default:
        launch_dot_rows<HWINFER_DTYPE_BF16>(p, wide, a_vector, grid, stream);
        break;
    }
    return GPU(GetLastError)();
  }
  const dim3 grid(static_cast<unsigned>((p.n + kColumnTile - 1) / kColumnTile));
  if (p.m == 1) {
    GPU_LAUNCH(gemv_columns<1>, grid, kThreads, 0, stream, p);
  } else if (p.m == 2) {
    GPU_LAUNCH(gemv_columns<2>, grid, kThreads, 0, stream, p);
  } else if (p.m <= 4) {
    GPU_LAUNCH(gemv_columns<4>, grid, kThreads, 0, stream, p);
  } else {
    GPU_LAUNCH(gemv_columns<8>, grid, kThreads, 0, stream, p);
  }
  return GPU(GetLastError)();
}

}  // namespace hwinfer::gpu
