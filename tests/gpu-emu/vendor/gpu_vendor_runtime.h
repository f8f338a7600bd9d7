// gpu_vendor_runtime.h (gpuemu) — the CPU emulator's runtime (emu_runtime.h) under the names
// backends/cuda's host files use, as the cuda and hip plugins' vendor headers give theirs:
// GPU(name) -> emuName, and what hwinfer_device_info says about the emulated device. Host only.
#ifndef HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_RUNTIME_H_
#define HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_RUNTIME_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "../emu_runtime.h"
#include "hwinfer/plugin.h"

#define GPU(name) emu##name
#define HWINFER_GPU_VENDOR_RUNTIME "GPU emulator runtime"

namespace hwinfer::gpu {

inline constexpr const char* kPluginName = "gpuemu";

using DeviceProp = emuDeviceProp;
inline constexpr emuError_t kErrorOutOfMemory = emuErrorMemoryAllocation;
inline constexpr emuError_t kErrorNotReady = emuErrorNotReady;
inline constexpr unsigned kHostAllocMapped = emuHostAllocMapped | emuHostAllocPortable;
inline emuError_t host_alloc(void** ptr, size_t bytes) {
  return emuHostAlloc(ptr, bytes, kHostAllocMapped);
}
inline emuError_t host_free(void* ptr) { return emuFreeHost(ptr); }
inline constexpr emuStreamCaptureMode kCaptureModeRelaxed = emuStreamCaptureModeRelaxed;
inline emuError_t graph_instantiate(emuGraphExec_t* exec, emuGraph_t graph) {
  return emuGraphInstantiate(exec, graph, 0);
}

// hwinfer_device_info's vendor-specific fields. Real numerics (the kernels run on the CPU), so
// not VIRTUAL: the conformance suite runs it.
inline const char* vendor_name() { return "hwinfer"; }
inline uint32_t vendor_device_type(const DeviceProp&) { return HWINFER_DEVICE_TYPE_OTHER; }
inline std::string vendor_arch(const DeviceProp&) { return "emulated, warp 32"; }
inline std::string vendor_driver_text(int driver, int runtime) {
  return "GPU emulator on the CPU (driver " + std::to_string(driver) + ", runtime " +
         std::to_string(runtime) + ")";
}
inline void vendor_read_uuid(int, uint8_t out[16]) {
  std::memcpy(out, "hwinfer-gpuemu-0", 16);  // fixed: one emulated device
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_RUNTIME_H_
