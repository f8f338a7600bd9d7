// attention_prefill_avx2.cpp — the AVX2/FMA/F16C work item of attention_prefill (see
// attention_prefill.h). Called only after cpu_can_use_avx2_kernels() said yes.
//
// Hot functions carry a target attribute (HWINFER_PREFILL_TARGET) instead of building the file
// with -mavx2: inline functions and templates this file shares with others (paged_kv.h,
// <algorithm>) are then never emitted with AVX2 instructions that the portable path could end up
// calling.
//
// One work item = one query tile of one sequence x one KV head: the G = n_heads / n_kv_heads
// query heads sharing the KV head are processed together, so each K/V tile is loaded and converted
// to f32 once for G * tile_tokens query rows. Row r = i * G + g (token-major: token i of the tile,
// head kv_head * G + g). Per item, in its scratch (floats, D = head_dim rounded up to 8, R = rows
// rounded up to 16):
//   qt [D][R]  scale * Q, transposed     k, v [kKeyTile][D]  one key tile of the cached prefix
//   st [kKeyTile][R]  scores, then probabilities, of the key tile (transposed: key-major)
//   o [R][D] accumulator;  m, l, corr [R];  vis [R] (int32) keys of the tile each row may see
// Key tiles (<= kKeyTile keys): first the cached prefix (gathered across blocks), then the new
// tokens up to the tile's last query when causal. For each key tile:
//   S^T = K * Q^T   6 keys x 16 rows FMA micro-kernel; key groups no row of the tile can see
//                   (causal) are skipped
//   online softmax  8 rows at a time (vertical over keys): m, l, corr = exp(m_old - m_new),
//                   masked scores -> probability exactly 0; exp_nonpositive_avx2
//   O = corr * O + P * V   6 rows x 16 dims FMA micro-kernel, each row block only over the keys
//                   its rows may see
// The full score matrix is never materialised.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attention_prefill.h"
#include "simd_exp_avx2.h"

#define HWINFER_PREFILL_TARGET __attribute__((target("avx2,fma,f16c")))

namespace hwinfer::cpu::avx2 {

namespace {

constexpr int64_t kKeyTile = 64;   // keys per tile
constexpr int64_t kKeyGroup = 6;   // keys per S^T micro-tile
constexpr int64_t kRowBlock = 6;   // query rows per P * V micro-tile
constexpr int64_t kRowAlign = 16;  // query rows per S^T micro-tile

int64_t round_up(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

struct Layout {
  int64_t d8 = 0, rp = 0;
  int64_t qt = 0, k = 0, v = 0, st = 0, o = 0, m = 0, l = 0, corr = 0, vis = 0, total = 0;

  Layout(int64_t rows, int64_t head_dim) {
    d8 = round_up(head_dim, 8);
    rp = round_up(rows, kRowAlign);
    int64_t at = 0;
    auto take = [&at](int64_t floats) {
      const int64_t start = at;
      at += round_up(floats, 16);  // keep every array 64-byte aligned
      return start;
    };
    qt = take(d8 * rp);
    k = take(kKeyTile * d8);
    v = take(kKeyTile * d8);
    st = take(kKeyTile * rp);
    o = take(rp * d8);
    m = take(rp);
    l = take(rp);
    corr = take(rp);
    vis = take(rp);
    total = at;
  }
};

HWINFER_PREFILL_TARGET inline float half_lane_to_float(uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

HWINFER_PREFILL_TARGET inline uint16_t float_to_half_lane(float f) {
  return static_cast<uint16_t>(
      _mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
}

// dst[0, d8) = scale * src[0, dim) (F32 | F16 | I8 with |scale|), zero past dim.
HWINFER_PREFILL_TARGET inline void load_row(const uint8_t* src, uint32_t dtype, int64_t dim,
                                            int64_t d8, float scale, float* dst) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t d = 0;
  if (dtype == HWINFER_DTYPE_F32) {
    const auto* f = reinterpret_cast<const float*>(src);
    for (; d + 8 <= dim; d += 8)
      _mm256_storeu_ps(dst + d, _mm256_mul_ps(s, _mm256_loadu_ps(f + d)));
    for (; d < dim; ++d) dst[d] = scale * f[d];
  } else if (dtype == HWINFER_DTYPE_F16) {
    const auto* h = reinterpret_cast<const uint16_t*>(src);
    for (; d + 8 <= dim; d += 8) {
      const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + d));
      _mm256_storeu_ps(dst + d, _mm256_mul_ps(s, _mm256_cvtph_ps(bits)));
    }
    for (; d < dim; ++d) dst[d] = scale * half_lane_to_float(h[d]);
  } else {  // I8
    const auto* q = reinterpret_cast<const int8_t*>(src);
    for (; d + 8 <= dim; d += 8) {
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + d));
      const __m256 values = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
      _mm256_storeu_ps(dst + d, _mm256_mul_ps(s, values));
    }
    for (; d < dim; ++d) dst[d] = scale * static_cast<float>(q[d]);
  }
  for (; d < d8; ++d) dst[d] = 0.0f;
}

