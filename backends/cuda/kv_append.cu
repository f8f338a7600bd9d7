// kv_append.cu — kv_append's and rope_kv_append's kernels and launchers (launch.h): the new
// tokens' keys and values (F32 | F16) into the paged pools (F16 | I8, each side its own dtype),
// with the I8 pools' per-(block, head) F32 scales grown and the block-head requantized exactly as
// the CPU backend (backends/cpu/kv_append.cpp) and the Vulkan shader kv_append.comp:
//   F16: pool row = f16(x), round to nearest even (reference/half.h bit for bit);
//   I8:  absmax = max |x|; when absmax > scale * 127 every row of the block-head is requantized,
//        q = quantize(q * old_scale, absmax / 127), and the scale becomes absmax / 127; then the
//        row is quantize(x, scale); quantize = clamp(rint(x / s), -127, 127) (0 when s == 0).
//
// Order: a later token may rescale a block an earlier token of the same batch wrote (or write the
// same slot again), so the tokens of one (pool block, head) must be applied in token order. The
// Vulkan shader gives each KV head to one workgroup walking all tokens; here the pool blocks of a
// head are further split over |groups| CUDA blocks (pool block b belongs to group b % groups): each
// CUDA block scans slot_mapping in token order (staged through shared memory) and applies only the
// tokens of its own pool blocks, so one (pool block, head) is owned by exactly one CUDA block and
// sees its tokens in order, while different blocks run in parallel. Within a CUDA block:
//   I8 pools: the chunk's tokens one after the other, the whole block on each (block_max,
//     requantize, store; barriers between the steps and between tokens);
//   F16 pools: a row only overwrites its slot, so the chunk's tokens of this group are written in
//     parallel, except that a token whose slot a later token of the same chunk also names is
//     dropped (the later one wins, as in token order); chunks are separated by barriers, so a
//     later chunk's write to the same slot lands last.
//
// rope_kv_append (ABI 1.1, below) is this kernel fused with rows.cu's rope: one launch that also
// rotates q and k in place and appends the rotated k (see its section).
//
// Slots are data on the device. One kernel validates and appends: every CUDA block first reads
// the whole slot_mapping and, when any slot is >= n_slots, writes nothing (block (0, 0, 0) sets
// kKvSlotOutOfRange in the stream's error word), so a bad slot anywhere means no write anywhere
// without a second launch (as kv_append.comp). A block also writes nothing when the error word is
// already set by an earlier kernel (device_errors.h's rule). Must not allocate or synchronise.
#include "gpu_device.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

constexpr int kThreads = 128;         // threads per block; also the slots staged per chunk
constexpr int64_t kMaxGridY = 65535;  // heads beyond it are walked by a loop

// sdk/reference/half.h f32_to_f16, bit for bit (NaN -> sign | 0x7e00).
__device__ __forceinline__ uint16_t f32_to_f16_exact(float value) {
  const uint32_t bits = __float_as_uint(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t a = bits & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t exponent = a >> 23;
    const uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half & 1u) != 0u)) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  const uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

__device__ __forceinline__ float load_src(const GpuKvSide& side, int64_t e) {
  if (side.src_f16) return f16_to_float(static_cast<const uint16_t*>(side.src)[e]);
  return static_cast<const float*>(side.src)[e];
}

// The CPU backend's quantize: clamp(nearbyint(x / scale), -127, 127), 0 for a zero scale.
__device__ __forceinline__ int8_t quantize(float x, float scale) {
  if (scale == 0.0f) return 0;
  const float q = rintf(__fdiv_rn(x, scale));
  return static_cast<int8_t>(fminf(fmaxf(q, -127.0f), 127.0f));
}

// Element |d| of token |t|, head |head| of |side| into its F16 pool at |slot| (valid, >= 0).
__device__ __forceinline__ void append_f16_element(const GpuKvSide& side, int64_t t, int64_t head,
                                                   int64_t slot, int64_t d, int64_t block_size) {
  const int64_t block = slot / block_size;
  const int64_t row = slot % block_size;
  const int64_t x = t * side.src_token_stride + head * side.src_head_stride + d;
  const int64_t dst = block * side.pool_block_stride + row * side.pool_row_stride +
                      head * side.pool_head_stride + d;
  static_cast<uint16_t*>(side.pool)[dst] = f32_to_f16_exact(load_src(side, x));
}

