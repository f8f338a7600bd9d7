// attention_decode_body.h — the paged decode attention kernel, included once per instruction set
// (attention_decode.cpp: baseline; attention_decode_avx2.cpp: AVX2/FMA/F16C) inside namespace
// hwinfer::cpu::HWINFER_ATTENTION_DECODE_NS. Not a normal header: no include guard, and it must not
// be included anywhere else.
//
// Work item = (sequence, KV head, split of the KV length). An item keeps the G = n_heads /
// n_kv_heads query heads that share its KV head together, so each K/V row is read once for all of
// them, and runs an online softmax block by block: running max m, running sum l, accumulator acc.
// The splits' partial (m, l, acc) are merged per query head afterwards:
//   M = max_i m_i,  out = sum_i exp(m_i - M) acc_i / sum_i exp(m_i - M) l_i.
//   q, out: [n_seqs, n_heads, head_dim];  partials: [items, G] (m, l), [items, G, head_dim] (acc)
//
// Per block of KV rows: the K rows are converted to f32 once (shared by the G heads), the G x rows
// scores computed, exponentiated and summed, then the V rows converted once and accumulated into
// acc (rescaled by the softmax correction in the same pass). The AVX2 build (F16C) does the dots
// four rows at a time, exp eight scores at a time (exp_nonpositive_avx2, simd_exp_avx2.h) and the
// accumulation with acc held in registers across the block's rows; head_dim not a multiple of 8
// takes the plain loops. Scratch is allocated once per work item, never per row.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "attention_decode.h"

// HWINFER_ATTENTION_DECODE_TARGET marks the hot functions: a target attribute (not whole-file
// -mavx2), so inline functions and templates this file shares with others (std::vector, paged_kv.h)
// are never emitted with AVX2 instructions that the portable path could end up calling.
#ifndef HWINFER_ATTENTION_DECODE_TARGET
#define HWINFER_ATTENTION_DECODE_TARGET
#endif

#if HWINFER_ATTENTION_DECODE_F16C
#include <immintrin.h>

#include "simd_exp_avx2.h"
#endif

namespace hwinfer::cpu::HWINFER_ATTENTION_DECODE_NS {

namespace {

// load_kv_row (paged_kv.h), with F16 (F16C) and I8 rows converted 8 at a time in the AVX2 build.
HWINFER_ATTENTION_DECODE_TARGET inline void load_pool_row(const PagedKvPool& pool, int64_t block,
                                                          int64_t row, int64_t head, int64_t dim,
                                                          float* dst) {
#if HWINFER_ATTENTION_DECODE_F16C
  if (pool.dtype == HWINFER_DTYPE_F16) {
    const uint8_t* src =
        pool.data + block * pool.block_stride + row * pool.row_stride + head * pool.head_stride;
    int64_t d = 0;
    for (; d + 8 <= dim; d += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * d));
      _mm256_storeu_ps(dst + d, _mm256_cvtph_ps(h));
    }
    const auto* tail = reinterpret_cast<const uint16_t*>(src);
    for (; d < dim; ++d) dst[d] = half_to_float(tail[d]);
    return;
  }
  if (pool.dtype == HWINFER_DTYPE_I8) {
    const auto* src = reinterpret_cast<const int8_t*>(
        pool.data + block * pool.block_stride + row * pool.row_stride + head * pool.head_stride);
    float scale = 0.0f;
    std::memcpy(&scale,
                pool.scales + block * pool.scale_block_stride + head * pool.scale_head_stride,
                sizeof(scale));
    const __m256 scale8 = _mm256_set1_ps(scale);
    int64_t d = 0;
    for (; d + 8 <= dim; d += 8) {
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + d));
      const __m256 values = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
      _mm256_storeu_ps(dst + d, _mm256_mul_ps(scale8, values));
    }
    for (; d < dim; ++d) dst[d] = scale * static_cast<float>(src[d]);
    return;
  }
#endif
  load_kv_row(pool, block, row, head, dim, dst);
}

constexpr int64_t kMinTokensPerSplit = 256;
constexpr int64_t kItemsPerThread = 4;

// sum_d a[d] * b[d] with eight independent partial sums (vectorises without -ffast-math).
HWINFER_ATTENTION_DECODE_TARGET inline float dot(const float* a, const float* b, int64_t n) {
  float lanes[8] = {};
  int64_t d = 0;
  for (; d + 8 <= n; d += 8) {
    for (int i = 0; i < 8; ++i) lanes[i] += a[d + i] * b[d + i];
  }
  float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
              ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; d < n; ++d) sum += a[d] * b[d];
  return sum;
}

#if HWINFER_ATTENTION_DECODE_F16C
// Sum of the 8 lanes of each of a0..a3 -> [sum a0, sum a1, sum a2, sum a3].
HWINFER_ATTENTION_DECODE_TARGET inline __m128 hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}
#endif

