// gpu_vendor_runtime.h (hip) — the HIP runtime under the names backends/cuda's host files
// use (gpu_runtime.h includes it; each GPU plugin's build puts its own vendor/ folder on the
// include path): GPU(name) -> hipName (HIP mirrors the CUDA runtime name for name), the few names
// and signatures that differ, and what hwinfer_device_info says about the vendor. Host code only.
#ifndef HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_RUNTIME_H_
#define HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_RUNTIME_H_

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "hwinfer/plugin.h"

#define GPU(name) hip##name
#define HWINFER_GPU_VENDOR_RUNTIME "HIP runtime"

namespace hwinfer::gpu {

inline constexpr const char* kPluginName = "hip";

using DeviceProp = hipDeviceProp_t;
inline constexpr hipError_t kErrorOutOfMemory = hipErrorOutOfMemory;
inline constexpr hipError_t kErrorNotReady = hipErrorNotReady;
inline constexpr unsigned kHostAllocMapped = hipHostMallocMapped | hipHostMallocPortable;
inline hipError_t host_alloc(void** ptr, size_t bytes) {
  return hipHostMalloc(ptr, bytes, kHostAllocMapped);
}
inline hipError_t host_free(void* ptr) { return hipHostFree(ptr); }
inline constexpr hipStreamCaptureMode kCaptureModeRelaxed = hipStreamCaptureModeRelaxed;
// HIP keeps CUDA 11's five-argument hipGraphInstantiate (error node, log buffer); the flags form
// is hipGraphInstantiateWithFlags.
inline hipError_t graph_instantiate(hipGraphExec_t* exec, hipGraph_t graph) {
  return hipGraphInstantiateWithFlags(exec, graph, 0ULL);
}

// hwinfer_device_info's vendor-specific fields.
inline const char* vendor_name() { return "AMD"; }
inline uint32_t vendor_device_type(const DeviceProp& prop) {
  return prop.integrated ? HWINFER_DEVICE_TYPE_INTEGRATED_GPU : HWINFER_DEVICE_TYPE_DISCRETE_GPU;
}
inline std::string vendor_arch(const DeviceProp& prop) { return prop.gcnArchName; }
inline std::string vendor_driver_text(int driver, int runtime) {
  return "HIP driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime);
}
inline void vendor_read_uuid(int ordinal, uint8_t out[16]) {
  hipDevice_t device{};
  hipUUID uuid{};
  if (hipDeviceGet(&device, ordinal) == hipSuccess &&
      hipDeviceGetUuid(&uuid, device) == hipSuccess) {
    std::memcpy(out, uuid.bytes, 16);
  }
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_RUNTIME_H_
