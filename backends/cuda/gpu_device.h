// gpu_device.h — the device-side vendor shim every kernel file (*.cu) of backends/cuda
// includes, so one source compiles with nvcc (the cuda plugin), with hipcc (the hip plugin) and
// with the host compiler as plain C++ for the test-only GPU emulator (the gpuemu plugin the
// conformance suite runs in CI), each through its own gpu_vendor_device.h: the runtime header, the
// warp size (32 on NVIDIA, RDNA and the emulator, 64 on CDNA; a device-side constant, never a host
// launch parameter), warp shuffles and sums, the 4 x int8 dot product (dp4a), half and bfloat16
// conversions on raw 16-bit words (the ABI's F16/BF16 storage), the error word, and the launch
// and dynamic-shared-memory macros.
//
// Rules for kernels: launch geometry on the host never depends on the warp size (block sizes are
// multiples of 64); reductions go through warp_sum / block_sum below.
//
// What a kernel file must do to also run under the emulator (g++ -x c++):
//   1. Launch only with GPU_LAUNCH(kernel, grid, block, shared_bytes, stream, args...), never
//      with kernel<<<grid, block, shared_bytes, stream>>>(args...). |kernel| must not contain a
//      top-level comma: for a template with several arguments take a pointer first,
//        auto* kernel = &tiled_gemm<64, 64>;  GPU_LAUNCH(kernel, grid, 256, 0, stream, a, b);
//      (a single template argument, rms_norm_kernel<4>, is fine as it is). At least one argument.
//      The emulator's convert_launches.py FILE.cu... does 1 and 2 (then clang-format).
//   2. Dynamic shared memory: GPU_DYNAMIC_SHARED(float, cache); inside the kernel instead of
//      extern __shared__ float cache[]; (|cache| is then a float* under the emulator).
//   3. Device code only through this header: threadIdx/blockIdx/blockDim/gridDim, __syncthreads,
//      __shared__ (static arrays, scalars), the warp helpers below or __shfl_*_sync with a full
//      mask (every lane of the warp must arrive; HIP's __shfl_* go through the same), atomics
//      (atomicAdd/Sub/Max/Min/Or/And/Exch/CAS), __dp4a, __float_as_uint and friends,
//      __fmul_rn/__fadd_rn/__fsub_rn/__fdiv_rn, <cmath>'s functions (expf, fmaxf, rintf, ...),
//      uint2/uint4/float2/float4/int2/int4 and make_*, __half conversions. Anything else a kernel
//      needs is added to the emulator's emu_device.h (its list is the reference).
//   4. No vendor #ifs in kernel files: what differs between vendors goes into every vendor
//      folder's gpu_vendor_device.h, behind one name (as shfl_xor and vendor_dot4_i8 are).
//   5. A header shared by host and kernel files that hides its device part behind
//      `#if defined(__CUDACC__) || defined(__HIP__)` adds `|| defined(HWINFER_GPU_KERNEL_FILE)`
//      (what a build that compiles the kernel files as plain C++, the emulator's, defines for
//      them).
//   6. Every __syncthreads and warp operation must be reached by every thread of the block / lane
//      of the warp (the emulator aborts with the kernel's name otherwise), and the file must be
//      free of -Wall warnings under g++ (-Wunknown-pragmas off: #pragma unroll is fine).
//   Then list the .cu in sources.cmake's HWINFER_GPU_KERNEL_SOURCES as usual: the gpuemu build
//   compiles it too, and the ctest conformance_gpuemu runs its kernels against the CPU reference.
#ifndef HWINFER_BACKENDS_CUDA_GPU_DEVICE_H_
#define HWINFER_BACKENDS_CUDA_GPU_DEVICE_H_

#include <cstdint>

#include "device_errors.h"
#include "hwinfer/plugin.h"

// The vendor's part (the plugin's build puts its vendor/ folder on the include path): headers,
// GPU_LAUNCH(kernel, grid, block, shared_bytes, stream, args...) and GPU_DYNAMIC_SHARED(type,
// name) (see the top of the file), kWarpSize, shfl_xor, and vendor_dot4_i8 where
// HWINFER_GPU_HAS_DOT4_I8.
#include "gpu_runtime.h"
#include "gpu_vendor_device.h"

namespace hwinfer::gpu {

// Every lane of an aligned group of |kLanes| lanes (a power of two <= kWarpSize; xor offsets below
// kLanes stay inside the group on 32- and 64-wide warps) gets the sum / maximum of |value| over the
// group. Every lane of the group must call.
template <int kLanes>
__device__ __forceinline__ float lanes_sum(float value) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    value += shfl_xor(value, offset);
  }
  return value;
}

template <int kLanes>
__device__ __forceinline__ float lanes_max(float value) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    value = fmaxf(value, shfl_xor(value, offset));
  }
  return value;
}

