// gpu_runtime.h — the host-side vendor shim: one spelling of the GPU runtime API for the files of
// backends/cuda, which each GPU plugin compiles against its own runtime. The plugin's build
// puts its vendor folder on the include path (backends/cuda/vendor, backends/hip/vendor, or a test
// emulator's), whose gpu_vendor_runtime.h defines GPU(name) (GPU(Malloc) -> cudaMalloc, hipMalloc,
// ...: HIP mirrors the CUDA runtime name for name), the names and signatures that differ
// (host_alloc, graph_instantiate, ...), kPluginName and the vendor's hwinfer_device_info fields.
// Host code only: kernels include gpu_device.h. Must not hold state.
#ifndef HWINFER_BACKENDS_CUDA_GPU_RUNTIME_H_
#define HWINFER_BACKENDS_CUDA_GPU_RUNTIME_H_

#include "gpu_vendor_runtime.h"

// The vendor's types under one name.
using gpuError_t = GPU(Error_t);
using gpuStream_t = GPU(Stream_t);
using gpuEvent_t = GPU(Event_t);
using gpuGraph_t = GPU(Graph_t);          // a captured graph (GPU(StreamEndCapture))
using gpuGraphExec_t = GPU(GraphExec_t);  // its instantiation (graph_instantiate, GPU(GraphLaunch))
inline constexpr gpuError_t gpuSuccess = GPU(Success);

#endif  // HWINFER_BACKENDS_CUDA_GPU_RUNTIME_H_
