// gpu_vendor_device.h (hip) — what backends/cuda's gpu_device.h needs from HIP for the kernel
// files (hipcc): the runtime and half-precision headers, the launch and dynamic-shared-memory
// spellings, the warp (wavefront) size, the warp shuffle and, where the ISA has it, the 4 x int8
// dot product.
#ifndef HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_DEVICE_H_
#define HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_DEVICE_H_

#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#define GPU_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
  kernel<<<grid, block, shared_bytes, stream>>>(__VA_ARGS__)
#define GPU_DYNAMIC_SHARED(type, name) extern __shared__ type name[]

namespace hwinfer::gpu {

#if defined(__AMDGCN_WAVEFRONT_SIZE)
inline constexpr int kWarpSize = __AMDGCN_WAVEFRONT_SIZE;
#else
inline constexpr int kWarpSize = 64;  // the host pass; device code sees the real value
#endif

// |value| of the lane whose index is this lane's xor |offset|; every lane of the warp calls.
__device__ __forceinline__ float shfl_xor(float value, int offset) {
  return __shfl_xor(value, offset);
}

#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx1030__)
#define HWINFER_GPU_HAS_DOT4_I8 1
// c + the dot product of the four signed bytes of |a| and |b|.
__device__ __forceinline__ int vendor_dot4_i8(int a, int b, int c) {
  return __builtin_amdgcn_sdot4(a, b, c, false);
}
#endif

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_DEVICE_H_
