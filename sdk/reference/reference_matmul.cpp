// reference_matmul.cpp — see reference_matmul.h. Scalar, double accumulation, no threads.
#include "reference/reference_matmul.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "hwinfer/plugin.h"
#include "reference/half.h"
#include "reference/weight_blocks.h"

namespace hwinfer::reference {

namespace {

// Row j of w ([n, k] blocks), dequantized to k floats.
void dequantize_row(const void* w, uint32_t w_dtype, int64_t w_row_bytes, int64_t j, int64_t k,
                    float* out) {
  dequantize_blocks(w_dtype, static_cast<const uint8_t*>(w) + j * w_row_bytes, k, out);
}

// The min m every value of a Q4_1 / Q5_1 block adds (bytes 2..3), else 0.
double block_min(uint32_t w_dtype, const uint8_t* block) {
  if (w_dtype != HWINFER_DTYPE_Q4_1 && w_dtype != HWINFER_DTYPE_Q5_1) return 0.0;
  uint16_t m;
  std::memcpy(&m, block + 2, sizeof(m));
  return f16_to_f32(m);
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

void matmul_quantized_reference_q8_x(int64_t m, int64_t n, int64_t k, const float* x, int64_t ldx,
                                     const void* w, uint32_t w_dtype, int64_t w_row_bytes, float* y,
                                     int64_t ldy, bool binary16_scales) {
  const ActivationFormat format = activation_format_for(w_dtype);
  const int64_t x_block = activation_block_values(format);
  const int64_t w_block = hwinfer_dtype_block_values(w_dtype);
  const int64_t w_bytes = hwinfer_dtype_block_bytes(w_dtype);
  std::vector<ActivationBlock> xq(static_cast<size_t>(m * (k / x_block)));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < k / x_block; ++b) {
      xq[static_cast<size_t>(i * (k / x_block) + b)] =
          quantize_activation_block(format, x + i * ldx + b * x_block, binary16_scales);
    }
  }
  std::vector<float> w_row(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    dequantize_row(w, w_dtype, w_row_bytes, j, k, w_row.data());
    const auto* row = static_cast<const uint8_t*>(w) + j * w_row_bytes;
    for (int64_t i = 0; i < m; ++i) {
      double sum = 0.0;
      for (int64_t b = 0; b < k / x_block; ++b) {
        const ActivationBlock& a = xq[static_cast<size_t>(i * (k / x_block) + b)];
        // Q4_1 / Q5_1: (w - m) * x summed, plus m * s (llama.cpp's binary16 d * sum(q)).
        const double min = block_min(w_dtype, row + (b * x_block / w_block) * w_bytes);
        double block_sum = 0.0;
        for (int64_t t = 0; t < x_block; ++t) {
          block_sum += (static_cast<double>(w_row[static_cast<size_t>(b * x_block + t)]) - min) *
                       static_cast<double>(a.q[t]);
        }
        sum += static_cast<double>(a.d) * block_sum + min * static_cast<double>(a.s);
      }
      y[i * ldy + j] = static_cast<float>(sum);
    }
  }
}

}  // namespace hwinfer::reference
