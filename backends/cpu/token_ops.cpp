// token_ops.cpp — see token_ops.h. RoPE computes the inverse frequencies once per call and cos/sin
// once per (token, pair), in double (positions up to ~1e5 keep their accuracy), then rotates every
// head of q and k in float; the embedding lookup checks every id before it writes anything, then
// dequantizes rows. Both split tokens over the plugin's thread pool.
#include "token_ops.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <vector>

#include "cpu_kernels.h"
#include "hwinfer/kit/kernel_checks.h"
#include "reference/half.h"
#include "thread_pool.h"
#include "weight_formats.h"

namespace hwinfer::cpu {

namespace {

int32_t load_i32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// ---- RoPE --------------------------------------------------------------------------------------

struct RopeOperand {
  uint8_t* data = nullptr;  // nullptr: absent (k only)
  uint32_t dtype = HWINFER_DTYPE_F32;
  int64_t n_heads = 0;
  int64_t token_stride = 0, head_stride = 0;  // bytes
};

struct RopeProblem {
  int64_t n_tokens = 0, head_dim = 0, rotary_dim = 0;
  double theta_base = 0.0;
  bool neox = false;
  RopeOperand q, k;
  const uint8_t* positions = nullptr;
  int64_t position_stride = 0;  // bytes
};

// Rotates the first 2 * half values of |x| by the angles whose cos/sin are |c|/|s| [half].
void rotate(float* x, const float* c, const float* s, int64_t half, bool neox) {
  if (neox) {
    float* xa = x;
    float* xb = x + half;
    for (int64_t i = 0; i < half; ++i) {
      const float a = xa[i], b = xb[i];
      xa[i] = a * c[i] - b * s[i];
      xb[i] = a * s[i] + b * c[i];
    }
    return;
  }
  for (int64_t i = 0; i < half; ++i) {
    const float a = x[2 * i], b = x[2 * i + 1];
    x[2 * i] = a * c[i] - b * s[i];
    x[2 * i + 1] = a * s[i] + b * c[i];
  }
}

// Every head of token |t| of |o|; |scratch| holds rotary_dim floats (F16 heads).
void rope_token(const RopeProblem& p, const RopeOperand& o, int64_t t, const float* c,
                const float* s, float* scratch) {
  const int64_t half = p.rotary_dim / 2;
  uint8_t* token = o.data + t * o.token_stride;
  for (int64_t h = 0; h < o.n_heads; ++h) {
    uint8_t* head = token + h * o.head_stride;
    if (o.dtype == HWINFER_DTYPE_F32) {
      rotate(reinterpret_cast<float*>(head), c, s, half, p.neox);  // aligned (check_view)
      continue;
    }
    for (int64_t i = 0; i < p.rotary_dim; ++i) {
      scratch[i] = reference::f16_to_f32(load_u16(head + 2 * i));
    }
    rotate(scratch, c, s, half, p.neox);
    for (int64_t i = 0; i < p.rotary_dim; ++i) {
      const uint16_t bits = reference::f32_to_f16(scratch[i]);
      std::memcpy(head + 2 * i, &bits, sizeof(bits));
    }
  }
}

void rope(const RopeProblem& p, ThreadPool& pool) {
  const int64_t half = p.rotary_dim / 2;
  // inv_freq[i] = theta_base^(-2i / rotary_dim), once per call.
  std::vector<double> inv_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    inv_freq[static_cast<size_t>(i)] =
        std::pow(p.theta_base, -2.0 * static_cast<double>(i) / static_cast<double>(p.rotary_dim));
  }
  // About 32 Ki rotated values per work item, at least one token.
  const int64_t values_per_token = (p.q.n_heads + p.k.n_heads) * p.rotary_dim;
  const int64_t tokens_per_item = std::max<int64_t>(1, (int64_t{1} << 15) / values_per_token);
  const int64_t items = (p.n_tokens + tokens_per_item - 1) / tokens_per_item;
  pool.parallel_for(items, [&](int64_t item) {
    std::vector<float> c(static_cast<size_t>(half)), s(static_cast<size_t>(half));
    std::vector<float> scratch(static_cast<size_t>(p.rotary_dim));
    const int64_t begin = item * tokens_per_item;
    const int64_t end = std::min(p.n_tokens, begin + tokens_per_item);
    for (int64_t t = begin; t < end; ++t) {
      const auto position = static_cast<double>(load_i32(p.positions + t * p.position_stride));
      for (int64_t i = 0; i < half; ++i) {
        const double angle = position * inv_freq[static_cast<size_t>(i)];
        c[static_cast<size_t>(i)] = static_cast<float>(std::cos(angle));
        s[static_cast<size_t>(i)] = static_cast<float>(std::sin(angle));
      }
      rope_token(p, p.q, t, c.data(), s.data(), scratch.data());
      if (p.k.data != nullptr) rope_token(p, p.k, t, c.data(), s.data(), scratch.data());
    }
  });
}

RopeOperand rope_operand(const hwinfer_tensor_view& view, int64_t n_heads) {
  return {view_data(view), view.dtype, n_heads, view.strides_bytes[0], view.strides_bytes[1]};
}

// ---- embedding ---------------------------------------------------------------------------------

struct EmbeddingProblem {
  int64_t n_tokens = 0, vocab = 0, dim = 0;
  uint32_t dtype = HWINFER_DTYPE_F32;
  const uint8_t* table = nullptr;
  int64_t table_row_stride = 0;  // bytes
  const uint8_t* ids = nullptr;
  int64_t id_stride = 0;  // bytes
  uint8_t* out = nullptr;
  int64_t out_row_stride = 0;  // bytes
};

// One table row -> out[dim] f32. Quantized blocks are read byte by byte (no alignment needed).
void dequantize_row(uint32_t dtype, const uint8_t* row, int64_t dim, float* out) {
  switch (dtype) {
    case HWINFER_DTYPE_F32:
      std::memcpy(out, row, static_cast<size_t>(dim) * sizeof(float));
      return;
    case HWINFER_DTYPE_F16:
      for (int64_t i = 0; i < dim; ++i) out[i] = reference::f16_to_f32(load_u16(row + 2 * i));
      return;
    case HWINFER_DTYPE_BF16:
      for (int64_t i = 0; i < dim; ++i) out[i] = reference::bf16_to_f32(load_u16(row + 2 * i));
      return;
    case HWINFER_DTYPE_Q8_0:
      for (int64_t b = 0; b < dim / HWINFER_QK8_0; ++b) {
        const uint8_t* block = row + b * HWINFER_Q8_0_BLOCK_BYTES;
        const float d = reference::f16_to_f32(load_u16(block));
        int8_t q[HWINFER_QK8_0];
        std::memcpy(q, block + 2, sizeof(q));
        float* o = out + b * HWINFER_QK8_0;
        for (int j = 0; j < HWINFER_QK8_0; ++j) o[j] = d * static_cast<float>(q[j]);
      }
      return;
    case HWINFER_DTYPE_Q4_0:
      for (int64_t b = 0; b < dim / HWINFER_QK4_0; ++b) {
        const uint8_t* block = row + b * HWINFER_Q4_0_BLOCK_BYTES;
        const float d = reference::f16_to_f32(load_u16(block));
        const uint8_t* qs = block + 2;
        float* o = out + b * HWINFER_QK4_0;
        for (int j = 0; j < HWINFER_QK4_0 / 2; ++j) {
          o[j] = d * static_cast<float>((qs[j] & 0x0f) - 8);
          o[j + HWINFER_QK4_0 / 2] = d * static_cast<float>((qs[j] >> 4) - 8);
        }
      }
      return;
    default:
      // The other block types (check_embedding admits no other dtype).
      if (const WeightFormat* format = weight_format(dtype)) {
        weight_dequantize(dtype, GemmIsa::kPortable)(row, dim / format->block_values, out);
      }
      return;
  }
}

hwinfer_error* embedding(const EmbeddingProblem& p, ThreadPool& pool) {
  for (int64_t t = 0; t < p.n_tokens; ++t) {
    const int32_t id = load_i32(p.ids + t * p.id_stride);
    if (id < 0 || id >= p.vocab) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu embedding: ids[%" PRId64 "] = %" PRId32
                                " is outside the table's vocab [0, %" PRId64
                                "); nothing was written",
                                t, id, p.vocab);
    }
  }
  // About 64 Ki values per work item, at least one row.
  const int64_t rows_per_item = std::max<int64_t>(1, (int64_t{1} << 16) / p.dim);
  const int64_t items = (p.n_tokens + rows_per_item - 1) / rows_per_item;
  pool.parallel_for(items, [&](int64_t item) {
    const int64_t begin = item * rows_per_item;
    const int64_t end = std::min(p.n_tokens, begin + rows_per_item);
    for (int64_t t = begin; t < end; ++t) {
      const int32_t id = load_i32(p.ids + t * p.id_stride);
      dequantize_row(p.dtype, p.table + id * p.table_row_stride, p.dim,
                     reinterpret_cast<float*>(p.out + t * p.out_row_stride));  // aligned
    }
  });
  return nullptr;
}

}  // namespace

