// attention_decode.cu — attention_decode_paged (plugin.h), flash-decoding over the paged KV cache:
//   q, out: [n_seqs, n_heads, head_dim] F32 | F16;  pools, scales, block_tables, context_lens:
//   paged_kv.h. Head h reads KV head h / (n_heads / n_kv_heads).
// Three kernels on one stream:
//   1. decode_validate: one thread per block_tables entry (grid-stride): a context length outside
//      [1, max_blocks * block_size] or a used block id outside [0, num_blocks) sets the error word
//      (device_errors.h); the next two kernels then return at once (out untouched, no pool read at
//      a bad id), as the CPU backend which checks before it writes.
//   2. decode_partitions: one block per (partition of partition_tokens keys: blockIdx.x; unit =
//      (seq, kv head, chunk of heads_per_block heads of its GQA group): blockIdx.y, grid-stride).
//      The chunk's q rows share every K/V row read (attention_tile.h); the block writes each
//      head's partial (m, l, acc[head_dim], acc unnormalised) into the scratch
//      [batch rows = (seq - seq_begin) * n_heads + head, n_parts, head_dim + 2] F32. A partition
//      that starts at or past the sequence's length is skipped (the reduce reads only the used
//      ones: ceil(len / partition_tokens)).
//   3. decode_reduce: one block per (seq, head) row: M = max m_i, L = sum l_i exp(m_i - M),
//      out[d] = sum_i acc_i[d] exp(m_i - M) / L, rounded to out's dtype.
// Kernels 2 and 3 run per batch of batch_seqs sequences (the scratch holds one batch). fp32
// throughout with expf (the conformance tolerances are tight). Must not allocate or synchronise.
#include "attention_tile.h"
#include "gpu_device.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

constexpr int kValidateThreads = 256;
constexpr int kReduceThreads = 128;
constexpr int64_t kMaxGridY = 65535;

__global__ void __launch_bounds__(kValidateThreads)
    decode_validate(const PagedTable table, int32_t n_seqs, int32_t* error_word) {
  const int64_t total = static_cast<int64_t>(n_seqs) * table.max_blocks;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += step) {
    check_table_entry(table, i, 1, error_word);
  }
}

__global__ void __launch_bounds__(kAttentionThreads)
    decode_partitions(const DecodeArgs a, int32_t seq_begin, int32_t seq_count, float* scratch) {
  if (*a.error_word != 0) return;  // bad lengths or block ids: nothing is read or written
  __shared__ TileShared sh;
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  const int32_t head_dim = a.head_dim;
  const int32_t group = a.n_heads / a.n_kv_heads;
  const int32_t rows = a.heads_per_block;
  const int32_t chunks = group / rows;
  const OutputMap map = make_output_map(rows, head_dim);
  const int64_t part = blockIdx.x;
  const int64_t width = static_cast<int64_t>(head_dim) + 2;
  const int64_t units = static_cast<int64_t>(seq_count) * a.n_kv_heads * chunks;
  for (int64_t unit = blockIdx.y; unit < units; unit += gridDim.y) {
    const int64_t chunk = unit % chunks;
    const int64_t kv_head = (unit / chunks) % a.n_kv_heads;
    const int64_t seq = seq_begin + unit / chunks / a.n_kv_heads;
    const int64_t len = a.table.context_lens[seq * a.table.len_stride];  // validated: >= 1
    const int64_t begin = part * a.partition_tokens;
    if (begin >= len) continue;  // block-uniform
    const int64_t end = begin + a.partition_tokens < len ? begin + a.partition_tokens : len;
    const int64_t head0 = kv_head * group + chunk * rows;
    // q rows [rows][head_dim]: row r is head head0 + r.
    for (int32_t i = tid; i < rows * head_dim; i += kAttentionThreads) {
      const int32_t r = i / head_dim;
      const int32_t d = i % head_dim;
      sh.q[i] = load_element(a.q.data, a.q.element,
                             seq * a.q.row_stride + (head0 + r) * a.q.head_stride + d);
    }
    reset_rows(sh);
    if (tid < kMaxRows) sh.limit[tid] = end;  // every key of the partition
    __syncthreads();
    float acc[kMaxOutputsPerThread];
#pragma unroll
    for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) acc[i] = 0.0f;
    const KeySource src = paged_keys(a.k, a.v, a.table, seq, kv_head);
    attend_keys(sh, src, begin, end, rows, head_dim, a.scale, map, acc);
    combine_slices(sh, map, rows * head_dim, acc);
    if (owns_outputs(map)) {
#pragma unroll
      for (int32_t i = 0; i < kMaxOutputsPerThread; ++i) {
        if (i < map.count) {
          const int32_t r = map.row[i];
          const int32_t d = map.dim[i];
          const int64_t batch_row = (seq - seq_begin) * a.n_heads + head0 + r;
          float* dst = scratch + (batch_row * a.n_parts + part) * width;
          dst[2 + d] = acc[i];
          if (d == 0) {
            dst[0] = sh.m[r];
            dst[1] = sh.l[r];
          }
        }
      }
    }
    __syncthreads();  // sh.m / sh.l are read before the next unit resets them
  }
}

