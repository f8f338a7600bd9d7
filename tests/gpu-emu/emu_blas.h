// emu_blas.h — the GPU emulator's stand-in for cuBLAS: the subset of the cuBLAS
// API that backends/cuda/vendor_blas.cpp calls, spelled emublas<Name> / EMUBLAS_* / EMU_R_*
// with cuBLAS's values, implemented on the CPU in emu_blas.cpp from the cuBLAS documentation. It
// stands in for the dlopen'd libcublas: vendor_blas.cpp resolves these entries by name
// (emublas_symbol) as it resolves cuBLAS's with dlsym, so the gpuemu plugin with the plugin option
// gemm=cublas runs the conformance suite through the row-major -> column-major mapping.
//
// Semantics (cuBLAS's, COLUMN-major): C [m, n] = alpha * op(A) [m, k] @ op(B) [k, n] + beta * C,
// element (i, j) of a matrix X with leading dimension ldx at X[i + j * ldx]; op(X) = X (OP_N) or
// X^T (OP_T). beta == 0: C is not read. Types: A and B both EMU_R_32F, EMU_R_16F or EMU_R_16BF; C
// EMU_R_32F or A's type; compute EMUBLAS_COMPUTE_32F (fp32 accumulation, f32 alpha / beta on the
// host). In stream order, like every emulated stream operation (emu::submit). With
// HWINFER_GPUEMU_BLAS_FAULT set every GemmEx result is off by 2^-10 relative (the self-test that
// the suite really goes through it). Must not include vendor headers.
#ifndef HWINFER_TESTS_GPU_EMU_EMU_BLAS_H_
#define HWINFER_TESTS_GPU_EMU_EMU_BLAS_H_

#include <cstddef>

#include "emu_runtime.h"

enum emublasStatus_t : int {
  EMUBLAS_STATUS_SUCCESS = 0,
  EMUBLAS_STATUS_NOT_INITIALIZED = 1,
  EMUBLAS_STATUS_ALLOC_FAILED = 3,
  EMUBLAS_STATUS_INVALID_VALUE = 7,
  EMUBLAS_STATUS_NOT_SUPPORTED = 15,
};

enum emublasOperation_t : int { EMUBLAS_OP_N = 0, EMUBLAS_OP_T = 1, EMUBLAS_OP_C = 2 };

// cudaDataType's values for the three types.
enum emuDataType : int { EMU_R_32F = 0, EMU_R_16F = 2, EMU_R_16BF = 14 };

enum emublasComputeType_t : int { EMUBLAS_COMPUTE_32F = 68 };

enum emublasGemmAlgo_t : int { EMUBLAS_GEMM_DEFAULT = -1 };

// libraryPropertyType's values.
enum emuLibraryPropertyType : int {
  EMU_MAJOR_VERSION = 0,
  EMU_MINOR_VERSION = 1,
  EMU_PATCH_LEVEL = 2
};

struct EmuBlasContext;
using emublasHandle_t = EmuBlasContext*;

emublasStatus_t emublasCreate_v2(emublasHandle_t* handle);
emublasStatus_t emublasDestroy_v2(emublasHandle_t handle);
emublasStatus_t emublasSetStream_v2(emublasHandle_t handle, emuStream_t stream);
emublasStatus_t emublasSetWorkspace_v2(emublasHandle_t handle, void* workspace, size_t bytes);
emublasStatus_t emublasGetProperty(emuLibraryPropertyType type, int* value);
emublasStatus_t emublasGemmEx(emublasHandle_t handle, emublasOperation_t transa,
                              emublasOperation_t transb, int m, int n, int k, const void* alpha,
                              const void* A, emuDataType Atype, int lda, const void* B,
                              emuDataType Btype, int ldb, const void* beta, void* C,
                              emuDataType Ctype, int ldc, emublasComputeType_t computeType,
                              emublasGemmAlgo_t algo);

// The entry named |name| ("emublasGemmEx", ...) as dlsym would return it from a library, or
// nullptr for a name this stand-in does not have.
void* emublas_symbol(const char* name);

#endif  // HWINFER_TESTS_GPU_EMU_EMU_BLAS_H_