// Token |t| of |side|, head |head|, into its I8 pool at |slot| (valid, >= 0). Called by every
// thread of the block with the same arguments (it synchronises).
__device__ void append_token_i8(const GpuKvSide& side, int64_t t, int64_t head, int64_t slot,
                                int64_t head_dim, int64_t block_size, float* reduce) {
  const auto tid = static_cast<int64_t>(threadIdx.x);
  const auto step = static_cast<int64_t>(blockDim.x);
  const int64_t block = slot / block_size;
  const int64_t row = slot % block_size;
  const int64_t x0 = t * side.src_token_stride + head * side.src_head_stride;
  const int64_t block_head = block * side.pool_block_stride + head * side.pool_head_stride;
  const int64_t dst = block_head + row * side.pool_row_stride;
  auto* pool = static_cast<int8_t*>(side.pool);
  float m = 0.0f;
  for (int64_t d = tid; d < head_dim; d += step) m = fmaxf(m, fabsf(load_src(side, x0 + d)));
  const float absmax = block_max(m, reduce);
  float* scale_at = side.scales + block * side.scale_block_stride + head * side.scale_head_stride;
  float scale = *scale_at;        // every thread reads it before thread 0 may change it below
  if (absmax > scale * 127.0f) {  // uniform: absmax and scale are the same in every thread
    const float new_scale = absmax / 127.0f;
    const int64_t n = block_size * head_dim;
    for (int64_t e = tid; e < n; e += step) {
      const int64_t at = block_head + (e / head_dim) * side.pool_row_stride + e % head_dim;
      pool[at] = quantize(static_cast<float>(pool[at]) * scale, new_scale);
    }
    __syncthreads();  // requantized rows (and every read of the old scale) before the stores below
    if (tid == 0) *scale_at = new_scale;
    scale = new_scale;
  }
  for (int64_t d = tid; d < head_dim; d += step) {
    pool[dst + d] = quantize(load_src(side, x0 + d), scale);
  }
  __syncthreads();  // the next token of this block sees these rows and this scale
}

// grid: x = groups (pool block b belongs to group b % groups), y = KV heads (strided), z = side
// (0: k, 1: v). See the top of the file.
__global__ void __launch_bounds__(kThreads)
    kv_append_kernel(int64_t n_tokens, int64_t n_kv_heads, int64_t head_dim, int64_t block_size,
                     const int32_t* __restrict__ slots, int64_t slot_stride, GpuKvSide k,
                     GpuKvSide v, int64_t n_slots, int32_t* error_word) {
  __shared__ int32_t staged[kThreads];  // the chunk's slots
  __shared__ int32_t live[kThreads];    // F16: the chunk positions this block writes
  __shared__ int n_live;
  __shared__ float reduce[32];
  __shared__ int bad_slot;
  if (*error_word != 0) return;  // an earlier kernel's error: write nothing (uniform)
  if (threadIdx.x == 0) bad_slot = 0;
  __syncthreads();
  for (int64_t t = threadIdx.x; t < n_tokens; t += kThreads) {
    if (slots[t * slot_stride] >= n_slots) atomicOr(&bad_slot, 1);
  }
  __syncthreads();
  if (bad_slot != 0) {  // uniform: every thread reads the same shared word
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0) {
      set_device_error(error_word, kKvSlotOutOfRange);
    }
    return;
  }
  const GpuKvSide side = blockIdx.z == 0 ? k : v;
  const auto group = static_cast<int64_t>(blockIdx.x);
  const auto groups = static_cast<int64_t>(gridDim.x);
  for (int64_t head = blockIdx.y; head < n_kv_heads; head += gridDim.y) {
    for (int64_t chunk = 0; chunk < n_tokens; chunk += kThreads) {
      const int64_t t = chunk + threadIdx.x;
      __syncthreads();  // the previous chunk's staged, live and n_live are no longer read
      staged[threadIdx.x] = t < n_tokens ? slots[t * slot_stride] : -1;
      if (threadIdx.x == 0) n_live = 0;
      __syncthreads();
      const int in_chunk =
          static_cast<int>(n_tokens - chunk < kThreads ? n_tokens - chunk : kThreads);
      if (!side.pool_i8) {
        const int j = static_cast<int>(threadIdx.x);
        if (j < in_chunk) {
          const int32_t slot = staged[j];
          bool mine = slot >= 0 && (slot / block_size) % groups == group;
          for (int later = j + 1; mine && later < in_chunk; ++later) mine = staged[later] != slot;
          if (mine) live[atomicAdd(&n_live, 1)] = j;
        }
        __syncthreads();
        const int64_t items = static_cast<int64_t>(n_live) * head_dim;
        for (int64_t item = threadIdx.x; item < items; item += kThreads) {
          const int live_j = live[item / head_dim];
          append_f16_element(side, chunk + live_j, head, staged[live_j], item % head_dim,
                             block_size);
        }
        continue;
      }
      for (int j = 0; j < in_chunk; ++j) {
        const int32_t slot = staged[j];  // the same in every thread: the branches are uniform
        if (slot < 0) continue;          // padding
        if ((slot / block_size) % groups != group) continue;  // another CUDA block's pool block
        append_token_i8(side, chunk + j, head, slot, head_dim, block_size, reduce);
      }
    }
  }
}

