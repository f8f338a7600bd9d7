// reference_matmul.cpp — see reference_matmul.h. Scalar, double accumulation, no threads.
#include "reference/reference_matmul.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "hwinfer/plugin.h"
#include "reference/half.h"
#include "reference/quantize_blocks.h"

namespace hwinfer::reference {

namespace {

// Row j of w ([n, k] blocks), dequantized to k floats (exact: d * q fits in a float).
void dequantize_row(const void* w, uint32_t w_dtype, int64_t w_row_bytes, int64_t j, int64_t k,
                    float* out) {
  const auto* row = static_cast<const uint8_t*>(w) + j * w_row_bytes;
  const int64_t blocks = k / HWINFER_QK8_0;
  if (w_dtype == HWINFER_DTYPE_Q8_0) {
    std::vector<hwinfer_block_q8_0> copy(static_cast<size_t>(blocks));  // unaligned rows
    std::memcpy(copy.data(), row, static_cast<size_t>(blocks) * HWINFER_Q8_0_BLOCK_BYTES);
    dequantize_q8_0(copy.data(), out, k);
  } else {
    std::vector<hwinfer_block_q4_0> copy(static_cast<size_t>(blocks));
    std::memcpy(copy.data(), row, static_cast<size_t>(blocks) * HWINFER_Q4_0_BLOCK_BYTES);
    dequantize_q4_0(copy.data(), out, k);
  }
}

}  // namespace

double load_real(const void* base, int64_t index, uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F16:
      return f16_to_f32(static_cast<const uint16_t*>(base)[index]);
    case HWINFER_DTYPE_BF16:
      return bf16_to_f32(static_cast<const uint16_t*>(base)[index]);
    default:
      return static_cast<const float*>(base)[index];
  }
}

void store_real(void* base, int64_t index, uint32_t dtype, double value) {
  const auto f = static_cast<float>(value);
  switch (dtype) {
    case HWINFER_DTYPE_F16:
      static_cast<uint16_t*>(base)[index] = f32_to_f16(f);
      break;
    case HWINFER_DTYPE_BF16:
      static_cast<uint16_t*>(base)[index] = f32_to_bf16(f);
      break;
    default:
      static_cast<float*>(base)[index] = f;
      break;
  }
}

void gemm_reference(int64_t m, int64_t n, int64_t k, const void* a, uint32_t a_dtype, int64_t lda,
                    const void* b, uint32_t b_dtype, int64_t ldb, bool b_transposed, void* c,
                    uint32_t c_dtype, int64_t ldc, float alpha, float beta) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;  // sum_l a[i,l] * B[l,j]
      for (int64_t l = 0; l < k; ++l) {
        const double b_lj = load_real(b, b_transposed ? j * ldb + l : l * ldb + j, b_dtype);
        sum += load_real(a, i * lda + l, a_dtype) * b_lj;
      }
      double result = static_cast<double>(alpha) * sum;
      if (beta != 0.0f) result += static_cast<double>(beta) * load_real(c, i * ldc + j, c_dtype);
      store_real(c, i * ldc + j, c_dtype, result);
    }
  }
}

void matmul_quantized_reference(int64_t m, int64_t n, int64_t k, const float* x, int64_t ldx,
                                const void* w, uint32_t w_dtype, int64_t w_row_bytes, float* y,
                                int64_t ldy) {
  std::vector<float> w_row(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    dequantize_row(w, w_dtype, w_row_bytes, j, k, w_row.data());
    for (int64_t i = 0; i < m; ++i) {
      double sum = 0.0;  // sum_l x[i,l] * w[j,l]
      for (int64_t l = 0; l < k; ++l) {
        sum += static_cast<double>(x[i * ldx + l]) * static_cast<double>(w_row[l]);
      }
      y[i * ldy + j] = static_cast<float>(sum);
    }
  }
}

float quantize_block_q8_f32_scale(const float* x, int8_t* q) {
  float amax = 0.0f;
  for (int t = 0; t < HWINFER_QK8_0; ++t) amax = std::max(amax, std::fabs(x[t]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int t = 0; t < HWINFER_QK8_0; ++t) q[t] = static_cast<int8_t>(std::lround(x[t] * id));
  return d;
}

void matmul_quantized_reference_q8_x(int64_t m, int64_t n, int64_t k, const float* x, int64_t ldx,
                                     const void* w, uint32_t w_dtype, int64_t w_row_bytes, float* y,
                                     int64_t ldy) {
  const int64_t blocks = k / HWINFER_QK8_0;
  // x quantized: x_q[i, l] = x_d[i, l / 32] * x_q[i, l]
  std::vector<int8_t> x_q(static_cast<size_t>(m * k));
  std::vector<float> x_d(static_cast<size_t>(m * blocks));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < blocks; ++b) {
      x_d[static_cast<size_t>(i * blocks + b)] = quantize_block_q8_f32_scale(
          x + i * ldx + b * HWINFER_QK8_0, x_q.data() + i * k + b * HWINFER_QK8_0);
    }
  }
  std::vector<float> w_row(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    dequantize_row(w, w_dtype, w_row_bytes, j, k, w_row.data());
    for (int64_t i = 0; i < m; ++i) {
      double sum = 0.0;
      for (int64_t b = 0; b < blocks; ++b) {
        double block_sum = 0.0;  // sum q_x * dequant(w) over the block
        for (int64_t t = b * HWINFER_QK8_0; t < (b + 1) * HWINFER_QK8_0; ++t) {
          block_sum += static_cast<double>(x_q[static_cast<size_t>(i * k + t)]) *
                       static_cast<double>(w_row[static_cast<size_t>(t)]);
        }
        sum += static_cast<double>(x_d[static_cast<size_t>(i * blocks + b)]) * block_sum;
      }
      y[i * ldy + j] = static_cast<float>(sum);
    }
  }
}

}  // namespace hwinfer::reference