// The GEMVs' reduction (gemv.cu, matmul_q.cu, matmul_q_dequant.cu): |acc| holds one partial sum
// per row of x; lane i of an aligned group of |kLanes| lanes gets row i's sum over the group
// (lanes i >= kM get 0). Every lane of the group must call.
template <int kLanes, int kM>
__device__ __forceinline__ float lanes_sum_rows(const float (&acc)[kM], int lane) {
  float mine = 0.0f;
#pragma unroll
  for (int i = 0; i < kM; ++i) {
    const float total = lanes_sum<kLanes>(acc[i]);
    if (lane == i) mine = total;
  }
  return mine;
}

// Every lane of the warp gets the sum / maximum of |value| over the warp.
__device__ __forceinline__ float warp_sum(float value) { return lanes_sum<kWarpSize>(value); }
__device__ __forceinline__ float warp_max(float value) { return lanes_max<kWarpSize>(value); }

// The sum of |value| over the block, returned to every thread. |shared| holds at least
// blockDim.x / kWarpSize floats (32 covers 1024 threads on any warp size). Every thread of the
// block must call it; it synchronises twice.
__device__ __forceinline__ float block_sum(float value, float* shared) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int n_warps = (static_cast<int>(blockDim.x) + kWarpSize - 1) / kWarpSize;
  value = warp_sum(value);
  __syncthreads();  // |shared| may still be read by a previous call
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < n_warps; ++w) total += shared[w];
  return total;
}

__device__ __forceinline__ float block_max(float value, float* shared) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int n_warps = (static_cast<int>(blockDim.x) + kWarpSize - 1) / kWarpSize;
  value = warp_max(value);
  __syncthreads();
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  float result = shared[0];
  for (int w = 1; w < n_warps; ++w) result = fmaxf(result, shared[w]);
  return result;
}

// c + the dot product of the four signed bytes of |a| and |b|.
__device__ __forceinline__ int dot4_i8(int a, int b, int c) {
#if defined(HWINFER_GPU_HAS_DOT4_I8)
  return vendor_dot4_i8(a, b, c);
#else
  const int8_t* x = reinterpret_cast<const int8_t*>(&a);
  const int8_t* y = reinterpret_cast<const int8_t*>(&b);
  return c + x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
#endif
}

// IEEE binary16 <-> float on raw bits (round to nearest even, as the CPU backend).
__device__ __forceinline__ float f16_to_float(uint16_t bits) {
  return __half2float(__ushort_as_half(bits));
}
__device__ __forceinline__ uint16_t float_to_f16(float value) {
  return __half_as_ushort(__float2half_rn(value));
}
// bfloat16 <-> float on raw bits: the high half of a float; rounding to nearest even, NaN kept
// quiet (the CPU backend's rule).
__device__ __forceinline__ float bf16_to_float(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}
__device__ __forceinline__ uint16_t float_to_bf16(float value) {
  const uint32_t bits = __float_as_uint(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

// The register-tile step of the shared-memory tiled GEMMs (gemm.cu, matmul_q.cu): a 64 x 64
// output tile computed by 16 x 16 threads, 4 x 4 outputs each (rows ty + 16 r, columns tx + 16 c).
// acc[r][c] += sum over kk < kTileK of a_tile[kk][ty + 16 r] * b_tile[kk][tx + 16 c]; the tiles
// are stored k-major with one float of padding per row. The caller synchronises around it.
template <int kTileK>
__device__ __forceinline__ void accumulate_register_tile(const float (*a_tile)[65],
                                                         const float (*b_tile)[65], int tx, int ty,
                                                         float (&acc)[4][4]) {
#pragma unroll
  for (int kk = 0; kk < kTileK; ++kk) {
    float a_values[4];
    float b_values[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) a_values[r] = a_tile[kk][ty + 16 * r];
#pragma unroll
    for (int c = 0; c < 4; ++c) b_values[c] = b_tile[kk][tx + 16 * c];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[r][c] = fmaf(a_values[r], b_values[c], acc[r][c]);
    }
  }
}

// Element |index| of an F32, F16 or BF16 array (|dtype| is HWINFER_DTYPE_*) as a float, and the
// store back with the CPU backend's rounding (to nearest even).
__device__ __forceinline__ float load_float_element(const uint8_t* base, uint32_t dtype,
                                                    int64_t index) {
  if (dtype == HWINFER_DTYPE_F32) return reinterpret_cast<const float*>(base)[index];
  const uint16_t bits = reinterpret_cast<const uint16_t*>(base)[index];
  return dtype == HWINFER_DTYPE_F16 ? f16_to_float(bits) : bf16_to_float(bits);
}

__device__ __forceinline__ void store_float_element(uint8_t* base, uint32_t dtype, int64_t index,
                                                    float value) {
  if (dtype == HWINFER_DTYPE_F32) {
    reinterpret_cast<float*>(base)[index] = value;
  } else {
    reinterpret_cast<uint16_t*>(base)[index] =
        dtype == HWINFER_DTYPE_F16 ? float_to_f16(value) : float_to_bf16(value);
  }
}

// Records |code| in the stream's error word unless an earlier error is there (first one wins).
__device__ __forceinline__ void set_device_error(int32_t* error_word, int32_t code) {
  atomicCAS(reinterpret_cast<int*>(error_word), 0, static_cast<int>(code));
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_GPU_DEVICE_H_
