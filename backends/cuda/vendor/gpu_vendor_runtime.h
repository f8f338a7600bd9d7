// gpu_vendor_runtime.h (cuda) — the CUDA runtime under the names backends/cuda's host files
// use (gpu_runtime.h includes it; each GPU plugin's build puts its own vendor/ folder on the
// include path): GPU(name) -> cudaName, the few names and signatures HIP does not mirror, and what
// hwinfer_device_info says about the vendor. Host code only; no state.
#ifndef HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_RUNTIME_H_
#define HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_RUNTIME_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "hwinfer/plugin.h"

#define GPU(name) cuda##name
#define HWINFER_GPU_VENDOR_RUNTIME "CUDA runtime"

namespace hwinfer::gpu {

inline constexpr const char* kPluginName = "cuda";

using DeviceProp = cudaDeviceProp;
inline constexpr cudaError_t kErrorOutOfMemory = cudaErrorMemoryAllocation;
inline constexpr cudaError_t kErrorNotReady = cudaErrorNotReady;
inline constexpr unsigned kHostAllocMapped = cudaHostAllocMapped | cudaHostAllocPortable;
inline cudaError_t host_alloc(void** ptr, size_t bytes) {
  return cudaHostAlloc(ptr, bytes, kHostAllocMapped);
}
inline cudaError_t host_free(void* ptr) { return cudaFreeHost(ptr); }
inline constexpr cudaStreamCaptureMode kCaptureModeRelaxed = cudaStreamCaptureModeRelaxed;
// CUDA 12 and later: (exec, graph, flags); CUDA 11's five-argument form is gone.
inline cudaError_t graph_instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
  return cudaGraphInstantiate(exec, graph, 0ULL);
}

// hwinfer_device_info's vendor-specific fields.
inline const char* vendor_name() { return "NVIDIA"; }
inline uint32_t vendor_device_type(const DeviceProp& prop) {
  return prop.integrated ? HWINFER_DEVICE_TYPE_INTEGRATED_GPU : HWINFER_DEVICE_TYPE_DISCRETE_GPU;
}
inline std::string vendor_arch(const DeviceProp& prop) {
  return "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
}
// 12040 -> "12.4"
inline std::string vendor_driver_text(int driver, int runtime) {
  const auto version_text = [](int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
  };
  return "CUDA driver " + version_text(driver) + ", runtime " + version_text(runtime);
}
inline void vendor_read_uuid(int ordinal, uint8_t out[16]) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, ordinal) == cudaSuccess) std::memcpy(out, prop.uuid.bytes, 16);
}

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_RUNTIME_H_
