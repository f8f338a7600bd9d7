// gpu_vendor_comm.h (gpuemu) — the emulator's NCCL stand-in (emu_nccl.h) under the names
// backends/cuda's vendor_comm.cpp uses; its entries are resolved in process (emunccl_symbol), as
// NCCL's are with dlsym.
#ifndef HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_COMM_H_
#define HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_COMM_H_

#include <string>
#include <vector>

#include "../emu_nccl.h"

namespace hwinfer::gpu::comm {

#define HWINFER_GPU_COMM(name) emunccl##name
using Comm = emuncclComm_t;
using Result = emuncclResult_t;
using UniqueId = emuncclUniqueId;
using Config = emuncclConfig_t;
using DataType = emuncclDataType_t;
using RedOp = emuncclRedOp_t;
inline constexpr Result kSuccess = emuncclSuccess;
inline constexpr Result kInProgress = emuncclInProgress;
// The caller's misuse (NCCL: two ranks on one GPU; ranks given different counts).
inline constexpr Result kInvalidArgument = emuncclInvalidArgument;
inline constexpr Result kInvalidUsage = emuncclInvalidUsage;
inline constexpr DataType kFloat32 = emuncclFloat32;
inline constexpr RedOp kSum = emuncclSum;
inline Config default_config() {
  Config config = EMUNCCL_CONFIG_INITIALIZER;
  return config;
}
inline constexpr const char* kName = "the emulator's NCCL stand-in";
inline constexpr const char* kSymbolPrefix = "emunccl";

inline constexpr bool kInProcess = true;
inline std::vector<std::string> library_files() { return {}; }
inline void* in_process_symbol(const char* name) { return emunccl_symbol(name); }
inline constexpr const char* kInProcessFile = "emu_nccl.cpp";

}  // namespace hwinfer::gpu::comm

#endif  // HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_COMM_H_
