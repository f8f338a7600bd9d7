// token_ops.cpp — see token_ops.h. RoPE computes the inverse frequencies once per call and cos/sin
// once per (token, pair), in double (positions up to ~1e5 keep their accuracy), then rotates every
// head of q and k in float; the embedding lookup checks every id before it writes anything, then
// dequantizes rows. Both split tokens over the plugin's thread pool.
#include "token_ops.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "kernel_views.h"
#include "reference/half.h"
#include "thread_pool.h"

namespace hwinfer::cpu {

namespace {

// |view|'s dtype must be one of |allowed| (named |allowed_names| in messages): a known other dtype
// is INVALID_ARGUMENT, an unknown one UNSUPPORTED.
hwinfer_error* check_dtype_in(const hwinfer_tensor_view& view, const char* kernel,
                              const char* operand, std::initializer_list<uint32_t> allowed,
                              const char* allowed_names) {
  if (view.struct_size < sizeof(hwinfer_tensor_view)) return nullptr;  // check_view reports it
  if (std::find(allowed.begin(), allowed.end(), view.dtype) != allowed.end()) return nullptr;
  const uint32_t code =
      dtype_is_known(view.dtype) ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNSUPPORTED;
  return hwinfer_make_error(code, "cpu %s: operand %s has dtype %s; expected %s", kernel, operand,
                            dtype_name(view.dtype).c_str(), allowed_names);
}

hwinfer_error* overlap_error(const char* kernel, const char* a, const char* b) {
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "cpu %s: operands %s and %s overlap in memory", kernel, a, b);
}

// [n, ...] I32 vector of n_tokens entries (positions, ids); any element-aligned stride.
ViewExpectation expect_token_vector(const char* kernel, const char* operand, int64_t n_tokens) {
  return expect_view(kernel, operand, HWINFER_DTYPE_I32, "[n_tokens]", {n_tokens});
}

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

bool is_block_dtype(uint32_t dtype) {
  return dtype == HWINFER_DTYPE_Q8_0 || dtype == HWINFER_DTYPE_Q4_0;
}

int64_t block_bytes(uint32_t dtype) {
  return dtype == HWINFER_DTYPE_Q8_0 ? HWINFER_Q8_0_BLOCK_BYTES : HWINFER_Q4_0_BLOCK_BYTES;
}

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
      return;  // check_embedding admits no other dtype
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

// The table of a Q8_0 / Q4_0 embedding as the I8 byte matrix [vocab, dim / 32 * block bytes] it
// occupies, so check_view can bound it by its buffer. |d.table| must be rank 2 with innermost
// stride 0 (checked by the caller).
hwinfer_tensor_view block_table_as_bytes(const hwinfer_embedding_desc& d) {
  hwinfer_tensor_view bytes = d.table;
  bytes.dtype = HWINFER_DTYPE_I8;
  bytes.shape[1] = d.dim / HWINFER_QK8_0 * block_bytes(d.table.dtype);
  bytes.strides_bytes[1] = 1;
  return bytes;
}

hwinfer_error* check_embedding_table(const hwinfer_device* device, const hwinfer_embedding_desc& d,
                                     bool require_buffers) {
  constexpr const char* kName = "embedding";
  ViewExpectation table =
      expect_view(kName, "table", d.table.dtype, "[vocab, dim]", {d.vocab, d.dim});
  if (d.table.struct_size < sizeof(hwinfer_tensor_view) || !is_block_dtype(d.table.dtype)) {
    table.contiguous = true;
    return check_view(d.table, table, device, require_buffers);
  }
  const char* dtype = d.table.dtype == HWINFER_DTYPE_Q8_0 ? "Q8_0" : "Q4_0";
  if (d.dim % HWINFER_QK8_0 != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu embedding: a %s table needs dim %% 32 == 0; got dim=%" PRId64,
                              dtype, d.dim);
  }
  if (d.table.rank != 2 || d.table.shape[0] != d.vocab || d.table.shape[1] != d.dim) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu embedding: operand table must be [vocab, dim] = [%" PRId64
                              ", %" PRId64 "] (rank 2); got rank %" PRIu32 " shape [%" PRId64
                              ", %" PRId64 ", ...]",
                              d.vocab, d.dim, d.table.rank, d.table.shape[0], d.table.shape[1]);
  }
  if (d.table.strides_bytes[1] != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu embedding: a %s table has packed blocks: its innermost stride "
                              "must be 0; got %" PRId64,
                              dtype, d.table.strides_bytes[1]);
  }
  const hwinfer_tensor_view bytes = block_table_as_bytes(d);
  ViewExpectation expected =
      expect_view(kName, "table", HWINFER_DTYPE_I8, "[vocab, dim / 32 * block bytes]",
                  {bytes.shape[0], bytes.shape[1]});
  expected.contiguous = true;
  return check_view(bytes, expected, device, require_buffers);
}

}  // namespace

