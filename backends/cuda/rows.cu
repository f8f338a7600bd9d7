// rows.cu — the per-token kernels of backends/cuda and their launchers (launch.h): rms_norm
// (optionally fused with the residual add), silu_mul, rope (NORMAL / NEOX, partial rotary) and
// embedding (F32 / F16 / BF16 tables and every block dtype of plugin.h, weight_blocks.h). Ports
// of the Vulkan shaders rms_norm.comp, silu_mul.comp, rope.comp and embedding.comp, with the CPU
// backend's rounding (backends/cpu/rowwise_ops.cpp, token_ops.cpp): F32 arithmetic, F16 operands
// converted on load and rounded to nearest even on store, rope's angles and rms_norm's 1/rms in
// double.
//
// rms_norm and silu_mul read and write 4 elements per access (float4 / 8-byte F16 words) when
// every operand's rows are aligned to that and dim % 4 == 0, element by element otherwise.
// Memory is byte-addressable here, so F16 elements are stored as whole 16-bit words (no atomics).
// Every index that multiplies a row or token by a stride is 64-bit. Launch geometry never depends
// on the warp size. Must not allocate or synchronise; host code only launches.
#include "gpu_device.h"
#include "hwinfer/plugin.h"
#include "launch.h"
#include "weight_blocks.h"