// st[j * rp + c] = sum_d k[j * k_stride + d] * qt[d * rp + c] for J keys j and 16 rows c.
template <int J>
HWINFER_PREFILL_TARGET inline void scores_tile(const float* k, int64_t k_stride, const float* qt,
                                               int64_t d8, int64_t rp, float* st) {
  __m256 acc[J][2];
  for (auto& row : acc) row[0] = row[1] = _mm256_setzero_ps();
  for (int64_t d = 0; d < d8; ++d) {
    const __m256 q0 = _mm256_loadu_ps(qt + d * rp);
    const __m256 q1 = _mm256_loadu_ps(qt + d * rp + 8);
    for (int j = 0; j < J; ++j) {
      const __m256 kb = _mm256_broadcast_ss(k + j * k_stride + d);
      acc[j][0] = _mm256_fmadd_ps(kb, q0, acc[j][0]);
      acc[j][1] = _mm256_fmadd_ps(kb, q1, acc[j][1]);
    }
  }
  for (int j = 0; j < J; ++j) {
    _mm256_storeu_ps(st + j * rp, acc[j][0]);
    _mm256_storeu_ps(st + j * rp + 8, acc[j][1]);
  }
}

template <int J>
HWINFER_PREFILL_TARGET inline void scores_rows(const float* k, int64_t k_stride, const float* qt,
                                               int64_t d8, int64_t rp, int64_t r_first, float* st) {
  for (int64_t rc = r_first; rc < rp; rc += kRowAlign) {
    scores_tile<J>(k, k_stride, qt + rc, d8, rp, st + rc);
  }
}

// o[m * d8 + c] = corr[m] * o[m * d8 + c] + sum_{j < n_keys} p[j * rp + m] * v[j * v_stride + c]
// for M rows m and 8 * NV columns c.
template <int M, int NV>
HWINFER_PREFILL_TARGET inline void pv_tile(const float* p, int64_t rp, const float* v,
                                           int64_t v_stride, int64_t d8, int64_t n_keys,
                                           const float* corr, float* o) {
  __m256 acc[M][NV];
  for (int m = 0; m < M; ++m) {
    const __m256 c = _mm256_broadcast_ss(corr + m);
    for (int n = 0; n < NV; ++n) acc[m][n] = _mm256_mul_ps(c, _mm256_loadu_ps(o + m * d8 + 8 * n));
  }
  for (int64_t j = 0; j < n_keys; ++j) {
    __m256 vv[NV];
    for (int n = 0; n < NV; ++n) vv[n] = _mm256_loadu_ps(v + j * v_stride + 8 * n);
    for (int m = 0; m < M; ++m) {
      const __m256 pb = _mm256_broadcast_ss(p + j * rp + m);
      for (int n = 0; n < NV; ++n) acc[m][n] = _mm256_fmadd_ps(pb, vv[n], acc[m][n]);
    }
  }
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < NV; ++n) _mm256_storeu_ps(o + m * d8 + 8 * n, acc[m][n]);
  }
}