// s[r] = q . rows[r] for r < n_rows.  q: [dim];  rows: [n_rows, dim]
HWINFER_ATTENTION_DECODE_TARGET inline void block_scores(const float* q, const float* rows,
                                                         int64_t n_rows, int64_t dim, float* s) {
  int64_t r = 0;
#if HWINFER_ATTENTION_DECODE_F16C
  if (dim % 8 == 0) {
    for (; r + 4 <= n_rows; r += 4) {
      const float* k0 = rows + r * dim;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int64_t d = 0; d < dim; d += 8) {
        const __m256 qv = _mm256_loadu_ps(q + d);
        a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + d), a0);
        a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + dim + d), a1);
        a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + 2 * dim + d), a2);
        a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + 3 * dim + d), a3);
      }
      _mm_storeu_ps(s + r, hsum4(a0, a1, a2, a3));
    }
  }
#endif
  for (; r < n_rows; ++r) s[r] = dot(q, rows + r * dim, dim);
}

// s[r] = exp(s[r] - shift(r)) for r < n_rows, where |shift| maps a row to what it subtracts;
// returns the sum of the results.
template <typename Shift>
HWINFER_ATTENTION_DECODE_TARGET inline float exp_shifted_by(float* s, int64_t n_rows, Shift shift) {
  float sum = 0.0f;
  int64_t r = 0;
#if HWINFER_ATTENTION_DECODE_F16C
  __m256 total = _mm256_setzero_ps();
  alignas(32) float x[8];
  for (; r < n_rows; r += 8) {
    // 8 rows at a time; the last 1..7 padded with -inf (exp = 0).
    for (int i = 0; i < 8; ++i) x[i] = r + i < n_rows ? s[r + i] - shift(r + i) : -INFINITY;
    const __m256 e = exp_nonpositive_avx2(_mm256_load_ps(x));
    _mm256_store_ps(x, e);
    for (int64_t i = 0; i < 8 && r + i < n_rows; ++i) s[r + i] = x[i];
    total = _mm256_add_ps(total, e);
  }
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(total), _mm256_extractf128_ps(total, 1));
  const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
  sum = _mm_cvtss_f32(_mm_add_ss(quarter, _mm_movehdup_ps(quarter)));
#endif
  for (; r < n_rows; ++r) {
    s[r] = std::exp(s[r] - shift(r));
    sum += s[r];
  }
  return sum;
}

// s[r] = exp(s[r] - max) for r < n_rows; returns their sum. Full groups of 8 go straight through
// exp_nonpositive_avx2; the last 1..7 rows through exp_shifted_by.
HWINFER_ATTENTION_DECODE_TARGET inline float exp_shifted(float* s, int64_t n_rows, float max) {
  int64_t r = 0;
  float sum = 0.0f;
#if HWINFER_ATTENTION_DECODE_F16C
  const __m256 shift = _mm256_set1_ps(max);
  __m256 total = _mm256_setzero_ps();
  for (; r + 8 <= n_rows; r += 8) {
    const __m256 e = exp_nonpositive_avx2(_mm256_sub_ps(_mm256_loadu_ps(s + r), shift));
    _mm256_storeu_ps(s + r, e);
    total = _mm256_add_ps(total, e);
  }
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(total), _mm256_extractf128_ps(total, 1));
  const __m128 quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
  sum = _mm_cvtss_f32(_mm_add_ss(quarter, _mm_movehdup_ps(quarter)));
#endif
  return sum + exp_shifted_by(s + r, n_rows - r, [max](int64_t) { return max; });
}

// s[g] = exp(s[g] - max[g]) for g < n.
HWINFER_ATTENTION_DECODE_TARGET inline void exp_shifted(float* s, int64_t n, const float* max) {
  exp_shifted_by(s, n, [max](int64_t g) { return max[g]; });
}

