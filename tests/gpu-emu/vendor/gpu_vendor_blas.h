// gpu_vendor_blas.h (gpuemu) — the emulator's cuBLAS stand-in (emu_blas.h) under the names
// backends/cuda's vendor_blas.cpp uses; its entries are resolved in process
// (emublas_symbol), as cuBLAS's are with dlsym.
#ifndef HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_BLAS_H_
#define HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_BLAS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "../emu_blas.h"

#define HWINFER_GPU_HAS_BLAS 1

namespace hwinfer::gpu::blas {

#define HWINFER_GPU_BLAS(name) emublas##name
using Handle = emublasHandle_t;
using Status = emublasStatus_t;
using Operation = emublasOperation_t;
using DataType = emuDataType;
using ComputeType = emublasComputeType_t;
using Algo = emublasGemmAlgo_t;
using Property = emuLibraryPropertyType;
inline constexpr Status kSuccess = EMUBLAS_STATUS_SUCCESS;
inline constexpr Operation kOpN = EMUBLAS_OP_N;
inline constexpr Operation kOpT = EMUBLAS_OP_T;
inline constexpr DataType kF32 = EMU_R_32F;
inline constexpr DataType kF16 = EMU_R_16F;
inline constexpr DataType kBF16 = EMU_R_16BF;
inline constexpr ComputeType kCompute32F = EMUBLAS_COMPUTE_32F;
inline constexpr Algo kDefaultAlgo = EMUBLAS_GEMM_DEFAULT;
inline constexpr Property kVersionParts[3] = {EMU_MAJOR_VERSION, EMU_MINOR_VERSION,
                                              EMU_PATCH_LEVEL};
inline constexpr const char* kName = "the emulator's cuBLAS stand-in";
inline constexpr const char* kSymbolPrefix = "emublas";
inline constexpr uint64_t kWorkspaceBytes = uint64_t{1} << 20;
inline constexpr uint64_t kWidenChunkBytes = uint64_t{64} << 10;  // several chunks in the tests
using GemmExFn = decltype(&emublasGemmEx);

inline constexpr bool kInProcess = true;
inline std::vector<std::string> library_files() { return {}; }
inline void* in_process_symbol(const char* name) { return emublas_symbol(name); }
inline constexpr const char* kInProcessFile = "emu_blas.cpp";

}  // namespace hwinfer::gpu::blas

#endif  // HWINFER_TESTS_GPU_EMU_VENDOR_GPU_VENDOR_BLAS_H_