template <int M>
HWINFER_PREFILL_TARGET inline void pv_rows(const float* p, int64_t rp, const float* v,
                                           int64_t v_stride, int64_t d8, int64_t n_keys,
                                           const float* corr, float* o) {
  int64_t c = 0;
  for (; c + 16 <= d8; c += 16) pv_tile<M, 2>(p, rp, v + c, v_stride, d8, n_keys, corr, o + c);
  if (c < d8) pv_tile<M, 1>(p, rp, v + c, v_stride, d8, n_keys, corr, o + c);
}

struct Item {
  const AttentionPrefillProblem* p;
  const PrefillWork* w;
  Layout layout;
  int64_t group, rows;
  float* base;
};

// Folds n keys (rows k[j * k_stride], v[j * v_stride]) into the state; vis[r] (already set) =
// keys of the tile row r may see (<= 0: none). first_token_key = (causal new tokens) the tile's
// first key's packed token index, else -1: lets the score pass skip key groups no row can see yet.
HWINFER_PREFILL_TARGET void fold_tile(const Item& it, const float* k, int64_t k_stride,
                                      const float* v, int64_t v_stride, int64_t n,
                                      int64_t first_token_key) {
  const Layout& L = it.layout;
  const int64_t d8 = L.d8, rp = L.rp;
  float* base = it.base;
  const float* qt = base + L.qt;
  float* st = base + L.st;
  float* o = base + L.o;
  float* m = base + L.m;
  float* l = base + L.l;
  float* corr = base + L.corr;
  const auto* vis = reinterpret_cast<const int32_t*>(base + L.vis);

  // S^T = K Q^T, key group by key group.
  for (int64_t jg = 0; jg < n; jg += kKeyGroup) {
    int64_t r_first = 0;
    if (first_token_key >= 0) {
      const int64_t token = first_token_key + jg - it.w->begin;  // first tile token seeing jg
      r_first = std::max<int64_t>(0, token) * it.group / kRowAlign * kRowAlign;
      if (r_first >= it.rows) continue;
    }
    const float* kg = k + jg * k_stride;
    float* sg = st + jg * rp;
    switch (std::min(kKeyGroup, n - jg)) {
      case 6:
        scores_rows<6>(kg, k_stride, qt, d8, rp, r_first, sg);
        break;
      case 5:
        scores_rows<5>(kg, k_stride, qt, d8, rp, r_first, sg);
        break;
      case 4:
        scores_rows<4>(kg, k_stride, qt, d8, rp, r_first, sg);
        break;
      case 3:
        scores_rows<3>(kg, k_stride, qt, d8, rp, r_first, sg);
        break;
      case 2:
        scores_rows<2>(kg, k_stride, qt, d8, rp, r_first, sg);
        break;
      default:
        scores_rows<1>(kg, k_stride, qt, d8, rp, r_first, sg);
        break;
    }
  }

  // Online softmax, 8 rows at a time. Keys [0, all_see) are visible to all 8 rows, keys
  // [all_see, any_sees) to some (masked to -inf for the others), later ones to none.
  const __m256 minus_inf = _mm256_set1_ps(-INFINITY);
  for (int64_t rc = 0; rc < rp; rc += 8) {
    const __m256i vis8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vis + rc));
    alignas(32) int32_t vis_lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(vis_lanes), vis8);
    int64_t any_sees = 0, all_see = n;
    for (int32_t value : vis_lanes) {
      any_sees = std::max<int64_t>(any_sees, value);
      all_see = std::min<int64_t>(all_see, value);
    }
    any_sees = std::min(any_sees, n);
    all_see = std::max<int64_t>(all_see, 0);
    if (any_sees <= 0) {
      // A P * V row block may span two 8-row chunks and run to the other chunk's last key.
      for (int64_t j = 0; j < n; ++j) _mm256_storeu_ps(st + j * rp + rc, _mm256_setzero_ps());
      _mm256_storeu_ps(corr + rc, _mm256_set1_ps(1.0f));
      continue;
    }
    const __m256 m_old = _mm256_loadu_ps(m + rc);
    __m256 max0 = m_old, max1 = minus_inf;
    int64_t j = 0;
    for (; j + 2 <= all_see; j += 2) {
      max0 = _mm256_max_ps(max0, _mm256_loadu_ps(st + j * rp + rc));
      max1 = _mm256_max_ps(max1, _mm256_loadu_ps(st + (j + 1) * rp + rc));
    }
    for (; j < any_sees; ++j) {
      const __m256 visible =
          _mm256_castsi256_ps(_mm256_cmpgt_epi32(vis8, _mm256_set1_epi32(static_cast<int>(j))));
      const __m256 s = _mm256_blendv_ps(minus_inf, _mm256_loadu_ps(st + j * rp + rc), visible);
      max0 = _mm256_max_ps(max0, s);
    }
    const __m256 m_new = _mm256_max_ps(max0, max1);
    // Rows that have seen no key yet keep m = -inf; subtract 0 from them instead (all their
    // probabilities and corrections are exp(-inf) = 0).
    const __m256 ref =
        _mm256_blendv_ps(m_new, _mm256_setzero_ps(), _mm256_cmp_ps(m_new, minus_inf, _CMP_EQ_OQ));
    __m256 sum0 = _mm256_setzero_ps(), sum1 = _mm256_setzero_ps();
    for (j = 0; j + 2 <= all_see; j += 2) {
      const __m256 p0 = exp_nonpositive_avx2(_mm256_sub_ps(_mm256_loadu_ps(st + j * rp + rc), ref));
      const __m256 p1 =
          exp_nonpositive_avx2(_mm256_sub_ps(_mm256_loadu_ps(st + (j + 1) * rp + rc), ref));
      _mm256_storeu_ps(st + j * rp + rc, p0);
      _mm256_storeu_ps(st + (j + 1) * rp + rc, p1);
      sum0 = _mm256_add_ps(sum0, p0);
      sum1 = _mm256_add_ps(sum1, p1);
    }
    for (; j < any_sees; ++j) {
      const __m256 visible =
          _mm256_castsi256_ps(_mm256_cmpgt_epi32(vis8, _mm256_set1_epi32(static_cast<int>(j))));
      const __m256 s = _mm256_blendv_ps(minus_inf, _mm256_loadu_ps(st + j * rp + rc), visible);
      const __m256 prob = exp_nonpositive_avx2(_mm256_sub_ps(s, ref));
      _mm256_storeu_ps(st + j * rp + rc, prob);
      sum0 = _mm256_add_ps(sum0, prob);
    }
    for (; j < n; ++j) _mm256_storeu_ps(st + j * rp + rc, _mm256_setzero_ps());
    const __m256 c = exp_nonpositive_avx2(_mm256_sub_ps(m_old, ref));
    _mm256_storeu_ps(corr + rc, c);
    _mm256_storeu_ps(l + rc,
                     _mm256_fmadd_ps(_mm256_loadu_ps(l + rc), c, _mm256_add_ps(sum0, sum1)));
    _mm256_storeu_ps(m + rc, m_new);
  }

  // O = corr * O + P V, row block by row block, each over the keys its rows may see.
  for (int64_t r0 = 0; r0 < it.rows; r0 += kRowBlock) {
    const int64_t block_rows = std::min(kRowBlock, it.rows - r0);
    int64_t n_keys = 0;
    for (int64_t r = r0; r < r0 + block_rows; ++r) n_keys = std::max<int64_t>(n_keys, vis[r]);
    n_keys = std::min(n_keys, n);
    if (n_keys <= 0) continue;
    const float* p = st + r0;
    float* orow = o + r0 * d8;
    switch (block_rows) {
      case 6:
        pv_rows<6>(p, rp, v, v_stride, d8, n_keys, corr + r0, orow);
        break;
      case 5:
        pv_rows<5>(p, rp, v, v_stride, d8, n_keys, corr + r0, orow);
        break;
      case 4:
        pv_rows<4>(p, rp, v, v_stride, d8, n_keys, corr + r0, orow);
        break;
      case 3:
        pv_rows<3>(p, rp, v, v_stride, d8, n_keys, corr + r0, orow);
        break;
      case 2:
        pv_rows<2>(p, rp, v, v_stride, d8, n_keys, corr + r0, orow);
        break;
      default:
        pv_rows<1>(p, rp, v, v_stride, d8, n_keys, corr + r0, orow);
        break;
    }
  }
}