namespace hwinfer::gpu {

namespace {

constexpr int kThreads = 256;         // silu_mul, rope, embedding, validation
constexpr int kMaxRmsThreads = 1024;  // rms_norm: 256, 512 or 1024 threads by row length
constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kMaxRowBlocks = int64_t{1} << 20;  // rows walked by a grid-stride loop beyond

// Element |i| of an F32 or F16 array as a float.
__device__ __forceinline__ float load_element(const void* base, bool f16, int64_t i) {
  if (f16) return f16_to_float(static_cast<const uint16_t*>(base)[i]);
  return static_cast<const float*>(base)[i];
}

// Stores |value| as element |i| of an F32 or F16 array (F16: round to nearest even).
__device__ __forceinline__ void store_element(void* base, bool f16, int64_t i, float value) {
  if (f16) {
    static_cast<uint16_t*>(base)[i] = float_to_f16(value);
  } else {
    static_cast<float*>(base)[i] = value;
  }
}

// Row |t| of a GpuRowMatrix (the address of its element 0).
__device__ __forceinline__ void* row_of(const GpuRowMatrix& m, int64_t t) {
  const int64_t element_bytes = m.f16 ? 2 : 4;
  return static_cast<uint8_t*>(m.data) + t * m.row_stride * element_bytes;
}

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// kWidth consecutive elements (a "unit") of an F32 or F16 row: unit |u| holds elements
// u * kWidth .. u * kWidth + kWidth - 1. kWidth 4 reads and writes one 16-byte (F32) or 8-byte
// (F16) word per unit; the host picks it only when every row and pointer is aligned to that word
// (vector_aligned below) and dim % 4 == 0. kWidth 1 is the element-wise path for everything else.
template <int kWidth>
__device__ __forceinline__ void load_unit(const void* base, bool f16, int64_t u,
                                          float (&v)[kWidth]) {
  if constexpr (kWidth == 1) {
    v[0] = load_element(base, f16, u);
  } else {
    static_assert(kWidth == 4, "units are 1 or 4 elements");
    if (f16) {
      const uint2 w = static_cast<const uint2*>(base)[u];  // little-endian: element 0 = low half
      v[0] = f16_to_float(static_cast<uint16_t>(w.x & 0xffffu));
      v[1] = f16_to_float(static_cast<uint16_t>(w.x >> 16));
      v[2] = f16_to_float(static_cast<uint16_t>(w.y & 0xffffu));
      v[3] = f16_to_float(static_cast<uint16_t>(w.y >> 16));
    } else {
      const float4 w = static_cast<const float4*>(base)[u];
      v[0] = w.x;
      v[1] = w.y;
      v[2] = w.z;
      v[3] = w.w;
    }
  }
}

template <int kWidth>
__device__ __forceinline__ void store_unit(void* base, bool f16, int64_t u,
                                           const float (&v)[kWidth]) {
  if constexpr (kWidth == 1) {
    store_element(base, f16, u, v[0]);
  } else {
    static_assert(kWidth == 4, "units are 1 or 4 elements");
    if (f16) {
      uint2 w;
      w.x = static_cast<uint32_t>(float_to_f16(v[0])) |
            (static_cast<uint32_t>(float_to_f16(v[1])) << 16);
      w.y = static_cast<uint32_t>(float_to_f16(v[2])) |
            (static_cast<uint32_t>(float_to_f16(v[3])) << 16);
      static_cast<uint2*>(base)[u] = w;
    } else {
      static_cast<float4*>(base)[u] = make_float4(v[0], v[1], v[2], v[3]);
    }
  }
}

// ---- RMSNorm -----------------------------------------------------------------------------------
//   x, out, residual: [n_tokens, dim] F32 | F16;  weight: [dim] F32
// One block per row (grid-stride over rows). Pass 1: each thread walks units u = tid,
// tid + blockDim, ... of the row (dim / kWidth units): with a residual it stores
// residual[i] += x[i] and keeps the stored value (rounded when F16) as h[i]; it sums h[i]^2.
// block_sum gives the row's sum; 1/rms in double as the CPU. Pass 2 walks the SAME units per
// thread (so each thread re-reads only what it wrote) and stores out[i] = h[i] * inv_rms *
// weight[i].

template <int kWidth>
__global__ void __launch_bounds__(kMaxRmsThreads)
    rms_norm_kernel(int64_t n_tokens, int64_t dim, float eps, GpuRowMatrix x, GpuRowMatrix residual,
                    const float* __restrict__ weight, GpuRowMatrix out) {
  __shared__ float reduce[32];
  const bool has_residual = residual.data != nullptr;
  const auto tid = static_cast<int64_t>(threadIdx.x);
  const auto step = static_cast<int64_t>(blockDim.x);
  const int64_t units = dim / kWidth;  // exact: kWidth 4 only when dim % 4 == 0
  for (int64_t t = blockIdx.x; t < n_tokens; t += gridDim.x) {
    const void* x_row = row_of(x, t);
    void* r_row = has_residual ? row_of(residual, t) : nullptr;
    void* o_row = row_of(out, t);
    float sum = 0.0f;
    for (int64_t u = tid; u < units; u += step) {
      float h[kWidth];
      load_unit<kWidth>(x_row, x.f16, u, h);
      if (has_residual) {
        float r[kWidth];
        load_unit<kWidth>(r_row, residual.f16, u, r);
#pragma unroll
        for (int j = 0; j < kWidth; ++j) h[j] += r[j];
        store_unit<kWidth>(r_row, residual.f16, u, h);
        if (residual.f16) {  // h is what residual holds
#pragma unroll
          for (int j = 0; j < kWidth; ++j) h[j] = f16_to_float(float_to_f16(h[j]));
        }
      }
#pragma unroll
      for (int j = 0; j < kWidth; ++j) sum += h[j] * h[j];
    }
    const float total = block_sum(sum, reduce);  // synchronises: safe to loop to the next row
    const auto inv_rms =
        static_cast<float>(1.0 / sqrt(static_cast<double>(total) / static_cast<double>(dim) +
                                      static_cast<double>(eps)));
    for (int64_t u = tid; u < units; u += step) {
      float h[kWidth];
      float w[kWidth];
      if (has_residual) {
        load_unit<kWidth>(r_row, residual.f16, u, h);
      } else {
        load_unit<kWidth>(x_row, x.f16, u, h);
      }
      load_unit<kWidth>(weight, false, u, w);
#pragma unroll
      for (int j = 0; j < kWidth; ++j) h[j] = __fmul_rn(__fmul_rn(h[j], inv_rms), w[j]);
      store_unit<kWidth>(o_row, out.f16, u, h);
    }
  }
}

// ---- SiLU-mul ----------------------------------------------------------------------------------
//   gate, up, out: [n_tokens, dim] F32 | F16
// x: units of the row (grid-stride), y: rows (strided by gridDim.y). One unit per thread per step.

template <int kWidth>
__global__ void silu_mul_kernel(int64_t n_tokens, int64_t dim, GpuRowMatrix gate, GpuRowMatrix up,
                                GpuRowMatrix out) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t units = dim / kWidth;  // exact: kWidth 4 only when dim % 4 == 0
  for (int64_t t = blockIdx.y; t < n_tokens; t += gridDim.y) {
    const void* g_row = row_of(gate, t);
    const void* u_row = row_of(up, t);
    void* o_row = row_of(out, t);
    for (int64_t u = first; u < units; u += step) {
      float g[kWidth];
      float v[kWidth];
      load_unit<kWidth>(g_row, gate.f16, u, g);
      load_unit<kWidth>(u_row, up.f16, u, v);
#pragma unroll
      for (int j = 0; j < kWidth; ++j) g[j] = __fmul_rn(__fdiv_rn(g[j], 1.0f + expf(-g[j])), v[j]);
      store_unit<kWidth>(o_row, out.f16, u, g);
    }
  }
}

// ---- RoPE --------------------------------------------------------------------------------------
//   q: [n_tokens, n_heads, head_dim], k: [n_tokens, n_kv_heads, head_dim] F32 | F16 (in place)
//   positions: [n_tokens] I32
// One block per token (grid-stride over tokens). The block first computes cos/sin of the token's
// rotary_dim / 2 = half angles into shared memory (angle = position * theta_base^(-2i/rotary_dim)
// in double, as the CPU backend; cast to float), then its threads walk the (head, pair) units of
// q and k: each unit is owned by one thread, which loads both elements of its pair and stores
// both, so no two threads touch one element.

__global__ void __launch_bounds__(kThreads)
    rope_kernel(int64_t n_tokens, int64_t half, double theta_base, bool neox, GpuHeadMatrix q,
                GpuHeadMatrix k, const int32_t* __restrict__ positions, int64_t position_stride) {
  GPU_DYNAMIC_SHARED(float, cos_sin);  // [half][2]
  const auto tid = static_cast<int64_t>(threadIdx.x);
  const auto step = static_cast<int64_t>(blockDim.x);
  const int64_t rotary_dim = 2 * half;
  const int64_t q_units = q.n_heads * half;
  const int64_t units = q_units + (k.data != nullptr ? k.n_heads * half : 0);
  for (int64_t t = blockIdx.x; t < n_tokens; t += gridDim.x) {
    const auto position = static_cast<double>(positions[t * position_stride]);
    __syncthreads();  // the previous token's cos_sin reads are done
    for (int64_t i = tid; i < half; i += step) {
      const double inv_freq =
          pow(theta_base, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
      const double angle = position * inv_freq;
      cos_sin[2 * i] = static_cast<float>(cos(angle));
      cos_sin[2 * i + 1] = static_cast<float>(sin(angle));
    }
    __syncthreads();
    for (int64_t u = tid; u < units; u += step) {
      const bool is_q = u < q_units;
      const GpuHeadMatrix& m = is_q ? q : k;
      const int64_t v = is_q ? u : u - q_units;
      const int64_t head = v / half;
      const int64_t i = v % half;
      const int64_t a_at = neox ? i : 2 * i;
      const int64_t b_at = neox ? i + half : 2 * i + 1;
      const int64_t element_bytes = m.f16 ? 2 : 4;
      void* base = static_cast<uint8_t*>(m.data) +
                   (t * m.token_stride + head * m.head_stride) * element_bytes;
      const float c = cos_sin[2 * i];
      const float s = cos_sin[2 * i + 1];
      const float a = load_element(base, m.f16, a_at);
      const float b = load_element(base, m.f16, b_at);
      // No contraction into FMAs: the CPU backend rounds each product.
      store_element(base, m.f16, a_at, __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s)));
      store_element(base, m.f16, b_at, __fadd_rn(__fmul_rn(a, s), __fmul_rn(b, c)));
    }
  }
}

