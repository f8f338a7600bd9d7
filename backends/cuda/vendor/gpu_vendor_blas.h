// gpu_vendor_blas.h (cuda) — cuBLAS under the names backends/cuda's vendor_blas.cpp uses:
// types and constants from cublas_api.h (types only: the entries are resolved with dlsym from the
// library files below, so nothing links against libcublas), the entry-name prefix, and the files
// to try.
#ifndef HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_BLAS_H_
#define HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_BLAS_H_

#include <cublas_api.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#define HWINFER_GPU_HAS_BLAS 1

namespace hwinfer::gpu::blas {

#define HWINFER_GPU_BLAS(name) cublas##name
using Handle = cublasHandle_t;
using Status = cublasStatus_t;
using Operation = cublasOperation_t;
using DataType = cudaDataType;
using ComputeType = cublasComputeType_t;
using Algo = cublasGemmAlgo_t;
using Property = libraryPropertyType;
inline constexpr Status kSuccess = CUBLAS_STATUS_SUCCESS;
inline constexpr Operation kOpN = CUBLAS_OP_N;
inline constexpr Operation kOpT = CUBLAS_OP_T;
inline constexpr DataType kF32 = CUDA_R_32F;
inline constexpr DataType kF16 = CUDA_R_16F;
inline constexpr DataType kBF16 = CUDA_R_16BF;
inline constexpr ComputeType kCompute32F = CUBLAS_COMPUTE_32F;  // not _FAST_TF32: fp32 products
inline constexpr Algo kDefaultAlgo = CUBLAS_GEMM_DEFAULT;
inline constexpr Property kVersionParts[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
inline constexpr const char* kName = "cuBLAS";
inline constexpr const char* kSymbolPrefix = "cublas";
// cuBLAS's recommended workspace on Hopper (4 MiB is enough before it).
inline constexpr uint64_t kWorkspaceBytes = uint64_t{32} << 20;
// Weights widened to F32 per GemmEx, at most (try_vendor_weight_product): big enough that each
// GemmEx is a large product, small enough that the stream's scratch stays modest.
inline constexpr uint64_t kWidenChunkBytes = uint64_t{64} << 20;
// cublas_api.h overloads cublasGemmEx in C++ (a wrapper taking a cudaDataType compute type): the
// cast picks the C entry, and fails to compile when its signature is not this one.
using GemmExFn = Status (*)(Handle, Operation, Operation, int, int, int, const void*, const void*,
                            DataType, int, const void*, DataType, int, const void*, void*, DataType,
                            int, ComputeType, Algo);
static_assert(std::is_same_v<decltype(static_cast<GemmExFn>(&cublasGemmEx)), GemmExFn>,
              "cublasGemmEx's C signature changed");

// Entries come from a library file: libcublas.so.13, .12, .11, then libcublas.so, or only the file
// HWINFER_CUBLAS_LIBRARY names.
inline constexpr bool kInProcess = false;
inline std::vector<std::string> library_files() {
  std::vector<std::string> candidates = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
                                         "libcublas.so"};
  if (const char* only = std::getenv("HWINFER_CUBLAS_LIBRARY"); only != nullptr && *only != 0) {
    candidates = {only};
  }
  return candidates;
}
inline void* in_process_symbol(const char*) { return nullptr; }
inline constexpr const char* kInProcessFile = "";

}  // namespace hwinfer::gpu::blas

#endif  // HWINFER_BACKENDS_CUDA_VENDOR_GPU_VENDOR_BLAS_H_
