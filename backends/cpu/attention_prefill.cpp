// attention_prefill.cpp — see attention_prefill.h: validation, the work split, the run-time
// choice of the AVX2 kernel (attention_prefill_avx2.cpp, which documents its own loop) and the
// portable kernel.
//
// Portable work item = (query tile of one sequence, query head). The item keeps, for its kQueryTile
// queries, a running max m, running sum l and accumulator acc, and walks the keys it may see in
// tiles of at most kKeyTile: first the cached prefix block by block, then the new tokens (up to
// the tile's last query when causal). Scores exist only per [query tile, key tile].
#include "attention_prefill.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "host_info.h"

namespace hwinfer::cpu {

namespace {

constexpr int64_t kQueryTile = 32;
constexpr int64_t kKeyTile = 64;
// AVX2 items: about this many query rows (tile tokens x query heads per KV head).
constexpr int64_t kAvx2TargetRows = 128;

inline float dot(const float* a, const float* b, int64_t n) {
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

inline void load_row(const TokenMatrix& m, int64_t token, int64_t head, int64_t n, float scale,
                     float* dst) {
  const uint8_t* src = m.data + token * m.token_stride + head * m.head_stride;
  if (m.dtype == HWINFER_DTYPE_F16) {
    const auto* h = reinterpret_cast<const uint16_t*>(src);
    for (int64_t d = 0; d < n; ++d) dst[d] = scale * half_to_float(h[d]);
  } else {
    const auto* f = reinterpret_cast<const float*>(src);
    for (int64_t d = 0; d < n; ++d) dst[d] = scale * f[d];
  }
}

int32_t load_i32(const uint8_t* p) {
  int32_t value = 0;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

// The online-softmax state of one query tile of one head.
struct TileState {
  int64_t rows = 0, dim = 0;
  std::vector<float> q, m, l, acc, keys, values, scores;

  TileState(int64_t n_rows, int64_t head_dim)
      : rows(n_rows),
        dim(head_dim),
        q(static_cast<size_t>(n_rows * head_dim)),
        m(static_cast<size_t>(n_rows), -INFINITY),
        l(static_cast<size_t>(n_rows), 0.0f),
        acc(static_cast<size_t>(n_rows * head_dim), 0.0f),
        keys(static_cast<size_t>(kKeyTile * head_dim)),
        values(static_cast<size_t>(kKeyTile * head_dim)),
        scores(static_cast<size_t>(n_rows * kKeyTile)) {}

  // Folds |n_keys| keys/values (already in keys/values) into the state. Query row i sees key j
  // only when j < visible[i] (visible counts from the start of this key tile).
  void fold(int64_t n_keys, const int64_t* visible) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t n = std::min(n_keys, visible[i]);
      if (n <= 0) continue;
      float* s = scores.data() + i * kKeyTile;
      float tile_max = -INFINITY;
      for (int64_t j = 0; j < n; ++j) {
        s[j] = dot(q.data() + i * dim, keys.data() + j * dim, dim);
        tile_max = std::max(tile_max, s[j]);
      }
      const float new_max = std::max(m[i], tile_max);
      const float correction = std::exp(m[i] - new_max);
      float tile_sum = 0.0f;
      for (int64_t j = 0; j < n; ++j) {
        s[j] = std::exp(s[j] - new_max);
        tile_sum += s[j];
      }
      l[i] = l[i] * correction + tile_sum;
      m[i] = new_max;
      float* a = acc.data() + i * dim;
      for (int64_t d = 0; d < dim; ++d) a[d] *= correction;
      for (int64_t j = 0; j < n; ++j) {
        const float weight = s[j];
        const float* row = values.data() + j * dim;
        for (int64_t d = 0; d < dim; ++d) a[d] += weight * row[d];
      }
    }
  }
};

uint16_t float_to_half(float value) {
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

struct Tile {
  int64_t seq = 0, begin = 0, end = 0;  // new tokens [begin, end) of the packed batch
  int64_t keys = 0;                     // keys the tile's last query sees (its cost)
};

void run_tile(const AttentionPrefillProblem& p, const Tile& tile, int64_t head) {
  const int64_t dim = p.head_dim, kv_head = head / (p.n_heads / p.n_kv_heads);
  const int64_t rows = tile.end - tile.begin;
  const int64_t seq_begin = load_i32(p.query_start + tile.seq * p.query_start_stride);
  const int64_t seq_end = load_i32(p.query_start + (tile.seq + 1) * p.query_start_stride);
  TileState state(rows, dim);
  for (int64_t i = 0; i < rows; ++i) {
    load_row(p.q, tile.begin + i, head, dim, p.scale, state.q.data() + i * dim);
  }
  std::vector<int64_t> visible(static_cast<size_t>(rows));
  // The cached prefix, one block (<= kKeyTile rows when block_size <= kKeyTile) at a time.
  if (p.has_prefix) {
    const int64_t len = p.table.context_len(tile.seq), block_size = p.table.block_size;
    for (int64_t start = 0, n = 0; start < len; start += n) {
      n = std::min({len - start, kKeyTile, block_size - start % block_size});
      for (int64_t j = 0; j < n; ++j) {
        const int64_t t = start + j;
        const int64_t block = p.table.block_id(tile.seq, t / block_size);
        load_kv_row(p.k_cache, block, t % block_size, kv_head, dim, state.keys.data() + j * dim);
        load_kv_row(p.v_cache, block, t % block_size, kv_head, dim, state.values.data() + j * dim);
      }
      std::fill(visible.begin(), visible.end(), n);
      state.fold(n, visible.data());
    }
  }
  // The new tokens: all of the sequence's, or, when causal, up to each query's own position.
  const int64_t key_end = p.causal ? tile.end : seq_end;
  for (int64_t start = seq_begin; start < key_end; start += kKeyTile) {
    const int64_t n = std::min(kKeyTile, key_end - start);
    for (int64_t j = 0; j < n; ++j) {
      load_row(p.k, start + j, kv_head, dim, 1.0f, state.keys.data() + j * dim);
      load_row(p.v, start + j, kv_head, dim, 1.0f, state.values.data() + j * dim);
    }
    for (int64_t i = 0; i < rows; ++i) {
      visible[static_cast<size_t>(i)] = p.causal ? tile.begin + i + 1 - start : n;
    }
    state.fold(n, visible.data());
  }
  for (int64_t i = 0; i < rows; ++i) {
    const float inverse = 1.0f / state.l[static_cast<size_t>(i)];
    const float* a = state.acc.data() + i * dim;
    uint8_t* dst = p.out + (tile.begin + i) * p.out_token_stride + head * p.out_head_stride;
    if (p.q.dtype == HWINFER_DTYPE_F16) {
      auto* h = reinterpret_cast<uint16_t*>(dst);
      for (int64_t d = 0; d < dim; ++d) h[d] = float_to_half(a[d] * inverse);
    } else {
      auto* f = reinterpret_cast<float*>(dst);
      for (int64_t d = 0; d < dim; ++d) f[d] = a[d] * inverse;
    }
  }
}

// Query tiles of at most |tile_tokens| tokens, costliest (most keys) first for a better balance
// across threads.
std::vector<Tile> make_tiles(const AttentionPrefillProblem& p, int64_t tile_tokens) {
  std::vector<Tile> tiles;
  for (int64_t s = 0; s < p.n_seqs; ++s) {
    const int64_t begin = load_i32(p.query_start + s * p.query_start_stride);
    const int64_t end = load_i32(p.query_start + (s + 1) * p.query_start_stride);
    const int64_t prefix = p.has_prefix ? p.table.context_len(s) : 0;
    for (int64_t t = begin; t < end; t += tile_tokens) {
      const int64_t tile_end = std::min(end, t + tile_tokens);
      tiles.push_back({s, t, tile_end, prefix + (p.causal ? tile_end : end) - begin});
    }
  }
  std::stable_sort(tiles.begin(), tiles.end(),
                   [](const Tile& a, const Tile& b) { return a.keys > b.keys; });
  return tiles;
}

#if HWINFER_CPU_HAVE_AVX2_KERNEL
// Items = (query tile, KV head); each running item holds one of thread_count() scratch slots.
// K and V are read in place when they are F32 rows of a multiple of 8, else converted to f32 once
// (in parallel) before the items run.
void run_avx2(const AttentionPrefillProblem& p, ThreadPool& pool) {
  const int64_t group = p.n_heads / p.n_kv_heads;
  const int64_t tile_tokens = std::max<int64_t>(1, (kAvx2TargetRows + group - 1) / group);
  const std::vector<Tile> tiles = make_tiles(p, tile_tokens);
  if (tiles.empty()) return;
  const int64_t slot_floats =
      (avx2::attention_prefill_scratch_floats(tile_tokens * group, p.head_dim) + 15) / 16 * 16;
  const int n_slots = pool.thread_count();
  const int64_t d8 = (p.head_dim + 7) / 8 * 8;
  const bool in_place = avx2::attention_prefill_kv_in_place(p);
  const int64_t kv_floats = in_place ? 0 : p.n_tokens * p.n_kv_heads * d8;
  std::unique_ptr<float[]> scratch(
      new float[static_cast<size_t>(slot_floats * n_slots + 2 * kv_floats + 16)]);
  float* aligned = scratch.get();
  while (reinterpret_cast<uintptr_t>(aligned) % 64 != 0) ++aligned;
  PrefillKv kv;
  if (in_place) {
    kv.k = reinterpret_cast<const float*>(p.k.data);
    kv.v = reinterpret_cast<const float*>(p.v.data);
    kv.k_token = p.k.token_stride / 4;
    kv.k_head = p.k.head_stride / 4;
    kv.v_token = p.v.token_stride / 4;
    kv.v_head = p.v.head_stride / 4;
  } else {
    float* k = aligned + slot_floats * n_slots;
    float* v = k + kv_floats;
    constexpr int64_t kConvertTokens = 64;
    pool.parallel_for((p.n_tokens + kConvertTokens - 1) / kConvertTokens, [&](int64_t chunk) {
      const int64_t begin = chunk * kConvertTokens;
      avx2::attention_prefill_convert_kv(p, begin, std::min(p.n_tokens, begin + kConvertTokens), k,
                                         v);
    });
    kv.k = k;
    kv.v = v;
    kv.k_token = kv.v_token = p.n_kv_heads * d8;
    kv.k_head = kv.v_head = d8;
  }
  std::unique_ptr<std::atomic<bool>[]> busy(new std::atomic<bool>[static_cast<size_t>(n_slots)]);
  for (int i = 0; i < n_slots; ++i) busy[i].store(false);
  pool.parallel_for(static_cast<int64_t>(tiles.size()) * p.n_kv_heads, [&](int64_t item) {
    const Tile& tile = tiles[static_cast<size_t>(item / p.n_kv_heads)];
    PrefillWork work;
    work.seq = tile.seq;
    work.begin = tile.begin;
    work.end = tile.end;
    work.seq_begin = load_i32(p.query_start + tile.seq * p.query_start_stride);
    work.seq_end = load_i32(p.query_start + (tile.seq + 1) * p.query_start_stride);
    work.kv_head = item % p.n_kv_heads;
    // At most thread_count() items run at once, so a slot is always free.
    int slot = 0;
    while (busy[slot].exchange(true, std::memory_order_acquire)) slot = (slot + 1) % n_slots;
    avx2::attention_prefill_item(p, kv, work, aligned + slot * slot_floats);
    busy[slot].store(false, std::memory_order_release);
  });
}
#endif

}  // namespace

hwinfer_error* attention_prefill(const AttentionPrefillProblem& p, ThreadPool& pool,
                                 bool use_avx2) {
  int64_t previous = 0;
  for (int64_t s = 0; s <= p.n_seqs; ++s) {
    const int64_t start = load_i32(p.query_start + s * p.query_start_stride);
    const bool bad = s == 0 ? start != 0 : (start < previous || start > p.n_tokens);
    if (bad || (s == p.n_seqs && start != p.n_tokens)) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu attention_prefill: query_start[%" PRId64 "] = %" PRId64
                                "; query_start must rise from 0 to n_tokens = %" PRId64,
                                s, start, p.n_tokens);
    }
    previous = start;
  }
  if (p.has_prefix) {
    if (hwinfer_error* error = check_paged_table("attention_prefill", p.table, p.n_seqs, 0)) {
      return error;
    }
  }
#if HWINFER_CPU_HAVE_AVX2_KERNEL
  if (use_avx2) {
    run_avx2(p, pool);
    return nullptr;
  }
#else
  (void)use_avx2;
#endif
  std::vector<Tile> tiles = make_tiles(p, kQueryTile);
  pool.parallel_for(static_cast<int64_t>(tiles.size()) * p.n_heads, [&](int64_t item) {
    run_tile(p, tiles[static_cast<size_t>(item / p.n_heads)], item % p.n_heads);
  });
  return nullptr;
}

hwinfer_error* attention_prefill(const AttentionPrefillProblem& p, ThreadPool& pool) {
  static const bool use_avx2 = cpu_can_use_avx2_kernels();
  return attention_prefill(p, pool, use_avx2);
}

}  // namespace hwinfer::cpu