// ---- embedding ---------------------------------------------------------------------------------
//   table: [vocab, dim] F32 | F16 | BF16 | any block dtype, rows |table_row_stride| BYTES apart
//   (block tables may start at any byte);  ids: [n_tokens] I32;  out: [n_tokens, dim] F32
// embedding_validate (grid-stride over tokens) sets kEmbeddingIdOutOfRange for an id outside
// [0, vocab); embedding_gather (x: columns, y: tokens) then writes nothing when the error word is
// set, so bad ids leave out untouched, as on the CPU backend.

__device__ __forceinline__ float table_value(const uint8_t* row, uint32_t dtype, int64_t i) {
  switch (dtype) {
    case HWINFER_DTYPE_F16:
      return f16_to_float(reinterpret_cast<const uint16_t*>(row)[i]);
    case HWINFER_DTYPE_BF16:
      return bf16_to_float(reinterpret_cast<const uint16_t*>(row)[i]);
    case HWINFER_DTYPE_F32:
      return reinterpret_cast<const float*>(row)[i];
    default:  // a block dtype (weight_blocks.h)
      return weight_value(dtype, row, i);
  }
}

__global__ void embedding_validate(int64_t n_tokens, int64_t vocab, const int32_t* __restrict__ ids,
                                   int64_t id_stride, int32_t* error_word) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = first; t < n_tokens; t += step) {
    const int32_t id = ids[t * id_stride];
    if (id < 0 || id >= vocab) set_device_error(error_word, kEmbeddingIdOutOfRange);
  }
}

__global__ void embedding_gather(int64_t n_tokens, int64_t dim, uint32_t dtype,
                                 const uint8_t* __restrict__ table, int64_t table_row_stride,
                                 const int32_t* __restrict__ ids, int64_t id_stride,
                                 float* __restrict__ out, int64_t out_row_stride,
                                 const int32_t* error_word) {
  if (*error_word != 0) return;  // a bad id (or an earlier kernel's error): write nothing
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = blockIdx.y; t < n_tokens; t += gridDim.y) {
    const int64_t id = ids[t * id_stride];
    const uint8_t* row = table + id * table_row_stride;
    float* o_row = out + t * out_row_stride;
    for (int64_t i = first; i < dim; i += step) o_row[i] = table_value(row, dtype, i);
  }
}