// ---- RoPE --------------------------------------------------------------------------------------

std::function<void(ThreadPool&)> rope_work(const hwinfer_rope_desc& checked) {
  RopeProblem p;
  p.n_tokens = checked.n_tokens;
  p.head_dim = checked.head_dim;
  p.rotary_dim = checked.rotary_dim;
  p.theta_base = static_cast<double>(checked.theta_base);
  p.neox = checked.mode == HWINFER_ROPE_NEOX;
  p.q = rope_operand(checked.q, checked.n_heads);
  if (checked.k.buffer != nullptr) p.k = rope_operand(checked.k, checked.n_kv_heads);
  p.positions = view_data(checked.positions);
  p.position_stride = checked.positions.strides_bytes[0];
  return [p](ThreadPool& pool) { rope(p, pool); };
}

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_rope_desc& d) {
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue([work = rope_work(d), pool]() -> hwinfer_error* {
    work(*pool);
    return nullptr;
  });
}

// ---- embedding ---------------------------------------------------------------------------------

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_embedding_desc& d) {
  EmbeddingProblem p;
  p.n_tokens = d.n_tokens;
  p.vocab = d.vocab;
  p.dim = d.dim;
  p.dtype = d.table.dtype;
  p.table = view_data(d.table);
  p.table_row_stride = d.table.strides_bytes[0];
  p.ids = view_data(d.ids);
  p.id_stride = d.ids.strides_bytes[0];
  p.out = view_data(d.out);
  p.out_row_stride = d.out.strides_bytes[0];
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue([p, pool]() -> hwinfer_error* { return embedding(p, *pool); });
}

