// gpu_vendor_device.h (gpuemu) — what backends/cuda's gpu_device.h needs for the kernel files
// when the emulator compiles them as plain C++ (emu_device.h): the launch and dynamic-shared-memory
// spellings, the warp size of this build (32, or 64 in the wave64 build) and the warp shuffle.
// No 4 x int8 dot product: gpu_device.h's portable one runs.
#ifndef HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_DEVICE_H_
#define HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_DEVICE_H_

#include "../emu_device.h"

#define GPU_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
  HWINFER_EMU_LAUNCH(kernel, grid, block, shared_bytes, stream, __VA_ARGS__)
#define GPU_DYNAMIC_SHARED(type, name) HWINFER_EMU_DYNAMIC_SHARED(type, name)

namespace hwinfer::gpu {

inline constexpr int kWarpSize = HWINFER_GPU_EMU_WARP_SIZE;

// |value| of the lane whose index is this lane's xor |offset|; every lane of the warp calls.
__device__ __forceinline__ float shfl_xor(float value, int offset) {
  return __shfl_xor(value, offset);
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_DEVICE_H_