// ---- RoPE --------------------------------------------------------------------------------------

hwinfer_error* check_rope(const hwinfer_device* device, const hwinfer_rope_desc& d,
                          bool require_buffers) {
  constexpr const char* kName = "rope";
  if (hwinfer_error* error = check_desc_size(d.struct_size, sizeof(d), kName)) return error;
  if (d.mode != HWINFER_ROPE_NORMAL && d.mode != HWINFER_ROPE_NEOX) {
    return hwinfer_make_error(
        HWINFER_STATUS_UNSUPPORTED,
        "cpu rope: unknown mode %" PRIu32 " (the cpu backend has NORMAL=0, NEOX=1)", d.mode);
  }
  const bool has_k = d.k.buffer != nullptr || (!require_buffers && d.k.rank != 0);
  if (d.n_tokens <= 0 || d.n_heads <= 0 || d.head_dim <= 0 || (has_k && d.n_kv_heads <= 0)) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "cpu rope: n_tokens, n_heads, head_dim (and n_kv_heads with k) must be > 0; got "
        "n_tokens=%" PRId64 " n_heads=%" PRId64 " n_kv_heads=%" PRId64 " head_dim=%" PRId64,
        d.n_tokens, d.n_heads, d.n_kv_heads, d.head_dim);
  }
  if (d.head_dim % 2 != 0 || d.rotary_dim <= 0 || d.rotary_dim % 2 != 0 ||
      d.rotary_dim > d.head_dim) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu rope: head_dim must be even and rotary_dim even in [2, "
                              "head_dim]; got head_dim=%" PRId64 " rotary_dim=%" PRId64,
                              d.head_dim, d.rotary_dim);
  }
  if (!(d.theta_base > 0.0f) || !std::isfinite(d.theta_base)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu rope: theta_base must be finite and > 0; got %g",
                              static_cast<double>(d.theta_base));
  }
  if (hwinfer_error* error =
          check_dtype_in(d.q, kName, "q", {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
    return error;
  }
  if (has_k) {
    if (hwinfer_error* error =
            check_dtype_in(d.k, kName, "k", {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
      return error;
    }
  }
  if (hwinfer_error* error =
          check_dtype_in(d.positions, kName, "positions", {HWINFER_DTYPE_I32}, "I32")) {
    return error;
  }
  ViewExpectation q = expect_view(kName, "q", d.q.dtype, "[n_tokens, n_heads, head_dim]",
                                  {d.n_tokens, d.n_heads, d.head_dim});
  q.contiguous = q.is_output = true;
  if (hwinfer_error* error = check_view(d.q, q, device, require_buffers)) return error;
  if (has_k) {
    ViewExpectation k = expect_view(kName, "k", d.k.dtype, "[n_tokens, n_kv_heads, head_dim]",
                                    {d.n_tokens, d.n_kv_heads, d.head_dim});
    k.contiguous = k.is_output = true;
    if (hwinfer_error* error = check_view(d.k, k, device, require_buffers)) return error;
  }
  if (hwinfer_error* error =
          check_view(d.positions, expect_token_vector(kName, "positions", d.n_tokens), device,
                     require_buffers)) {
    return error;
  }
  if (views_overlap(d.q, d.positions)) return overlap_error(kName, "q", "positions");
  if (has_k) {
    if (views_overlap(d.q, d.k)) return overlap_error(kName, "q", "k");
    if (views_overlap(d.k, d.positions)) return overlap_error(kName, "k", "positions");
  }
  return nullptr;
}

hwinfer_error* enqueue_rope(hwinfer_stream* stream, const hwinfer_rope_desc* desc) {
  return guarded("rope", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "rope: stream")) return error;
    if (hwinfer_error* error = require_non_null(desc, "rope: desc")) return error;
    if (hwinfer_error* error = check_rope(stream->device, *desc, true)) return error;
    RopeProblem p;
    p.n_tokens = desc->n_tokens;
    p.head_dim = desc->head_dim;
    p.rotary_dim = desc->rotary_dim;
    p.theta_base = static_cast<double>(desc->theta_base);
    p.neox = desc->mode == HWINFER_ROPE_NEOX;
    p.q = rope_operand(desc->q, desc->n_heads);
    if (desc->k.buffer != nullptr) p.k = rope_operand(desc->k, desc->n_kv_heads);
    p.positions = view_data(desc->positions);
    p.position_stride = desc->positions.strides_bytes[0];
    ThreadPool* pool = stream->pool;
    return stream->worker.enqueue([p, pool]() -> hwinfer_error* {
      rope(p, *pool);
      return nullptr;
    });
  });
}

