// gpu_vendor_blas.h (hip) — no vendor BLAS in the hip plugin: Debian has no hipBLAS / rocBLAS
// package, so backends/cuda's gemm uses its built-in kernel; the option gemm=cublas is
// refused with kNoBlasReason.
#ifndef HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_BLAS_H_
#define HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_BLAS_H_

#define HWINFER_GPU_HAS_BLAS 0

namespace hwinfer::gpu::blas {

inline constexpr const char* kNoBlasReason =
    "hipBLAS / rocBLAS are not loaded: Debian has no package for them";

}  // namespace hwinfer::gpu::blas

#endif  // HWINFER_BACKENDS_HIP_VENDOR_GPU_VENDOR_BLAS_H_
