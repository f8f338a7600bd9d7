// attention_prefill.cu — attention_prefill (plugin.h), flash-attention style (the score matrix is
// never materialised), causal or full, GQA/MQA, with the optional cached paged prefix:
//   q, out: [n_tokens, n_heads, head_dim] F32 | F16;  k, v: [n_tokens, n_kv_heads, head_dim]
//   F32 | F16;  query_start: [n_seqs + 1] I32;  prefix: paged_kv.h's pools and table.
// Query token t of sequence s, head h (KV head h / group) attends first to the context_lens[s]
// cached tokens of s, then to the new tokens of s: all of them (full) or those up to t (causal).
// Two kernels on one stream:
//   1. prefill_validate (grid-stride): query_start must rise from 0 to n_tokens
//      (kQueryStartInvalid); with a prefix, each context_lens[s] in [0, max_blocks * block_size]
//      and every used block id in [0, num_blocks). Any error sets the error word and the next
//      kernel returns at once (out untouched), as the CPU backend which checks before it writes.
//   2. prefill_attend: one block per (tile of tokens_per_block consecutive tokens: blockIdx.x;
//      unit = (kv head, chunk of heads_per_block heads of its group): blockIdx.y, grid-stride).
//      A tile that spans sequences is processed one sequence piece at a time (found by a binary
//      search over query_start). Each piece's rows = (token, head) pairs share every K/V row read:
//      attention_tile.h walks the cached prefix, then the new tokens, 128 keys at a time, with an
//      online softmax in fp32 (causal: row t sees new keys up to t); out = acc / l.
// Must not allocate or synchronise.
#include "attention_tile.h"
#include "gpu_device.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

constexpr int kValidateThreads = 256;
constexpr int64_t kMaxGridY = 65535;

__device__ __forceinline__ int64_t query_start_at(const PrefillArgs& a, int64_t s) {
  return a.query_start[s * a.query_start_stride];
}

__global__ void __launch_bounds__(kValidateThreads) prefill_validate(const PrefillArgs a) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t s = first; s <= a.n_seqs; s += step) {
    const int64_t start = query_start_at(a, s);
    bool bad = s == 0 ? start != 0 : start < query_start_at(a, s - 1) || start > a.n_tokens;
    if (s == a.n_seqs && start != a.n_tokens) bad = true;
    if (bad) set_device_error(a.error_word, kQueryStartInvalid);
  }
  if (a.has_prefix == 0) return;
  const int64_t entries = static_cast<int64_t>(a.n_seqs) * a.table.max_blocks;
  for (int64_t i = first; i < entries; i += step) check_table_entry(a.table, i, 0, a.error_word);
}