// acc = acc * correction + sum_r s[r] * rows[r].  acc: [dim];  rows: [n_rows, dim]
HWINFER_ATTENTION_DECODE_TARGET inline void accumulate(float* acc, float correction, const float* s,
                                                       const float* rows, int64_t n_rows,
                                                       int64_t dim) {
#if HWINFER_ATTENTION_DECODE_F16C
  if (dim % 8 == 0) {
    // 32 dimensions (four registers) at a time stay in registers across the rows.
    const __m256 c = _mm256_set1_ps(correction);
    int64_t d = 0;
    for (; d + 32 <= dim; d += 32) {
      __m256 a0 = _mm256_mul_ps(c, _mm256_loadu_ps(acc + d));
      __m256 a1 = _mm256_mul_ps(c, _mm256_loadu_ps(acc + d + 8));
      __m256 a2 = _mm256_mul_ps(c, _mm256_loadu_ps(acc + d + 16));
      __m256 a3 = _mm256_mul_ps(c, _mm256_loadu_ps(acc + d + 24));
      for (int64_t r = 0; r < n_rows; ++r) {
        const __m256 w = _mm256_broadcast_ss(s + r);
        const float* row = rows + r * dim + d;
        a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(row), a0);
        a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(row + 8), a1);
        a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(row + 16), a2);
        a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(row + 24), a3);
      }
      _mm256_storeu_ps(acc + d, a0);
      _mm256_storeu_ps(acc + d + 8, a1);
      _mm256_storeu_ps(acc + d + 16, a2);
      _mm256_storeu_ps(acc + d + 24, a3);
    }
    for (; d < dim; d += 8) {
      __m256 a = _mm256_mul_ps(c, _mm256_loadu_ps(acc + d));
      for (int64_t r = 0; r < n_rows; ++r) {
        a = _mm256_fmadd_ps(_mm256_broadcast_ss(s + r), _mm256_loadu_ps(rows + r * dim + d), a);
      }
      _mm256_storeu_ps(acc + d, a);
    }
    return;
  }
#endif
  for (int64_t d = 0; d < dim; ++d) acc[d] *= correction;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float weight = s[r];
    const float* row = rows + r * dim;
    for (int64_t d = 0; d < dim; ++d) acc[d] += weight * row[d];
  }
}

HWINFER_ATTENTION_DECODE_TARGET inline void load_vector(const uint8_t* src, uint32_t dtype,
                                                        int64_t n, float scale, float* dst) {
  if (dtype == HWINFER_DTYPE_F16) {
    const auto* h = reinterpret_cast<const uint16_t*>(src);
    for (int64_t d = 0; d < n; ++d) dst[d] = scale * half_to_float(h[d]);
  } else {
    const auto* f = reinterpret_cast<const float*>(src);
    for (int64_t d = 0; d < n; ++d) dst[d] = scale * f[d];
  }
}

uint16_t float_to_half(float value) {
  // Round to nearest even, exact; same rule as the reference's f32_to_f16.
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

inline void store_vector(const float* src, int64_t n, uint32_t dtype, uint8_t* dst) {
  if (dtype == HWINFER_DTYPE_F16) {
    auto* h = reinterpret_cast<uint16_t*>(dst);
    for (int64_t d = 0; d < n; ++d) h[d] = float_to_half(src[d]);
  } else {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  }
}

struct Partials {
  int64_t group = 0, dim = 0;
  std::vector<float> max, sum, acc;  // [items, group], [items, group], [items, group, dim]
};

// One item: query heads [kv_head * G, (kv_head + 1) * G) of sequence |seq| over KV blocks
// [block_begin, block_end) of its table; writes the partial (m, l, acc) of |item|.
HWINFER_ATTENTION_DECODE_TARGET void run_split(const AttentionDecodeProblem& p, int64_t seq,
                                               int64_t kv_head, int64_t block_begin,
                                               int64_t block_end, int64_t item, Partials& parts) {
  const int64_t group = parts.group, dim = p.head_dim, block_size = p.table.block_size;
  float* m = parts.max.data() + item * group;
  float* l = parts.sum.data() + item * group;
  float* acc = parts.acc.data() + item * group * dim;
  std::fill(m, m + group, -INFINITY);
  std::fill(l, l + group, 0.0f);
  std::fill(acc, acc + group * dim, 0.0f);
  std::vector<float> q(static_cast<size_t>(group * dim));
  std::vector<float> rows(static_cast<size_t>(block_size * dim));
  std::vector<float> scores(static_cast<size_t>(group * block_size));
  std::vector<float> correction(static_cast<size_t>(group)), new_max(static_cast<size_t>(group));
  for (int64_t g = 0; g < group; ++g) {
    load_vector(p.q + seq * p.q_seq_stride + (kv_head * group + g) * p.q_head_stride, p.dtype, dim,
                p.scale, q.data() + g * dim);
  }
  const int64_t len = p.table.context_len(seq);
  for (int64_t b = block_begin; b < block_end; ++b) {
    const int64_t block = p.table.block_id(seq, b);
    const int64_t n_rows = std::min(block_size, len - b * block_size);
    for (int64_t r = 0; r < n_rows; ++r) {
      load_pool_row(p.k, block, r, kv_head, dim, rows.data() + r * dim);
    }
    // Scores and the new running max of every head, then all G corrections in one pass
    // (exp(-inf) = 0 on the first block), then the scores' exponentials and sums.
    for (int64_t g = 0; g < group; ++g) {
      float* s = scores.data() + g * block_size;
      block_scores(q.data() + g * dim, rows.data(), n_rows, dim, s);
      float block_max = -INFINITY;
      for (int64_t r = 0; r < n_rows; ++r) block_max = std::max(block_max, s[r]);
      new_max[static_cast<size_t>(g)] = std::max(m[g], block_max);
      correction[static_cast<size_t>(g)] = m[g];
    }
    exp_shifted(correction.data(), group, new_max.data());
    for (int64_t g = 0; g < group; ++g) {
      const float max = new_max[static_cast<size_t>(g)];
      l[g] = l[g] * correction[static_cast<size_t>(g)] +
             exp_shifted(scores.data() + g * block_size, n_rows, max);
      m[g] = max;
    }
    for (int64_t r = 0; r < n_rows; ++r) {
      load_pool_row(p.v, block, r, kv_head, dim, rows.data() + r * dim);
    }
    for (int64_t g = 0; g < group; ++g) {
      accumulate(acc + g * dim, correction[static_cast<size_t>(g)], scores.data() + g * block_size,
                 rows.data(), n_rows, dim);
    }
  }
}

}  // namespace