// dst[c * dst_stride + r] = src[r * src_stride + c] for an 8 x 8 block.
HWINFER_PREFILL_TARGET inline void transpose_8x8(const float* src, int64_t src_stride, float* dst,
                                                 int64_t dst_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * dst_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * dst_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

HWINFER_PREFILL_TARGET void run_item(const Item& it, const PrefillKv& kv) {
  const AttentionPrefillProblem& p = *it.p;
  const PrefillWork& w = *it.w;
  const Layout& L = it.layout;
  const int64_t dim = p.head_dim, d8 = L.d8, rp = L.rp, group = it.group;
  float* base = it.base;
  float* qt = base + L.qt;
  float* k = base + L.k;
  float* v = base + L.v;
  float* o = base + L.o;
  auto* vis = reinterpret_cast<int32_t*>(base + L.vis);

  // Q^T (scaled), zero padded: rows staged in o (still free), then 8 x 8 block transposes.
  for (int64_t r = 0; r < it.rows; ++r) {
    const int64_t token = w.begin + r / group, head = w.kv_head * group + r % group;
    load_row(p.q.data + token * p.q.token_stride + head * p.q.head_stride, p.q.dtype, dim, d8,
             p.scale, o + r * d8);
  }
  std::memset(o + it.rows * d8, 0, sizeof(float) * static_cast<size_t>((rp - it.rows) * d8));
  for (int64_t r = 0; r < rp; r += 8) {
    for (int64_t d = 0; d < d8; d += 8) transpose_8x8(o + r * d8 + d, d8, qt + d * rp + r, rp);
  }
  std::memset(o, 0, sizeof(float) * static_cast<size_t>(rp * d8));
  std::fill(base + L.m, base + L.m + rp, -INFINITY);
  std::fill(base + L.l, base + L.l + rp, 0.0f);

  auto set_vis_all = [&](int64_t n) {
    for (int64_t r = 0; r < rp; ++r) vis[r] = r < it.rows ? static_cast<int32_t>(n) : 0;
  };

  // The cached prefix, gathered across blocks into k, v.
  if (p.has_prefix) {
    const int64_t len = p.table.context_len(w.seq), block_size = p.table.block_size;
    const PagedKvPool* pools[2] = {&p.k_cache, &p.v_cache};
    float* dsts[2] = {k, v};
    for (int64_t start = 0; start < len; start += kKeyTile) {
      const int64_t n = std::min(kKeyTile, len - start);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t t = start + j;
        const int64_t block = p.table.block_id(w.seq, t / block_size);
        for (int which = 0; which < 2; ++which) {
          const PagedKvPool& pool = *pools[which];
          const uint8_t* src = pool.data + block * pool.block_stride +
                               (t % block_size) * pool.row_stride + w.kv_head * pool.head_stride;
          float scale = 1.0f;
          if (pool.dtype == HWINFER_DTYPE_I8) {
            std::memcpy(
                &scale,
                pool.scales + block * pool.scale_block_stride + w.kv_head * pool.scale_head_stride,
                sizeof(scale));
          }
          load_row(src, pool.dtype, dim, d8, scale, dsts[which] + j * d8);
        }
      }
      set_vis_all(n);
      fold_tile(it, k, d8, v, d8, n, -1);
    }
  }

  // The new tokens (read in place from kv): all of the sequence's, or, when causal, up to each
  // query's own position.
  const int64_t key_end = p.causal ? w.end : w.seq_end;
  for (int64_t start = w.seq_begin; start < key_end; start += kKeyTile) {
    const int64_t n = std::min(kKeyTile, key_end - start);
    if (p.causal) {
      for (int64_t i = 0; i < w.end - w.begin; ++i) {
        const auto seen = static_cast<int32_t>(std::clamp<int64_t>(w.begin + i + 1 - start, 0, n));
        std::fill(vis + i * group, vis + (i + 1) * group, seen);
      }
      std::fill(vis + it.rows, vis + rp, 0);
    } else {
      set_vis_all(n);
    }
    fold_tile(it, kv.k + start * kv.k_token + w.kv_head * kv.k_head, kv.k_token,
              kv.v + start * kv.v_token + w.kv_head * kv.v_head, kv.v_token, n,
              p.causal ? start : -1);
  }

  // out = O / l.
  const float* l = base + L.l;
  for (int64_t r = 0; r < it.rows; ++r) {
    const int64_t token = w.begin + r / group, head = w.kv_head * group + r % group;
    uint8_t* dst = p.out + token * p.out_token_stride + head * p.out_head_stride;
    const float inverse = 1.0f / l[r];
    const __m256 inv = _mm256_set1_ps(inverse);
    const float* a = o + r * d8;
    int64_t d = 0;
    if (p.q.dtype == HWINFER_DTYPE_F16) {
      auto* h = reinterpret_cast<uint16_t*>(dst);
      for (; d + 8 <= dim; d += 8) {
        const __m128i bits =
            _mm256_cvtps_ph(_mm256_mul_ps(_mm256_loadu_ps(a + d), inv), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(h + d), bits);
      }
      for (; d < dim; ++d) h[d] = float_to_half_lane(a[d] * inverse);
    } else {
      auto* f = reinterpret_cast<float*>(dst);
      for (; d + 8 <= dim; d += 8)
        _mm256_storeu_ps(f + d, _mm256_mul_ps(_mm256_loadu_ps(a + d), inv));
      for (; d < dim; ++d) f[d] = a[d] * inverse;
    }
  }
}