// The sequence owning token t: the last s < n_seqs with query_start[s] <= t (query_start is
// validated: it rises from 0 to n_tokens > t).
__device__ int64_t sequence_of(const PrefillArgs& a, int64_t t) {
  int64_t lo = 0;
  int64_t hi = a.n_seqs;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    if (query_start_at(a, mid) <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

__global__ void __launch_bounds__(kAttentionThreads) prefill_attend(const PrefillArgs a) {
  if (*a.error_word != 0) return;  // bad query_start / prefix: nothing is read or written
  __shared__ TileShared sh;
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  const int32_t head_dim = a.head_dim;
  const int32_t group = a.n_heads / a.n_kv_heads;
  const int32_t heads = a.heads_per_block;
  const int32_t chunks = group / heads;
  const int64_t units = static_cast<int64_t>(a.n_kv_heads) * chunks;
  const int64_t t0 = static_cast<int64_t>(blockIdx.x) * a.tokens_per_block;
  const int64_t t1 = t0 + a.tokens_per_block < a.n_tokens ? t0 + a.tokens_per_block : a.n_tokens;
  const int64_t first_seq = sequence_of(a, t0);
  for (int64_t unit = blockIdx.y; unit < units; unit += gridDim.y) {
    const int64_t chunk = unit % chunks;
    const int64_t kv_head = unit / chunks;
    const int64_t head0 = kv_head * group + chunk * heads;
    for (int64_t s = first_seq; s < a.n_seqs; ++s) {  // block-uniform
      const int64_t seq_begin = query_start_at(a, s);
      const int64_t seq_end = query_start_at(a, s + 1);
      if (seq_begin >= t1) break;
      const int64_t piece_begin = t0 > seq_begin ? t0 : seq_begin;
      const int64_t piece_end = t1 < seq_end ? t1 : seq_end;
      if (piece_begin >= piece_end) continue;  // an empty sequence
      // Rows r = (token piece_begin + r / heads, head head0 + r % heads).
      const int32_t rows = static_cast<int32_t>(piece_end - piece_begin) * heads;
      const OutputMap map = make_output_map(rows, head_dim);
      for (int32_t i = tid; i < rows * head_dim; i += kAttentionThreads) {
        const int32_t r = i / head_dim;
        const int32_t d = i % head_dim;
        const int64_t token = piece_begin + r / heads;
        const int64_t head = head0 + r % heads;
        sh.q[i] = load_element(a.q.data, a.q.element,
                               token * a.q.row_stride + head * a.q.head_stride + d);
      }
      reset_rows(sh);
      if (tid < kMaxRows) sh.limit[tid] = INT64_MAX;  // the cached prefix: every key
      __syncthreads();
      float acc[kMaxOutputsPerThread];
#pragma unroll
      for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) acc[i] = 0.0f;
      if (a.has_prefix != 0) {
        const int64_t n_cached = a.table.context_lens[s * a.table.len_stride];  // validated
        const KeySource cached = paged_keys(a.k_cache, a.v_cache, a.table, s, kv_head);
        attend_keys(sh, cached, 0, n_cached, rows, head_dim, a.scale, map, acc);
      }
      // The new tokens: key k is token seq_begin + k; row r sees keys < limit[r].
      if (tid < rows) {
        const int64_t token = piece_begin + tid / heads;
        sh.limit[tid] = a.causal != 0 ? token - seq_begin + 1 : seq_end - seq_begin;
      }
      __syncthreads();
      const int64_t n_new = a.causal != 0 ? piece_end - seq_begin : seq_end - seq_begin;
      const KeySource fresh = new_token_keys(a.k, a.v, seq_begin, kv_head);
      attend_keys(sh, fresh, 0, n_new, rows, head_dim, a.scale, map, acc);
      combine_slices(sh, map, rows * head_dim, acc);
      if (owns_outputs(map)) {
#pragma unroll
        for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) {
          if (i < map.count) {
            const int32_t r = map.row[i];
            const int64_t token = piece_begin + r / heads;
            const int64_t head = head0 + r % heads;
            // Every query sees at least itself, so l > 0.
            store_element(a.out.data, a.out.element,
                          token * a.out.row_stride + head * a.out.head_stride + map.dim[i],
                          acc[i] / sh.l[r]);
          }
        }
      }
      __syncthreads();  // sh.l and sh.limit are read before the next piece rewrites them
    }
  }
}

unsigned grid_for(int64_t work, int64_t per_block, int64_t max_blocks) {
  int64_t blocks = (work + per_block - 1) / per_block;
  if (blocks > max_blocks) blocks = max_blocks;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks);
}

}  // namespace

gpuError_t launch_attention_prefill(const PrefillArgs& args, gpuStream_t stream) {
  int64_t checks = static_cast<int64_t>(args.n_seqs) + 1;
  if (args.has_prefix != 0) {
    const int64_t entries = static_cast<int64_t>(args.n_seqs) * args.table.max_blocks;
    if (entries > checks) checks = entries;
  }
  GPU_LAUNCH(prefill_validate, grid_for(checks, kValidateThreads, 4096), kValidateThreads, 0,
             stream, args);
  const gpuError_t result = GPU(GetLastError)();
  if (result != gpuSuccess) return result;
  const int64_t tiles =
      (static_cast<int64_t>(args.n_tokens) + args.tokens_per_block - 1) / args.tokens_per_block;
  const int64_t units = static_cast<int64_t>(args.n_kv_heads) *
                        ((args.n_heads / args.n_kv_heads) / args.heads_per_block);
  const dim3 grid(static_cast<unsigned>(tiles),
                  static_cast<unsigned>(units < kMaxGridY ? units : kMaxGridY));
  GPU_LAUNCH(prefill_attend, grid, kAttentionThreads, 0, stream, args);
  return GPU(GetLastError)();
}

}  // namespace hwinfer::gpu
