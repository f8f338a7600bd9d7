// emu_blas.cpp — the CPU implementation of emu_blas.h (the emulator's cuBLAS stand-in), written
// from the cuBLAS documentation of cublasGemmEx: column-major operands, op N / T per operand,
// leading dimensions checked as cuBLAS checks them (lda >= max(1, transa == N ? m : k), ldb >=
// max(1, transb == N ? k : n), ldc >= max(1, m): INVALID_VALUE otherwise), the type combinations
// of CUBLAS_COMPUTE_32F (else NOT_SUPPORTED), fp32 accumulation in k order, beta == 0 never reads
// C, and C rounded to its type (round to nearest even) once per element.
#include "emu_blas.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "reference/half.h"

struct EmuBlasContext {
  emuStream_t stream = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

namespace {

bool is_known_type(emuDataType type) {
  return type == EMU_R_32F || type == EMU_R_16F || type == EMU_R_16BF;
}

float load(const void* base, emuDataType type, int64_t index) {
  if (type == EMU_R_32F) return static_cast<const float*>(base)[index];
  const uint16_t bits = static_cast<const uint16_t*>(base)[index];
  return type == EMU_R_16F ? hwinfer::reference::f16_to_f32(bits)
                           : hwinfer::reference::bf16_to_f32(bits);
}

void store(void* base, emuDataType type, int64_t index, float value) {
  if (type == EMU_R_32F) {
    static_cast<float*>(base)[index] = value;
  } else {
    static_cast<uint16_t*>(base)[index] = type == EMU_R_16F
                                              ? hwinfer::reference::f32_to_f16(value)
                                              : hwinfer::reference::f32_to_bf16(value);
  }
}

// Element (row, col) of op(X), X column-major with leading dimension ld.
float load_op(const void* x, emuDataType type, int ld, emublasOperation_t op, int64_t row,
              int64_t col) {
  return op == EMUBLAS_OP_N ? load(x, type, row + col * static_cast<int64_t>(ld))
                            : load(x, type, col + row * static_cast<int64_t>(ld));
}

}  // namespace

emublasStatus_t emublasCreate_v2(emublasHandle_t* handle) {
  if (handle == nullptr) return EMUBLAS_STATUS_INVALID_VALUE;
  *handle = new (std::nothrow) EmuBlasContext();
  return *handle == nullptr ? EMUBLAS_STATUS_ALLOC_FAILED : EMUBLAS_STATUS_SUCCESS;
}

emublasStatus_t emublasDestroy_v2(emublasHandle_t handle) {
  if (handle == nullptr) return EMUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return EMUBLAS_STATUS_SUCCESS;
}

emublasStatus_t emublasSetStream_v2(emublasHandle_t handle, emuStream_t stream) {
  if (handle == nullptr) return EMUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  // As cuBLAS: setting the stream drops a user workspace (back to the library's own pool).
  handle->workspace = nullptr;
  handle->workspace_bytes = 0;
  return EMUBLAS_STATUS_SUCCESS;
}

emublasStatus_t emublasSetWorkspace_v2(emublasHandle_t handle, void* workspace, size_t bytes) {
  if (handle == nullptr) return EMUBLAS_STATUS_NOT_INITIALIZED;
  // cuBLAS: the workspace must be 256-byte aligned (the emulator's allocations are).
  if (workspace == nullptr ? bytes != 0 : reinterpret_cast<uintptr_t>(workspace) % 256 != 0) {
    return EMUBLAS_STATUS_INVALID_VALUE;
  }
  handle->workspace = workspace;
  handle->workspace_bytes = bytes;
  return EMUBLAS_STATUS_SUCCESS;
}

emublasStatus_t emublasGetProperty(emuLibraryPropertyType type, int* value) {
  if (value == nullptr) return EMUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case EMU_MAJOR_VERSION:
      *value = 13;
      return EMUBLAS_STATUS_SUCCESS;
    case EMU_MINOR_VERSION:
      *value = 0;
      return EMUBLAS_STATUS_SUCCESS;
    case EMU_PATCH_LEVEL:
      *value = 0;
      return EMUBLAS_STATUS_SUCCESS;
  }
  return EMUBLAS_STATUS_INVALID_VALUE;
}

