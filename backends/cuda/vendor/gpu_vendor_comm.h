// gpu_vendor_comm.h (cuda) — NCCL under the names backends/cuda's vendor_comm.cpp uses: types and
// constants from nccl.h (types only: the entries are resolved with dlsym from the library files
// below, so nothing links against libnccl), the entry-name prefix, and the files to try. Included
// only where HWINFER_GPU_HAS_COMM is 1: backends/cuda/CMakeLists.txt sets it when it finds nccl.h.
#ifndef HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_COMM_H_
#define HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_COMM_H_

#include <nccl.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace hwinfer::gpu::comm {

#define HWINFER_GPU_COMM(name) nccl##name
using Comm = ncclComm_t;
using Result = ncclResult_t;
using UniqueId = ncclUniqueId;
using Config = ncclConfig_t;
using DataType = ncclDataType_t;
using RedOp = ncclRedOp_t;
inline constexpr Result kSuccess = ncclSuccess;
inline constexpr Result kInProgress = ncclInProgress;
// The caller's misuse (NCCL: two ranks on one GPU; ranks given different counts).
inline constexpr Result kInvalidArgument = ncclInvalidArgument;
inline constexpr Result kInvalidUsage = ncclInvalidUsage;
inline constexpr DataType kFloat32 = ncclFloat32;
inline constexpr RedOp kSum = ncclSum;
inline Config default_config() {
  Config config = NCCL_CONFIG_INITIALIZER;
  return config;
}
inline constexpr const char* kName = "NCCL";
inline constexpr const char* kSymbolPrefix = "nccl";

// Entries come from a library file: libnccl.so.2, then libnccl.so, or only the file
// HWINFER_NCCL_LIBRARY names.
inline constexpr bool kInProcess = false;
inline std::vector<std::string> library_files() {
  std::vector<std::string> candidates = {"libnccl.so.2", "libnccl.so"};
  if (const char* only = std::getenv("HWINFER_NCCL_LIBRARY"); only != nullptr && *only != 0) {
    candidates = {only};
  }
  return candidates;
}
inline void* in_process_symbol(const char*) { return nullptr; }
inline constexpr const char* kInProcessFile = "";

}  // namespace hwinfer::gpu::comm

#endif  // HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_COMM_H_