// ---- argmax ------------------------------------------------------------------------------------
//   x: [n_rows, n_cols] F32 | F16 (innermost contiguous);  ids: [n_rows] I32 (element stride)

namespace {

struct ArgmaxProblem {
  int64_t n_rows = 0, n_cols = 0;
  bool f16 = false;
  const uint8_t* x = nullptr;
  int64_t x_row_stride = 0;  // bytes
  uint8_t* ids = nullptr;
  int64_t id_stride = 0;  // bytes
};

// The smallest index of the largest non-NaN value of |n| values at |row| (0 when all are NaN).
template <typename Load>
int32_t row_argmax(int64_t n, Load load) {
  int64_t best = -1;
  float best_value = 0.0f;
  for (int64_t c = 0; c < n; ++c) {
    const float value = load(c);
    if (std::isnan(value)) continue;
    if (best < 0 || value > best_value) {
      best = c;
      best_value = value;
    }
  }
  return static_cast<int32_t>(best < 0 ? 0 : best);
}

// One row per pool item (a row is a vocabulary: a sizeable chunk).
void argmax(const ArgmaxProblem& p, ThreadPool& pool) {
  pool.parallel_for(p.n_rows, [&p](int64_t r) {
    const uint8_t* row = p.x + r * p.x_row_stride;
    const int32_t id =
        p.f16
            ? row_argmax(p.n_cols,
                         [row](int64_t c) { return reference::f16_to_f32(load_u16(row + 2 * c)); })
            : row_argmax(p.n_cols, [row](int64_t c) {
                float value;
                std::memcpy(&value, row + 4 * c, sizeof(value));
                return value;
              });
    std::memcpy(p.ids + r * p.id_stride, &id, sizeof(id));
  });
}

}  // namespace

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_argmax_desc& d) {
  ArgmaxProblem p;
  p.n_rows = d.n_rows;
  p.n_cols = d.n_cols;
  p.f16 = d.x.dtype == HWINFER_DTYPE_F16;
  p.x = view_data(d.x);
  p.x_row_stride = d.x.strides_bytes[0];
  p.ids = view_data(d.ids);
  p.id_stride = d.ids.strides_bytes[0];
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue([p, pool]() -> hwinfer_error* {
    argmax(p, *pool);
    return nullptr;
  });
}

}  // namespace hwinfer::cpu