// ---- RoPE fused with the append (ABI 1.1) ------------------------------------------------------
//   q: [n_tokens, n_heads, head_dim], k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16 (q and k
//   rotated in place);  positions, slots: [n_tokens] I32;  pools as kv_append.
// ONE launch over kv_append's grid (groups, KV heads, side), every step as the two unfused kernels
// do it, so the result is theirs bit for bit:
//   1. q: token t by the block whose linear id is t % (number of blocks): the token's cos/sin into
//      shared memory (rope_angles: rows.cu's double-precision angles), then its heads' pairs
//      (rotate_pair: rows.cu's unfused products, F16 stored round-to-nearest-even).
//   2. every block scans slot_mapping as kv_append_kernel does; a slot >= n_slots (or an error word
//      already set) turns the pool writes off, never the rotation (as ROPE then a failing
//      KV_APPEND: q and k rotated, the pools untouched, kKvSlotOutOfRange).
//   3. k side (z = 0): each (token, KV head) is owned by exactly one block: the group of its
//      slot's pool block, or group t % groups for a negative slot (rotated, not appended). The
//      owner walks its tokens in token order: cos/sin, rotate k[t, head] in place, barrier, then
//      append the rotated row from k exactly as kv_append (F16: each element by the same thread in
//      token order, so a later duplicate slot wins; I8: append_token_i8, scale growth included).
//      v side (z = 1): the same walk without the rotation.
// The angles are recomputed per (token, KV head) block rather than once per token: the price of
// needing no second launch (cheap next to the pool traffic for decode-sized batches).

// The (cos, sin) of token |t|'s rotary_dim / 2 angles into |cos_sin| [half][2], by the whole
// block, exactly as rows.cu's rope_kernel: angle = position * theta_base^(-2i / rotary_dim) in
// double, cast to float. Synchronises before (earlier readers of |cos_sin|) and after.
__device__ void rope_angles(const GpuRope& rope, int64_t t, float* cos_sin) {
  const auto position = static_cast<double>(rope.positions[t * rope.position_stride]);
  const int64_t rotary_dim = 2 * rope.half;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < rope.half; i += blockDim.x) {
    const double inv_freq =
        pow(rope.theta_base, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
    const double angle = position * inv_freq;
    cos_sin[2 * i] = static_cast<float>(cos(angle));
    cos_sin[2 * i + 1] = static_cast<float>(sin(angle));
  }
  __syncthreads();
}