__global__ void __launch_bounds__(kReduceThreads)
    decode_reduce(const DecodeArgs a, int32_t seq_begin, int32_t seq_count, const float* scratch) {
  if (*a.error_word != 0) return;
  __shared__ float reduction[32];
  const int32_t tid = static_cast<int32_t>(threadIdx.x);
  const int64_t width = static_cast<int64_t>(a.head_dim) + 2;
  const int64_t rows = static_cast<int64_t>(seq_count) * a.n_heads;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t seq = seq_begin + row / a.n_heads;
    const int64_t head = row % a.n_heads;
    const int64_t len = a.table.context_lens[seq * a.table.len_stride];  // validated: >= 1
    int64_t used = (len + a.partition_tokens - 1) / a.partition_tokens;
    if (used > a.n_parts) used = a.n_parts;
    const float* base = scratch + row * a.n_parts * width;
    float m = kNoScore;
    for (int64_t i = tid; i < used; i += kReduceThreads) m = fmaxf(m, base[i * width]);
    const float big_m = block_max(m, reduction);
    float l = 0.0f;
    for (int64_t i = tid; i < used; i += kReduceThreads) {
      l += base[i * width + 1] * expf(base[i * width] - big_m);
    }
    const float inv_l = 1.0f / block_sum(l, reduction);
    const int64_t out_row = seq * a.out.row_stride + head * a.out.head_stride;
    for (int32_t d = tid; d < a.head_dim; d += kReduceThreads) {
      float sum = 0.0f;
      for (int64_t i = 0; i < used; ++i)
        sum += base[i * width + 2 + d] * expf(base[i * width] - big_m);
      store_element(a.out.data, a.out.element, out_row + d, sum * inv_l);
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

gpuError_t launch_attention_decode_paged(const DecodeArgs& args, float* scratch,
                                         gpuStream_t stream) {
  const int64_t entries = static_cast<int64_t>(args.n_seqs) * args.table.max_blocks;
  GPU_LAUNCH(decode_validate, grid_for(entries, kValidateThreads, 4096), kValidateThreads, 0,
             stream, args.table, args.n_seqs, args.error_word);
  gpuError_t result = GPU(GetLastError)();
  if (result != gpuSuccess) return result;
  const int64_t chunks = (args.n_heads / args.n_kv_heads) / args.heads_per_block;
  for (int32_t seq_begin = 0; seq_begin < args.n_seqs; seq_begin += args.batch_seqs) {
    const int32_t seq_count =
        args.n_seqs - seq_begin < args.batch_seqs ? args.n_seqs - seq_begin : args.batch_seqs;
    const int64_t units = static_cast<int64_t>(seq_count) * args.n_kv_heads * chunks;
    const dim3 grid(static_cast<unsigned>(args.n_parts),
                    static_cast<unsigned>(units < kMaxGridY ? units : kMaxGridY));
    GPU_LAUNCH(decode_partitions, grid, kAttentionThreads, 0, stream, args, seq_begin, seq_count,
               scratch);
    result = GPU(GetLastError)();
    if (result != gpuSuccess) return result;
    const int64_t rows = static_cast<int64_t>(seq_count) * args.n_heads;
    GPU_LAUNCH(decode_reduce, grid_for(rows, 1, int64_t{1} << 20), kReduceThreads, 0, stream, args,
               seq_begin, seq_count, scratch);
    result = GPU(GetLastError)();
    if (result != gpuSuccess) return result;
  }
  return gpuSuccess;
}

}  // namespace hwinfer::gpu
