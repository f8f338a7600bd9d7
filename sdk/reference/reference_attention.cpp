// reference_attention.cpp — see reference_attention.h. Scalar, no threads.
#include "reference/reference_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "reference/half.h"

namespace hwinfer::reference {

int8_t quantize_i8(float x, float scale) {
  if (scale == 0.0f) return 0;
  const float q = std::nearbyint(x / scale);
  return static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
}

void kv_append_reference_f16(const PagedPoolShape& shape, int64_t n_tokens, const float* src,
                             const int32_t* slot_mapping, uint16_t* pool) {
  const int64_t row_elems = shape.n_kv_heads * shape.head_dim;
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (slot_mapping[t] < 0) continue;
    uint16_t* dst = pool + slot_mapping[t] * row_elems;  // slot * row = (block * bs + row) * row
    for (int64_t i = 0; i < row_elems; ++i) dst[i] = f32_to_f16(src[t * row_elems + i]);
  }
}

void kv_append_reference_i8(const PagedPoolShape& shape, int64_t n_tokens, const float* src,
                            const int32_t* slot_mapping, int8_t* pool, float* scales) {
  const int64_t heads = shape.n_kv_heads, dim = shape.head_dim;
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (slot_mapping[t] < 0) continue;
    const int64_t block = slot_mapping[t] / shape.block_size;
    const int64_t row = slot_mapping[t] % shape.block_size;
    for (int64_t h = 0; h < heads; ++h) {
      const float* x = src + (t * heads + h) * dim;
      float absmax = 0.0f;
      for (int64_t d = 0; d < dim; ++d) absmax = std::max(absmax, std::fabs(x[d]));
      float& scale = scales[block * heads + h];
      if (absmax > scale * 127.0f) {
        const float new_scale = absmax / 127.0f;
        for (int64_t r = 0; r < shape.block_size; ++r) {
          int8_t* q = pool + ((block * shape.block_size + r) * heads + h) * dim;
          for (int64_t d = 0; d < dim; ++d) {
            q[d] = quantize_i8(static_cast<float>(q[d]) * scale, new_scale);
          }
        }
        scale = new_scale;
      }
      int8_t* q = pool + ((block * shape.block_size + row) * heads + h) * dim;
      for (int64_t d = 0; d < dim; ++d) q[d] = quantize_i8(x[d], scale);
    }
  }
}

double pool_value(const PagedPool& pool, int64_t block, int64_t row, int64_t head, int64_t d) {
  const PagedPoolShape& s = pool.shape;
  const int64_t index = ((block * s.block_size + row) * s.n_kv_heads + head) * s.head_dim + d;
  if (pool.f16 != nullptr) return static_cast<double>(f16_to_f32(pool.f16[index]));
  return static_cast<double>(pool.scales[block * s.n_kv_heads + head]) *
         static_cast<double>(pool.i8[index]);
}

namespace {

// out[0, dim) = softmax(scores) @ values[0, scores.size()), everything in double.
void softmax_weighted_sum(const std::vector<double>& scores,
                          const std::vector<std::vector<double>>& values, int64_t dim,
                          double* out) {
  double max_score = -INFINITY;
  for (double score : scores) max_score = std::max(max_score, score);
  double sum = 0.0;
  std::vector<double> weights(scores.size());
  for (size_t j = 0; j < scores.size(); ++j) {
    weights[j] = std::exp(scores[j] - max_score);
    sum += weights[j];
  }
  for (int64_t d = 0; d < dim; ++d) {
    double acc = 0.0;
    for (size_t j = 0; j < scores.size(); ++j) acc += weights[j] * values[j][d];
    out[d] = acc / sum;
  }
}

// Appends the first |n| tokens of a paged sequence (head |kv_head|) to |keys| and |values|.
void gather_paged(const PagedPool& k, const PagedPool& v, const int32_t* block_table, int64_t n,
                  int64_t kv_head, std::vector<std::vector<double>>& keys,
                  std::vector<std::vector<double>>& values) {
  const int64_t dim = k.shape.head_dim, block_size = k.shape.block_size;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t block = block_table[t / block_size], row = t % block_size;
    std::vector<double> key(static_cast<size_t>(dim)), value(static_cast<size_t>(dim));
    for (int64_t d = 0; d < dim; ++d) {
      key[d] = pool_value(k, block, row, kv_head, d);
      value[d] = pool_value(v, block, row, kv_head, d);
    }
    keys.push_back(std::move(key));
    values.push_back(std::move(value));
  }
}