// Pair |i| of head |head| of token |t| of |m| rotated in place, as rows.cu's rope_kernel: both
// elements loaded, rotated without FMA contraction (the CPU backend rounds each product), stored
// (F16: round to nearest even).
__device__ __forceinline__ void rotate_pair(const GpuHeadMatrix& m, int64_t t, int64_t head,
                                            int64_t i, const GpuRope& rope, const float* cos_sin) {
  const int64_t a_at = rope.neox ? i : 2 * i;
  const int64_t b_at = rope.neox ? i + rope.half : 2 * i + 1;
  const int64_t row = t * m.token_stride + head * m.head_stride;
  const float c = cos_sin[2 * i];
  const float s = cos_sin[2 * i + 1];
  if (m.f16) {
    auto* x = static_cast<uint16_t*>(m.data) + row;
    const float a = f16_to_float(x[a_at]);
    const float b = f16_to_float(x[b_at]);
    x[a_at] = float_to_f16(__fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s)));
    x[b_at] = float_to_f16(__fadd_rn(__fmul_rn(a, s), __fmul_rn(b, c)));
    return;
  }
  auto* x = static_cast<float*>(m.data) + row;
  const float a = x[a_at];
  const float b = x[b_at];
  x[a_at] = __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
  x[b_at] = __fadd_rn(__fmul_rn(a, s), __fmul_rn(b, c));
}

// grid: as kv_append_kernel (x = groups, y = KV heads strided, z = side). See the section's top.
__global__ void __launch_bounds__(kThreads)
    rope_kv_append_kernel(GpuRope rope, int64_t n_tokens, int64_t n_kv_heads, int64_t head_dim,
                          int64_t block_size, const int32_t* __restrict__ slots,
                          int64_t slot_stride, GpuKvSide k, GpuKvSide v, int64_t n_slots,
                          int32_t* error_word) {
  GPU_DYNAMIC_SHARED(float, cos_sin);   // [half][2]: the angles of the token being rotated
  __shared__ int32_t staged[kThreads];  // the chunk's slots
  __shared__ float reduce[32];
  __shared__ int bad_slot;
  __shared__ int write_pools;
  const auto tid = static_cast<int64_t>(threadIdx.x);
  const auto step = static_cast<int64_t>(blockDim.x);
  const int64_t n_grid_blocks =
      static_cast<int64_t>(gridDim.x) * static_cast<int64_t>(gridDim.y) * gridDim.z;
  const int64_t block_id =
      blockIdx.x + static_cast<int64_t>(gridDim.x) * (blockIdx.y + gridDim.y * blockIdx.z);
  // 1. q.
  const int64_t q_units = rope.q.n_heads * rope.half;
  for (int64_t t = block_id; t < n_tokens; t += n_grid_blocks) {
    rope_angles(rope, t, cos_sin);
    for (int64_t u = tid; u < q_units; u += step) {
      rotate_pair(rope.q, t, u / rope.half, u % rope.half, rope, cos_sin);
    }
  }
  // 2. the slot scan (kv_append_kernel's), deciding whether the pools are written.
  if (threadIdx.x == 0) {
    bad_slot = 0;
    write_pools = *error_word == 0 ? 1 : 0;  // an earlier kernel's error: rotate, write no pool
  }
  __syncthreads();
  for (int64_t t = tid; t < n_tokens; t += kThreads) {
    if (slots[t * slot_stride] >= n_slots) atomicOr(&bad_slot, 1);
  }
  __syncthreads();
  if (bad_slot != 0) {  // uniform: every thread reads the same shared word
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0) {
      set_device_error(error_word, kKvSlotOutOfRange);
    }
    if (threadIdx.x == 0) write_pools = 0;
    __syncthreads();
  }
  const bool pools = write_pools != 0;  // uniform
  // 3. the owned (token, KV head) rows in token order.
  const bool is_k = blockIdx.z == 0;
  const GpuKvSide side = is_k ? k : v;
  const auto group = static_cast<int64_t>(blockIdx.x);
  const auto groups = static_cast<int64_t>(gridDim.x);
  for (int64_t head = blockIdx.y; head < n_kv_heads; head += gridDim.y) {
    for (int64_t chunk = 0; chunk < n_tokens; chunk += kThreads) {
      __syncthreads();  // the previous chunk's staged slots are no longer read
      staged[threadIdx.x] = chunk + tid < n_tokens ? slots[(chunk + tid) * slot_stride] : -1;
      __syncthreads();
      const int64_t in_chunk = n_tokens - chunk < kThreads ? n_tokens - chunk : kThreads;
      for (int64_t j = 0; j < in_chunk; ++j) {
        const int64_t t = chunk + j;
        const int32_t slot = staged[j];  // the same in every thread: the branches are uniform
        const int64_t owner = slot >= 0 ? (slot / block_size) % groups : t % groups;
        if (owner != group) continue;
        if (is_k) {
          rope_angles(rope, t, cos_sin);
          for (int64_t i = tid; i < rope.half; i += step) {
            rotate_pair(rope.k, t, head, i, rope, cos_sin);
          }
          __syncthreads();  // the rotated row before the append reads it (other threads' pairs)
        }
        if (slot < 0 || !pools) continue;
        if (side.pool_i8) {
          append_token_i8(side, t, head, slot, head_dim, block_size, reduce);
          continue;
        }
        for (int64_t d = tid; d < head_dim; d += step) {
          append_f16_element(side, t, head, slot, d, block_size);
        }
      }
    }
  }
}