emublasStatus_t emublasGemmEx(emublasHandle_t handle, emublasOperation_t transa,
                              emublasOperation_t transb, int m, int n, int k, const void* alpha,
                              const void* A, emuDataType Atype, int lda, const void* B,
                              emuDataType Btype, int ldb, const void* beta, void* C,
                              emuDataType Ctype, int ldc, emublasComputeType_t computeType,
                              emublasGemmAlgo_t algo) {
  if (handle == nullptr) return EMUBLAS_STATUS_NOT_INITIALIZED;
  const bool ops_known = (transa == EMUBLAS_OP_N || transa == EMUBLAS_OP_T) &&
                         (transb == EMUBLAS_OP_N || transb == EMUBLAS_OP_T);
  if (!ops_known || m < 0 || n < 0 || k < 0 || alpha == nullptr || beta == nullptr ||
      lda < std::max(1, transa == EMUBLAS_OP_N ? m : k) ||
      ldb < std::max(1, transb == EMUBLAS_OP_N ? k : n) || ldc < std::max(1, m)) {
    return EMUBLAS_STATUS_INVALID_VALUE;
  }
  if (computeType != EMUBLAS_COMPUTE_32F || algo != EMUBLAS_GEMM_DEFAULT || !is_known_type(Atype) ||
      Atype != Btype || (Ctype != EMU_R_32F && Ctype != Atype)) {
    return EMUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (m == 0 || n == 0) return EMUBLAS_STATUS_SUCCESS;
  if (A == nullptr || B == nullptr || C == nullptr) return EMUBLAS_STATUS_INVALID_VALUE;
  float a_scale = 0.0f;
  float b_scale = 0.0f;
  std::memcpy(&a_scale, alpha, sizeof(float));  // CUBLAS_POINTER_MODE_HOST: host scalars
  std::memcpy(&b_scale, beta, sizeof(float));
  // The suite's self-test (conformance_self_gpuemu_vendor_blas_is_checked) breaks the result.
  static const bool fault = std::getenv("HWINFER_GPUEMU_BLAS_FAULT") != nullptr;
  if (fault) a_scale *= 1.0f + 1.0f / 1024.0f;
  // In stream order: now, or behind the stream's capture or queue (emu_runtime.h).
  emu::submit(handle->stream, [=]() {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < m; ++i) {
        float sum = 0.0f;
        for (int64_t l = 0; l < k; ++l) {
          sum += load_op(A, Atype, lda, transa, i, l) * load_op(B, Btype, ldb, transb, l, j);
        }
        const int64_t at = i + j * static_cast<int64_t>(ldc);
        float value = a_scale * sum;
        if (b_scale != 0.0f) value += b_scale * load(C, Ctype, at);
        store(C, Ctype, at, value);
      }
    }
    return emuSuccess;
  });
  return EMUBLAS_STATUS_SUCCESS;
}

void* emublas_symbol(const char* name) {
  struct Entry {
    const char* name;
    void* address;
  };
  static const Entry kEntries[] = {
      {"emublasCreate_v2", reinterpret_cast<void*>(&emublasCreate_v2)},
      {"emublasDestroy_v2", reinterpret_cast<void*>(&emublasDestroy_v2)},
      {"emublasSetStream_v2", reinterpret_cast<void*>(&emublasSetStream_v2)},
      {"emublasSetWorkspace_v2", reinterpret_cast<void*>(&emublasSetWorkspace_v2)},
      {"emublasGetProperty", reinterpret_cast<void*>(&emublasGetProperty)},
      {"emublasGemmEx", reinterpret_cast<void*>(&emublasGemmEx)},
  };
  for (const Entry& entry : kEntries) {
    if (std::strcmp(entry.name, name) == 0) return entry.address;
  }
  return nullptr;
}