double dot(const float* q, const std::vector<double>& key) {
  double sum = 0.0;
  for (size_t d = 0; d < key.size(); ++d) sum += static_cast<double>(q[d]) * key[d];
  return sum;
}

}  // namespace

void attention_decode_paged_reference(const PagedPool& k, const PagedPool& v, int64_t n_seqs,
                                      int64_t n_heads, const float* q, const int32_t* block_tables,
                                      int64_t max_blocks_per_seq, const int32_t* context_lens,
                                      float scale, double* out) {
  const int64_t dim = k.shape.head_dim, group = n_heads / k.shape.n_kv_heads;
  for (int64_t s = 0; s < n_seqs; ++s) {
    for (int64_t h = 0; h < n_heads; ++h) {
      std::vector<std::vector<double>> keys, values;
      gather_paged(k, v, block_tables + s * max_blocks_per_seq, context_lens[s], h / group, keys,
                   values);
      const float* q_row = q + (s * n_heads + h) * dim;
      std::vector<double> scores;
      for (const auto& key : keys) scores.push_back(static_cast<double>(scale) * dot(q_row, key));
      softmax_weighted_sum(scores, values, dim, out + (s * n_heads + h) * dim);
    }
  }
}

void attention_prefill_reference(int64_t n_tokens, int64_t n_seqs, int64_t n_heads,
                                 int64_t n_kv_heads, int64_t head_dim, const float* q,
                                 const float* k, const float* v, const int32_t* query_start,
                                 bool causal, float scale, const PagedPool* k_cache,
                                 const PagedPool* v_cache, const int32_t* block_tables,
                                 int64_t max_blocks_per_seq, const int32_t* context_lens,
                                 double* out) {
  (void)n_tokens;
  const int64_t group = n_heads / n_kv_heads, dim = head_dim;
  for (int64_t s = 0; s < n_seqs; ++s) {
    const int64_t begin = query_start[s], end = query_start[s + 1];
    for (int64_t h = 0; h < n_heads; ++h) {
      const int64_t kv_head = h / group;
      std::vector<std::vector<double>> keys, values;
      if (k_cache != nullptr) {
        gather_paged(*k_cache, *v_cache, block_tables + s * max_blocks_per_seq, context_lens[s],
                     kv_head, keys, values);
      }
      const size_t n_cached = keys.size();
      for (int64_t t = begin; t < end; ++t) {
        std::vector<double> key(static_cast<size_t>(dim)), value(static_cast<size_t>(dim));
        for (int64_t d = 0; d < dim; ++d) {
          key[d] = static_cast<double>(k[(t * n_kv_heads + kv_head) * dim + d]);
          value[d] = static_cast<double>(v[(t * n_kv_heads + kv_head) * dim + d]);
        }
        keys.push_back(std::move(key));
        values.push_back(std::move(value));
      }
      for (int64_t t = begin; t < end; ++t) {
        const size_t visible = causal ? n_cached + static_cast<size_t>(t - begin) + 1 : keys.size();
        const float* q_row = q + (t * n_heads + h) * dim;
        std::vector<double> scores;
        for (size_t j = 0; j < visible; ++j) {
          scores.push_back(static_cast<double>(scale) * dot(q_row, keys[j]));
        }
        softmax_weighted_sum(scores, values, dim, out + (t * n_heads + h) * dim);
      }
    }
  }
}

}  // namespace hwinfer::reference