// About sixteen CUDA blocks per multiprocessor (one full wave of 128-thread blocks) over
// (groups, heads, 2 sides); no more groups than pool blocks or than tokens (every group scans
// every slot, so an idle group costs only the scan). kv_append and rope_kv_append.
dim3 kv_append_grid(int64_t n_tokens, int64_t n_kv_heads, int64_t num_blocks,
                    uint32_t compute_units) {
  const int64_t heads = n_kv_heads < kMaxGridY ? n_kv_heads : kMaxGridY;
  const int64_t target = 16 * static_cast<int64_t>(compute_units > 0 ? compute_units : 32);
  int64_t groups = target / (2 * heads);
  if (groups > num_blocks) groups = num_blocks;
  if (groups > n_tokens) groups = n_tokens;
  if (groups > 65535) groups = 65535;
  if (groups < 1) groups = 1;
  return dim3(static_cast<unsigned>(groups), static_cast<unsigned>(heads), 2);
}

}  // namespace

gpuError_t launch_kv_append(int64_t n_tokens, int64_t n_kv_heads, int64_t head_dim,
                            int64_t block_size, int64_t num_blocks, const int32_t* slots,
                            int64_t slot_stride, const GpuKvSide& k, const GpuKvSide& v,
                            int32_t* error_word, uint32_t compute_units, gpuStream_t stream) {
  const dim3 grid = kv_append_grid(n_tokens, n_kv_heads, num_blocks, compute_units);
  GPU_LAUNCH(kv_append_kernel, grid, kThreads, 0, stream, n_tokens, n_kv_heads, head_dim,
             block_size, slots, slot_stride, k, v, num_blocks * block_size, error_word);
  return GPU(GetLastError)();
}

gpuError_t launch_rope_kv_append(const GpuRope& rope, int64_t n_tokens, int64_t n_kv_heads,
                                 int64_t head_dim, int64_t block_size, int64_t num_blocks,
                                 const int32_t* slots, int64_t slot_stride, const GpuKvSide& k,
                                 const GpuKvSide& v, int32_t* error_word, uint32_t compute_units,
                                 gpuStream_t stream) {
  const dim3 grid = kv_append_grid(n_tokens, n_kv_heads, num_blocks, compute_units);
  const size_t shared_bytes = static_cast<size_t>(rope.half) * 2 * sizeof(float);
  GPU_LAUNCH(rope_kv_append_kernel, grid, kThreads, shared_bytes, stream, rope, n_tokens,
             n_kv_heads, head_dim, block_size, slots, slot_stride, k, v, num_blocks * block_size,
             error_word);
  return GPU(GetLastError)();
}

}  // namespace hwinfer::gpu
