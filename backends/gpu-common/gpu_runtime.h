// gpu_runtime.h — the host-side vendor shim: one spelling of the GPU runtime API for the files of
// backends/gpu-common, compiled once against the CUDA runtime (HWINFER_GPU_CUDA, the cuda plugin),
// once against the HIP runtime (HWINFER_GPU_HIP, the hip plugin) and once against the CPU
// emulator's runtime (HWINFER_GPU_EMU, the test-only gpuemu plugin: backends/gpu-emu).
//
// HIP mirrors the CUDA runtime name for name (cudaMalloc <-> hipMalloc), so GPU(Malloc) expands to
// the vendor's function; the few names or signatures that differ are aliased below
// (host_alloc, graph_instantiate, ...). Host code only: kernels
// include gpu_device.h. Must not hold state or include anything but the vendor's runtime API.
#ifndef HWINFER_BACKENDS_GPU_COMMON_GPU_RUNTIME_H_
#define HWINFER_BACKENDS_GPU_COMMON_GPU_RUNTIME_H_

#if defined(HWINFER_GPU_CUDA) + defined(HWINFER_GPU_HIP) + defined(HWINFER_GPU_EMU) != 1
#error "define exactly one of HWINFER_GPU_CUDA, HWINFER_GPU_HIP and HWINFER_GPU_EMU"
#endif

#if defined(HWINFER_GPU_EMU)
#include "../gpu-emu/emu_runtime.h"
#define GPU(name) emu##name
#define HWINFER_GPU_VENDOR_RUNTIME "GPU emulator runtime"
namespace hwinfer::gpu {
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
}  // namespace hwinfer::gpu
#elif defined(HWINFER_GPU_CUDA)
#include <cuda_runtime_api.h>
#define GPU(name) cuda##name
#define HWINFER_GPU_VENDOR_RUNTIME "CUDA runtime"
namespace hwinfer::gpu {
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
}  // namespace hwinfer::gpu
#else
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#define GPU(name) hip##name
#define HWINFER_GPU_VENDOR_RUNTIME "HIP runtime"
namespace hwinfer::gpu {
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
}  // namespace hwinfer::gpu
#endif

// The vendor's types under one name.
using gpuError_t = GPU(Error_t);
using gpuStream_t = GPU(Stream_t);
using gpuEvent_t = GPU(Event_t);
using gpuGraph_t = GPU(Graph_t);          // a captured graph (GPU(StreamEndCapture))
using gpuGraphExec_t = GPU(GraphExec_t);  // its instantiation (graph_instantiate, GPU(GraphLaunch))
inline constexpr gpuError_t gpuSuccess = GPU(Success);

#endif  // HWINFER_BACKENDS_GPU_COMMON_GPU_RUNTIME_H_