HWINFER_PREFILL_TARGET void convert_kv(const AttentionPrefillProblem& p, int64_t begin, int64_t end,
                                       float* k_dst, float* v_dst) {
  const int64_t d8 = round_up(p.head_dim, 8);
  for (int64_t t = begin; t < end; ++t) {
    for (int64_t h = 0; h < p.n_kv_heads; ++h) {
      const int64_t at = (t * p.n_kv_heads + h) * d8;
      load_row(p.k.data + t * p.k.token_stride + h * p.k.head_stride, p.k.dtype, p.head_dim, d8,
               1.0f, k_dst + at);
      load_row(p.v.data + t * p.v.token_stride + h * p.v.head_stride, p.v.dtype, p.head_dim, d8,
               1.0f, v_dst + at);
    }
  }
}

}  // namespace

int64_t attention_prefill_scratch_floats(int64_t rows, int64_t head_dim) {
  return Layout(rows, head_dim).total;
}

bool attention_prefill_kv_in_place(const AttentionPrefillProblem& p) {
  auto f32_rows = [&p](const TokenMatrix& m) {
    return m.dtype == HWINFER_DTYPE_F32 && p.head_dim % 8 == 0 && m.token_stride % 4 == 0 &&
           m.head_stride % 4 == 0 && reinterpret_cast<uintptr_t>(m.data) % 4 == 0;
  };
  return f32_rows(p.k) && f32_rows(p.v);
}

void attention_prefill_convert_kv(const AttentionPrefillProblem& problem, int64_t begin,
                                  int64_t end, float* k_dst, float* v_dst) {
  convert_kv(problem, begin, end, k_dst, v_dst);
}

void attention_prefill_item(const AttentionPrefillProblem& problem, const PrefillKv& kv,
                            const PrefillWork& work, float* scratch) {
  const int64_t group = problem.n_heads / problem.n_kv_heads;
  const int64_t rows = (work.end - work.begin) * group;
  const Item item{&problem, &work, Layout(rows, problem.head_dim), group, rows, scratch};
  run_item(item, kv);
}

}  // namespace hwinfer::cpu::avx2