// ---- embedding ---------------------------------------------------------------------------------

hwinfer_error* check_embedding(const hwinfer_device* device, const hwinfer_embedding_desc& d,
                               bool require_buffers) {
  constexpr const char* kName = "embedding";
  if (hwinfer_error* error = check_desc_size(d.struct_size, sizeof(d), kName)) return error;
  if (d.n_tokens <= 0 || d.vocab <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu embedding: n_tokens, vocab and dim must be > 0; got "
                              "n_tokens=%" PRId64 " vocab=%" PRId64 " dim=%" PRId64,
                              d.n_tokens, d.vocab, d.dim);
  }
  if (hwinfer_error* error =
          check_dtype_in(d.table, kName, "table",
                         {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16,
                          HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0},
                         "F32, F16, BF16, Q8_0 or Q4_0")) {
    return error;
  }
  if (hwinfer_error* error = check_dtype_in(d.ids, kName, "ids", {HWINFER_DTYPE_I32}, "I32")) {
    return error;
  }
  if (hwinfer_error* error = check_dtype_in(d.out, kName, "out", {HWINFER_DTYPE_F32}, "F32")) {
    return error;
  }
  if (hwinfer_error* error = check_embedding_table(device, d, require_buffers)) return error;
  if (hwinfer_error* error = check_view(d.ids, expect_token_vector(kName, "ids", d.n_tokens),
                                        device, require_buffers)) {
    return error;
  }
  ViewExpectation out =
      expect_view(kName, "out", HWINFER_DTYPE_F32, "[n_tokens, dim]", {d.n_tokens, d.dim});
  out.contiguous = out.is_output = true;
  if (hwinfer_error* error = check_view(d.out, out, device, require_buffers)) return error;
  const hwinfer_tensor_view table =
      is_block_dtype(d.table.dtype) ? block_table_as_bytes(d) : d.table;
  if (views_overlap(d.out, table)) return overlap_error(kName, "out", "table");
  if (views_overlap(d.out, d.ids)) return overlap_error(kName, "out", "ids");
  return nullptr;
}

hwinfer_error* enqueue_embedding(hwinfer_stream* stream, const hwinfer_embedding_desc* desc) {
  return guarded("embedding", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "embedding: stream")) return error;
    if (hwinfer_error* error = require_non_null(desc, "embedding: desc")) return error;
    if (hwinfer_error* error = check_embedding(stream->device, *desc, true)) return error;
    EmbeddingProblem p;
    p.n_tokens = desc->n_tokens;
    p.vocab = desc->vocab;
    p.dim = desc->dim;
    p.dtype = desc->table.dtype;
    p.table = view_data(desc->table);
    p.table_row_stride = desc->table.strides_bytes[0];
    p.ids = view_data(desc->ids);
    p.id_stride = desc->ids.strides_bytes[0];
    p.out = view_data(desc->out);
    p.out_row_stride = desc->out.strides_bytes[0];
    ThreadPool* pool = stream->pool;
    return stream->worker.enqueue([p, pool]() -> hwinfer_error* { return embedding(p, *pool); });
  });
}

}  // namespace hwinfer::cpu
