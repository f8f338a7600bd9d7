// reference_kernels.cpp — see reference_kernels.h. Scalar, double accumulation, no threads.
#include "reference/reference_kernels.h"

namespace hwinfer::reference {

void gemm_reference_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                        const float* b, int64_t ldb, bool b_transposed, float* c, int64_t ldc,
                        float alpha, float beta) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;  // sum_l a[i,l] * B[l,j]
      for (int64_t l = 0; l < k; ++l) {
        const float b_lj = b_transposed ? b[j * ldb + l] : b[l * ldb + j];
        sum += static_cast<double>(a[i * lda + l]) * static_cast<double>(b_lj);
      }
      double result = static_cast<double>(alpha) * sum;
      if (beta != 0.0f) result += static_cast<double>(beta) * static_cast<double>(c[i * ldc + j]);
      c[i * ldc + j] = static_cast<float>(result);
    }
  }
}

}  // namespace hwinfer::reference
