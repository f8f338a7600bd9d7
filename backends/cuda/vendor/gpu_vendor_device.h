// gpu_vendor_device.h (cuda) — what backends/cuda's gpu_device.h needs from CUDA for the
// kernel files (nvcc): the runtime and half-precision headers, the launch and dynamic-shared-memory
// spellings, the warp size, the warp shuffle and the 4 x int8 dot product.
#ifndef HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_DEVICE_H_
#define HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_DEVICE_H_

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define GPU_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
  kernel<<<grid, block, shared_bytes, stream>>>(__VA_ARGS__)
#define GPU_DYNAMIC_SHARED(type, name) extern __shared__ type name[]

namespace hwinfer::gpu {

inline constexpr int kWarpSize = 32;

// |value| of the lane whose index is this lane's xor |offset|; every lane of the warp calls.
__device__ __forceinline__ float shfl_xor(float value, int offset) {
  return __shfl_xor_sync(0xffffffffu, value, offset);
}

#define HWINFER_GPU_HAS_DOT4_I8 1
// c + the dot product of the four signed bytes of |a| and |b|.
__device__ __forceinline__ int vendor_dot4_i8(int a, int b, int c) { return __dp4a(a, b, c); }

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_DEVICE_H_
