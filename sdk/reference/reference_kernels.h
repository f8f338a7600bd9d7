// reference_kernels.h — the scalar reference kernels: the oracle every backend is compared against
// (the conformance suite and the CPU plugin's own checks link them).
//
// Plain loops that read top to bottom, accumulating in double. They must stay obviously correct:
// no blocking, no threads, no SIMD, no clever tricks; speed is not a goal. They work on host
// pointers with element (not byte) strides and know nothing of the plugin ABI.
#ifndef HWINFER_SDK_REFERENCE_REFERENCE_KERNELS_H_
#define HWINFER_SDK_REFERENCE_REFERENCE_KERNELS_H_

#include <cstdint>

namespace hwinfer::reference {

// c[m,n] = alpha * sum_k a[m,k] * B[k,n] + beta * c[m,n], the sum accumulated in double.
//   a: [m, k], row stride |lda| elements (a[i,l] = a[i * lda + l])
//   b: [k, n], row stride |ldb| (b[l,j] = b[l * ldb + j]), or, when |b_transposed|,
//      [n, k] (B[l,j] = b[j * ldb + l]) — GGUF's layout for a linear layer's weight
//   c: [m, n], row stride |ldc|
// beta == 0 makes c write-only: its old contents (even NaN) are ignored.
void gemm_reference_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                        const float* b, int64_t ldb, bool b_transposed, float* c, int64_t ldc,
                        float alpha, float beta);

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_REFERENCE_KERNELS_H_