hwinfer_error* attention_decode_paged(const AttentionDecodeProblem& p, ThreadPool& pool) {
  if (hwinfer_error* error = check_paged_table("attention_decode_paged", p.table, p.n_seqs, 1)) {
    return error;
  }
  const int64_t block_size = p.table.block_size;
  int64_t max_blocks = 1;
  for (int64_t s = 0; s < p.n_seqs; ++s) {
    max_blocks = std::max(max_blocks, (p.table.context_len(s) + block_size - 1) / block_size);
  }
  // Enough items to keep every thread busy, none shorter than kMinTokensPerSplit tokens.
  const int64_t groups = p.n_seqs * p.n_kv_heads;
  const int64_t target_items = kItemsPerThread * pool.thread_count();
  const int64_t max_splits = std::max<int64_t>(1, max_blocks * block_size / kMinTokensPerSplit);
  const int64_t n_splits = std::clamp<int64_t>((target_items + groups - 1) / groups, 1,
                                               std::min(max_splits, max_blocks));
  Partials parts;
  parts.group = p.n_heads / p.n_kv_heads;
  parts.dim = p.head_dim;
  const auto n_items = static_cast<size_t>(groups * n_splits);
  parts.max.resize(n_items * static_cast<size_t>(parts.group));
  parts.sum.resize(n_items * static_cast<size_t>(parts.group));
  parts.acc.resize(n_items * static_cast<size_t>(parts.group * p.head_dim));

  pool.parallel_for(groups * n_splits, [&](int64_t item) {
    const int64_t group_index = item / n_splits, split = item % n_splits;
    const int64_t seq = group_index / p.n_kv_heads, kv_head = group_index % p.n_kv_heads;
    const int64_t seq_blocks = (p.table.context_len(seq) + block_size - 1) / block_size;
    const int64_t per_split = (seq_blocks + n_splits - 1) / n_splits;
    const int64_t begin = std::min(seq_blocks, split * per_split);
    const int64_t end = std::min(seq_blocks, begin + per_split);
    run_split(p, seq, kv_head, begin, end, item, parts);
  });

  // Merge the splits of each (sequence, query head).
  const int64_t group = parts.group, dim = p.head_dim;
  pool.parallel_for(groups, [&](int64_t group_index) {
    const int64_t seq = group_index / p.n_kv_heads, kv_head = group_index % p.n_kv_heads;
    std::vector<float> out(static_cast<size_t>(dim));
    for (int64_t g = 0; g < group; ++g) {
      float global_max = -INFINITY;
      for (int64_t j = 0; j < n_splits; ++j) {
        global_max = std::max(global_max, parts.max[(group_index * n_splits + j) * group + g]);
      }
      std::fill(out.begin(), out.end(), 0.0f);
      float total = 0.0f;
      for (int64_t j = 0; j < n_splits; ++j) {
        const int64_t item = group_index * n_splits + j;
        const float m = parts.max[item * group + g];
        if (m == -INFINITY) continue;  // an empty split
        const float weight = std::exp(m - global_max);
        total += weight * parts.sum[item * group + g];
        const float* a = parts.acc.data() + (item * group + g) * dim;
        for (int64_t d = 0; d < dim; ++d) out[d] += weight * a[d];
      }
      const float inverse = 1.0f / total;
      for (int64_t d = 0; d < dim; ++d) out[d] *= inverse;
      store_vector(out.data(), dim, p.dtype,
                   p.out + seq * p.out_seq_stride + (kv_head * group + g) * p.out_head_stride);
    }
  });
  return nullptr;
}

}  // namespace hwinfer::cpu::HWINFER_ATTENTION_DECODE_NS
