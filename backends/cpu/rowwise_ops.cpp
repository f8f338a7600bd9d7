// rowwise_ops.cpp — the rms_norm and silu_mul kernels (cpu_kernels.h has their shapes). Rows are
// converted to f32 in a per-item scratch row, the arithmetic runs in plain loops the compiler
// vectorises, and the rows are split over the plugin's thread pool (silu_mul also splits long rows
// into column chunks).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu_kernels.h"
#include "hwinfer/kit/kernel_checks.h"
#include "reference/half.h"
#include "thread_pool.h"

namespace hwinfer::cpu {

namespace {

// A row of F32 or F16 values at |row| (innermost contiguous).
void load_row(const uint8_t* row, uint32_t dtype, int64_t n, float* dst) {
  if (dtype == HWINFER_DTYPE_F32) {
    std::memcpy(dst, row, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, row + i * 2, sizeof(h));
    dst[i] = reference::f16_to_f32(h);
  }
}

void store_row(const float* src, int64_t n, uint32_t dtype, uint8_t* row) {
  if (dtype == HWINFER_DTYPE_F32) {
    std::memcpy(row, src, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t h = reference::f32_to_f16(src[i]);
    std::memcpy(row + i * 2, &h, sizeof(h));
  }
}

struct RowOperand {
  uint8_t* data = nullptr;
  uint32_t dtype = HWINFER_DTYPE_F32;
  int64_t row_stride = 0;  // bytes
  uint8_t* row(int64_t t) const { return data + t * row_stride; }
};

RowOperand row_operand(const hwinfer_tensor_view& view) {
  return {view_data(view), view.dtype, view.strides_bytes[0]};
}

// ---- RMSNorm -----------------------------------------------------------------------------------

struct RmsNormProblem {
  int64_t n_tokens = 0, dim = 0;
  float eps = 0.0f;
  RowOperand x, residual, out;  // residual.data == nullptr: no residual
  const float* weight = nullptr;
};

void rms_norm_rows(const RmsNormProblem& p, int64_t begin, int64_t end) {
  std::vector<float> h(static_cast<size_t>(p.dim));
  std::vector<float> r(static_cast<size_t>(p.dim));
  float* hp = h.data();
  const float* w = p.weight;
  for (int64_t t = begin; t < end; ++t) {
    load_row(p.x.row(t), p.x.dtype, p.dim, hp);
    if (p.residual.data != nullptr) {
      float* rp = r.data();
      load_row(p.residual.row(t), p.residual.dtype, p.dim, rp);
      for (int64_t i = 0; i < p.dim; ++i) rp[i] += hp[i];
      store_row(rp, p.dim, p.residual.dtype, p.residual.row(t));
      if (p.residual.dtype == HWINFER_DTYPE_F16) {
        load_row(p.residual.row(t), p.residual.dtype, p.dim, hp);  // h is what residual holds
      } else {
        std::swap(h, r);
        hp = h.data();
      }
    }
    // Eight partial sums keep the loop vectorisable without -ffast-math; double at the end.
    float partial[8] = {};
    const int64_t vec_end = p.dim - p.dim % 8;
    for (int64_t i = 0; i < vec_end; i += 8) {
      for (int j = 0; j < 8; ++j) partial[j] += hp[i + j] * hp[i + j];
    }
    double sum_squares = 0.0;
    for (float s : partial) sum_squares += s;
    for (int64_t i = vec_end; i < p.dim; ++i) sum_squares += static_cast<double>(hp[i]) * hp[i];
    const auto inv_rms = static_cast<float>(
        1.0 / std::sqrt(sum_squares / static_cast<double>(p.dim) + static_cast<double>(p.eps)));
    for (int64_t i = 0; i < p.dim; ++i) hp[i] = hp[i] * inv_rms * w[i];
    store_row(hp, p.dim, p.out.dtype, p.out.row(t));
  }
}

void rms_norm(const RmsNormProblem& p, ThreadPool& pool) {
  // About 64 Ki values per item, at least one row.
  const int64_t rows_per_item = std::max<int64_t>(1, (int64_t{1} << 16) / p.dim);
  const int64_t items = (p.n_tokens + rows_per_item - 1) / rows_per_item;
  pool.parallel_for(items, [&](int64_t item) {
    const int64_t begin = item * rows_per_item;
    rms_norm_rows(p, begin, std::min(p.n_tokens, begin + rows_per_item));
  });
}

}  // namespace

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_rms_norm_desc& d) {
  RmsNormProblem p;
  p.n_tokens = d.n_tokens;
  p.dim = d.dim;
  p.eps = d.eps;
  p.x = row_operand(d.x);
  if (d.residual.buffer != nullptr) p.residual = row_operand(d.residual);
  p.out = row_operand(d.out);
  p.weight = reinterpret_cast<const float*>(view_data(d.weight));
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue([p, pool]() -> hwinfer_error* {
    rms_norm(p, *pool);
    return nullptr;
  });
}

// ---- SiLU-mul ----------------------------------------------------------------------------------

namespace {

struct SiluMulProblem {
  int64_t n_tokens = 0, dim = 0;
  RowOperand gate, up, out;
};

constexpr int64_t kSiluChunk = 4096;  // values per work item

void silu_mul(const SiluMulProblem& p, ThreadPool& pool) {
  const int64_t chunks_per_row = (p.dim + kSiluChunk - 1) / kSiluChunk;
  pool.parallel_for(p.n_tokens * chunks_per_row, [&](int64_t item) {
    const int64_t t = item / chunks_per_row;
    const int64_t begin = (item % chunks_per_row) * kSiluChunk;
    const int64_t n = std::min(kSiluChunk, p.dim - begin);
    float g[kSiluChunk], u[kSiluChunk];
    auto at = [begin](const RowOperand& o, int64_t row) {
      return o.row(row) + begin * static_cast<int64_t>(dtype_element_bytes(o.dtype));
    };
    load_row(at(p.gate, t), p.gate.dtype, n, g);
    load_row(at(p.up, t), p.up.dtype, n, u);
    for (int64_t i = 0; i < n; ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
    store_row(g, n, p.out.dtype, at(p.out, t));
  });
}

}  // namespace

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_silu_mul_desc& d) {
  SiluMulProblem p;
  p.n_tokens = d.n_tokens;
  p.dim = d.dim;
  p.gate = row_operand(d.gate);
  p.up = row_operand(d.up);
  p.out = row_operand(d.out);
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue([p, pool]() -> hwinfer_error* {
    silu_mul(p, *pool);
    return nullptr;
  });
}

}  // namespace hwinfer::cpu