// True when every row of |m| starts at a multiple of its 4-element unit (16 bytes for F32, 8 for
// F16): the data pointer and the row stride in bytes are both multiples of it.
bool vector_aligned(const GpuRowMatrix& m) {
  const int64_t unit_bytes = m.f16 ? 8 : 16;
  const int64_t stride_bytes = m.row_stride * (m.f16 ? 2 : 4);
  return reinterpret_cast<uintptr_t>(m.data) % static_cast<uintptr_t>(unit_bytes) == 0 &&
         stride_bytes % unit_bytes == 0;
}

// Blocks to cover |n| items with |threads| each, at least 1 and at most |cap|.
unsigned blocks_for(int64_t n, int64_t threads, int64_t cap) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(min64(blocks, cap));
}

}  // namespace

gpuError_t launch_rms_norm(int64_t n_tokens, int64_t dim, float eps, GpuRowMatrix x,
                           GpuRowMatrix residual, const float* weight, GpuRowMatrix out,
                           gpuStream_t stream) {
  // Wide rows get more threads (a decode step has one row per block and few rows).
  const int threads = dim >= 4096 ? kMaxRmsThreads : (dim >= 1024 ? 512 : 256);
  const dim3 grid(static_cast<unsigned>(min64(n_tokens, kMaxRowBlocks)));
  const bool vector = dim % 4 == 0 && vector_aligned(x) && vector_aligned(out) &&
                      (residual.data == nullptr || vector_aligned(residual)) &&
                      reinterpret_cast<uintptr_t>(weight) % 16 == 0;
  if (vector) {
    GPU_LAUNCH(rms_norm_kernel<4>, grid, threads, 0, stream, n_tokens, dim, eps, x, residual,
               weight, out);
  } else {
    GPU_LAUNCH(rms_norm_kernel<1>, grid, threads, 0, stream, n_tokens, dim, eps, x, residual,
               weight, out);
  }
  return GPU(GetLastError)();
}

gpuError_t launch_silu_mul(int64_t n_tokens, int64_t dim, GpuRowMatrix gate, GpuRowMatrix up,
                           GpuRowMatrix out, gpuStream_t stream) {
  const bool vector =
      dim % 4 == 0 && vector_aligned(gate) && vector_aligned(up) && vector_aligned(out);
  const int64_t units = vector ? dim / 4 : dim;
  const dim3 grid(blocks_for(units, kThreads, 4096),
                  static_cast<unsigned>(min64(n_tokens, kMaxGridY)));
  if (vector) {
    GPU_LAUNCH(silu_mul_kernel<4>, grid, kThreads, 0, stream, n_tokens, dim, gate, up, out);
  } else {
    GPU_LAUNCH(silu_mul_kernel<1>, grid, kThreads, 0, stream, n_tokens, dim, gate, up, out);
  }
  return GPU(GetLastError)();
}

gpuError_t launch_rope(int64_t n_tokens, int64_t rotary_dim, float theta_base, bool neox,
                       GpuHeadMatrix q, GpuHeadMatrix k, const int32_t* positions,
                       int64_t position_stride, gpuStream_t stream) {
  const int64_t half = rotary_dim / 2;
  const size_t shared_bytes = static_cast<size_t>(half) * 2 * sizeof(float);
  const dim3 grid(static_cast<unsigned>(min64(n_tokens, kMaxRowBlocks)));
  GPU_LAUNCH(rope_kernel, grid, kThreads, shared_bytes, stream, n_tokens, half,
             static_cast<double>(theta_base), neox, q, k, positions, position_stride);
  return GPU(GetLastError)();
}

gpuError_t launch_embedding(int64_t n_tokens, int64_t vocab, int64_t dim, uint32_t table_dtype,
                            const uint8_t* table, int64_t table_row_stride_bytes,
                            const int32_t* ids, int64_t id_stride, float* out,
                            int64_t out_row_stride, int32_t* error_word, gpuStream_t stream) {
  GPU_LAUNCH(embedding_validate, blocks_for(n_tokens, kThreads, 1024), kThreads, 0, stream,
             n_tokens, vocab, ids, id_stride, error_word);
  const gpuError_t validate_error = GPU(GetLastError)();
  if (validate_error != gpuSuccess) return validate_error;
  const dim3 grid(blocks_for(dim, kThreads, 4096),
                  static_cast<unsigned>(min64(n_tokens, kMaxGridY)));
  GPU_LAUNCH(embedding_gather, grid, kThreads, 0, stream, n_tokens, dim, table_dtype, table,
             table_row_stride_bytes, ids, id_stride, out, out_row_stride, error_word);
  return GPU(GetLastError)();
}

}  // namespace hwinfer::gpu
