// reference_ops.cpp — see reference_ops.h. Obviously-correct loops only.
#include "reference/reference_ops.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "hwinfer/plugin.h"
#include "reference/half.h"
#include "reference/weight_blocks.h"

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

void argmax_reference(int64_t n_rows, int64_t n_cols, const float* x, int32_t* ids) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* row = x + r * n_cols;
    int64_t best = -1;
    for (int64_t c = 0; c < n_cols; ++c) {
      if (std::isnan(row[c])) continue;
      if (best < 0 || row[c] > row[best]) best = c;
    }
    ids[r] = static_cast<int32_t>(best < 0 ? 0 : best);
  }
}

void silu_mul_reference(int64_t count, const float* gate, const float* up, float* out,
                        bool out_f16) {
  for (int64_t i = 0; i < count; ++i) {
    const double g = gate[i];
    out[i] = store(g / (1.0 + std::exp(-g)) * static_cast<double>(up[i]), out_f16);
  }
}

void rope_head_reference(double* head, int64_t rotary_dim, int64_t position, double theta_base,
                         RopeMode mode) {
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double angle =
        static_cast<double>(position) *
        std::pow(theta_base, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
    const double c = std::cos(angle), s = std::sin(angle);
    const int64_t ia = mode == RopeMode::kNormal ? 2 * i : i;
    const int64_t ib = mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
    const double a = head[ia], b = head[ib];
    head[ia] = a * c - b * s;
    head[ib] = a * s + b * c;
  }
}

void rope_reference(int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t rotary_dim,
                    double theta_base, RopeMode mode, const int32_t* positions, float* x,
                    bool x_f16) {
  std::vector<double> head(static_cast<size_t>(head_dim));
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      float* row = x + (t * n_heads + h) * head_dim;
      for (int64_t i = 0; i < head_dim; ++i) head[static_cast<size_t>(i)] = row[i];
      rope_head_reference(head.data(), rotary_dim, positions[t], theta_base, mode);
      for (int64_t i = 0; i < rotary_dim; ++i) row[i] = store(head[static_cast<size_t>(i)], x_f16);
    }
  }
}

void dequantize_row_reference(uint32_t dtype, const uint8_t* row, int64_t dim, float* out) {
  auto bits16 = [](const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (dtype) {
    case HWINFER_DTYPE_F32:
      std::memcpy(out, row, static_cast<size_t>(dim) * sizeof(float));
      return;
    case HWINFER_DTYPE_F16:
      for (int64_t i = 0; i < dim; ++i) out[i] = f16_to_f32(bits16(row + 2 * i));
      return;
    case HWINFER_DTYPE_BF16:
      for (int64_t i = 0; i < dim; ++i) out[i] = bf16_to_f32(bits16(row + 2 * i));
      return;
    default:
      dequantize_blocks(dtype, row, dim, out);
      return;
  }
}

bool embedding_reference(int64_t n_tokens, int64_t vocab, int64_t dim, uint32_t dtype,
                         const uint8_t* table, int64_t row_stride_bytes, const int32_t* ids,
                         float* out) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (ids[t] < 0 || ids[t] >= vocab) return false;
  }
  for (int64_t t = 0; t < n_tokens; ++t) {
    dequantize_row_reference(dtype, table + ids[t] * row_stride_bytes, dim, out + t * dim);
  }
  return true;
}

}  // namespace hwinfer::reference
