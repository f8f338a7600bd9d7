// reference_ops.cpp — see reference_ops.h. Obviously-correct loops only.
#include "reference/reference_ops.h"

#include <cmath>

#include "reference/half.h"

namespace hwinfer::reference {

namespace {

float store(double value, bool as_f16) {
  const auto f = static_cast<float>(value);
  return as_f16 ? f16_to_f32(f32_to_f16(f)) : f;
}

}  // namespace

void rms_norm_reference(int64_t n_tokens, int64_t dim, float eps, const float* x, float* residual,
                        bool residual_f16, const float* weight, float* out, bool out_f16) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xr = x + t * dim;
    float* rr = residual != nullptr ? residual + t * dim : nullptr;
    float* orow = out + t * dim;
    if (rr != nullptr) {
      for (int64_t i = 0; i < dim; ++i) {
        rr[i] = store(static_cast<double>(rr[i]) + static_cast<double>(xr[i]), residual_f16);
      }
    }
    const float* h = rr != nullptr ? rr : xr;
    double sum_squares = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum_squares += static_cast<double>(h[i]) * h[i];
    const double inv_rms =
        1.0 / std::sqrt(sum_squares / static_cast<double>(dim) + static_cast<double>(eps));
    for (int64_t i = 0; i < dim; ++i) {
      orow[i] =
          store(static_cast<double>(h[i]) * inv_rms * static_cast<double>(weight[i]), out_f16);
    }
  }
}

void silu_mul_reference(int64_t count, const float* gate, const float* up, float* out,
                        bool out_f16) {
  for (int64_t i = 0; i < count; ++i) {
    const double g = gate[i];
    out[i] = store(g / (1.0 + std::exp(-g)) * static_cast<double>(up[i]), out_f16);
  }
}

}  // namespace hwinfer::reference
