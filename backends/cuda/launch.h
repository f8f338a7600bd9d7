// launch.h — the kernel launchers of backends/cuda: plain host functions, defined in the
// .cu files (compiled by nvcc or hipcc), called by the kernels_*.cpp enqueue functions (compiled
// by the host compiler). Arguments are device addresses, element counts and strides; shapes in the
// comments. Each launcher only launches (no allocation, no synchronisation) and returns the
// runtime's launch error.
#ifndef HWINFER_BACKENDS_CUDA_LAUNCH_H_
#define HWINFER_BACKENDS_CUDA_LAUNCH_H_

#include <cstdint>

#include "gpu_runtime.h"
#include "paged_kv.h"

namespace hwinfer::gpu {

// probe.cu — the bandwidth probe (plugin.h's HWINFER_PROBE_*): every byte of |size_bytes| is
// touched each iteration with 16-byte accesses where the addresses allow.
//   READ: src [size_bytes] -> sink [>= 64 bytes];  COPY: src -> dst;  WRITE: dst.
gpuError_t launch_bandwidth_probe(uint32_t mode, uint32_t iterations, uint64_t size_bytes,
                                  const uint8_t* src, uint8_t* dst, uint8_t* sink,
                                  uint32_t compute_units, gpuStream_t stream);

// rows.cu — the per-token kernels. A [rows, dim] matrix of F32 or F16 elements, innermost
// contiguous: |data| is element [0, 0], rows |row_stride| ELEMENTS apart (of its own dtype).
// A matrix with data == nullptr is absent (rms_norm's optional residual).
struct GpuRowMatrix {
  void* data;
  int64_t row_stride;
  bool f16;
};

// A [n_tokens, n_heads, head_dim] tensor of F32 or F16, innermost contiguous; strides in ELEMENTS.
// data == nullptr: absent (rope's optional k).
struct GpuHeadMatrix {
  void* data;
  int64_t token_stride;
  int64_t head_stride;
  int64_t n_heads;
  bool f16;
};

//   x, out, residual: [n_tokens, dim];  weight: [dim] F32 (contiguous). With residual.data set:
//   residual += x in place, then out = rms_norm(residual) * weight; otherwise out = rms_norm(x).
gpuError_t launch_rms_norm(int64_t n_tokens, int64_t dim, float eps, GpuRowMatrix x,
                           GpuRowMatrix residual, const float* weight, GpuRowMatrix out,
                           gpuStream_t stream);

//   gate, up, out: [n_tokens, dim];  out = silu(gate) * up.
gpuError_t launch_silu_mul(int64_t n_tokens, int64_t dim, GpuRowMatrix gate, GpuRowMatrix up,
                           GpuRowMatrix out, gpuStream_t stream);

//   q: [n_tokens, q.n_heads, head_dim], k: [n_tokens, k.n_heads, head_dim] (optional), in place;
//   positions: [n_tokens] I32, |position_stride| elements apart. rotary_dim even, <= 8192 (the
//   block keeps rotary_dim / 2 cos/sin pairs in shared memory).
gpuError_t launch_rope(int64_t n_tokens, int64_t rotary_dim, float theta_base, bool neox,
                       GpuHeadMatrix q, GpuHeadMatrix k, const int32_t* positions,
                       int64_t position_stride, gpuStream_t stream);

//   table: [vocab, dim] of |table_dtype| (HWINFER_DTYPE_F32/F16/BF16 or a block dtype), rows
//   |table_row_stride_bytes| BYTES apart;  ids: [n_tokens] I32 (|id_stride| elements apart);
//   out: [n_tokens, dim] F32 (rows |out_row_stride| elements apart). Two kernels: the ids are
//   validated first (kEmbeddingIdOutOfRange in |error_word|), the gather writes nothing when the
//   word is set.
gpuError_t launch_embedding(int64_t n_tokens, int64_t vocab, int64_t dim, uint32_t table_dtype,
                            const uint8_t* table, int64_t table_row_stride_bytes,
                            const int32_t* ids, int64_t id_stride, float* out,
                            int64_t out_row_stride, int32_t* error_word, gpuStream_t stream);

// kv_append.cu — one side (k or v) of kv_append: src [n_tokens, n_kv_heads, head_dim] F32 | F16
// into the pool [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8 (+ scales
// [num_blocks, n_kv_heads] F32 for I8). Strides in ELEMENTS of each operand's dtype.
struct GpuKvSide {
  const void* src;
  int64_t src_token_stride;
  int64_t src_head_stride;
  bool src_f16;
  void* pool;
  int64_t pool_block_stride;
  int64_t pool_row_stride;
  int64_t pool_head_stride;
  bool pool_i8;
  float* scales;  // I8 only
  int64_t scale_block_stride;
  int64_t scale_head_stride;
};

//   slots: [n_tokens] I32 (|slot_stride| elements apart); a negative slot skips its token, a slot
//   >= num_blocks * block_size sets kKvSlotOutOfRange in |error_word| and nothing is written
//   (every block checks all slots before it writes). The CPU backend's rule bit for bit, tokens
//   in order per (pool block, head). |compute_units| sizes the grid. One launch.
gpuError_t launch_kv_append(int64_t n_tokens, int64_t n_kv_heads, int64_t head_dim,
                            int64_t block_size, int64_t num_blocks, const int32_t* slots,
                            int64_t slot_stride, const GpuKvSide& k, const GpuKvSide& v,
                            int32_t* error_word, uint32_t compute_units, gpuStream_t stream);

// kv_append.cu — rope_kv_append (ABI 1.1): rope on q and k (in place) fused with kv_append of the
// rotated k and of v, in ONE launch, bit for bit launch_rope then launch_kv_append (a bad slot:
// q and k still rotated, no pool written, kKvSlotOutOfRange). |rope| as launch_rope's arguments;
// rope.k is the same tensor as k.src (written in place, then appended).
struct GpuRope {
  int64_t half;       // rotary_dim / 2 (rotary_dim even, <= 8192: cos/sin in shared memory)
  double theta_base;  // the descriptor's float, widened
  bool neox;
  GpuHeadMatrix q, k;
  const int32_t* positions;  // [n_tokens], |position_stride| elements apart
  int64_t position_stride;
};
gpuError_t launch_rope_kv_append(const GpuRope& rope, int64_t n_tokens, int64_t n_kv_heads,
                                 int64_t head_dim, int64_t block_size, int64_t num_blocks,
                                 const int32_t* slots, int64_t slot_stride, const GpuKvSide& k,
                                 const GpuKvSide& v, int32_t* error_word, uint32_t compute_units,
                                 gpuStream_t stream);

// One matrix operand of gemm / matmul_quantized: the device address of element [0, 0], its dtype
// (HWINFER_DTYPE_F32, F16 or BF16) and its strides in ELEMENTS (non-negative).
struct MatrixOperand {
  uint8_t* data;
  uint32_t dtype;
  int64_t row_stride;  // elements between rows
  int64_t col_stride;  // elements between columns
};

// c [m, n] = alpha * a [m, k] @ b [k, n] + beta * c (beta == 0: c is write-only), fp32
// accumulation. b is the LOGICAL [k, n] matrix: for a gemm with b_transposed = 1 (b stored
// [n, k]) the caller passes b's strides swapped. m, n, k in [1, 2^31).
struct GemmProblem {
  int64_t m, n, k;
  float alpha, beta;
  MatrixOperand a;  // [m, k]
  MatrixOperand b;  // [k, n]
  MatrixOperand c;  // [m, n]
};

// gemv.cu — m <= kGemvMaxRows (decode). With a and b contiguous along k (b's row stride 1: the
// b_transposed weight layout) one 32-thread group per output column streams the weights once
// with 16-byte loads where aligned; otherwise threads own output columns (coalesced along n).
inline constexpr int64_t kGemvMaxRows = 8;
gpuError_t launch_gemv(const GemmProblem& problem, gpuStream_t stream);

// gemm.cu — any m: 64 x 64 shared-memory tiles, k-tile 16, 4 x 4 outputs per thread, any strides.
gpuError_t launch_gemm_tiled(const GemmProblem& problem, gpuStream_t stream);

// matmul_q.cu, matmul_q_dequant.cu — matmul_quantized: y [m, n] F32 = x [m, k] F32 @
// dequant(w)^T, w [n, k] GGUF blocks of any block dtype of plugin.h (|w_row_bytes| between rows,
// any byte alignment), k a multiple of the dtype's block (32 or 256 values).
struct QuantMatmulProblem {
  int64_t m, n, k;
  uint32_t w_dtype;  // HWINFER_DTYPE_Q4_0 ... (a block dtype)
  const uint8_t* w;
  int64_t w_row_bytes;
  const float* x;  // x[i, l] = x[i * x_row_stride + l * x_col_stride]
  int64_t x_row_stride, x_col_stride;
  float* y;  // y[i, j] = y[i * y_row_stride + j * y_col_stride]
  int64_t y_row_stride, y_col_stride;
};
// The bytes of scratch launch_matmul_q_gemv needs (x quantized: m * k int8 + m * k / 32 F32 at
// most: 32-value blocks; 256-value ones need less).
inline uint64_t matmul_q_gemv_scratch_bytes(int64_t m, int64_t k) {
  return static_cast<uint64_t>(m) * static_cast<uint64_t>(k) / 32 * 36;
}
// m <= kGemvMaxRows: x quantized into |scratch| (16-byte aligned) as llama.cpp quantizes it for
// the type (32-value blocks with the CPU backend's rule, Q8_K's 256 for the K-quants), then
// integer (dp4a) dot products per block for Q8_0 / Q4_0, launch_matmul_q_gemv_dequant otherwise.
gpuError_t launch_matmul_q_gemv(const QuantMatmulProblem& problem, uint8_t* scratch,
                                gpuStream_t stream);
// matmul_q_dequant.cu — m <= kGemvMaxRows, any type: xq int8 [m, k] and xd F32
// [m, k / x_block_values] (x quantized), w dequantized value by value, f32 products and sums.
gpuError_t launch_matmul_q_gemv_dequant(const QuantMatmulProblem& problem, int64_t x_block_values,
                                        const int8_t* xq, const float* xd, gpuStream_t stream);
// matmul_q_dequant.cu — any m (used for m > kGemvMaxRows), any type: x exact, w dequantized into
// the tiles of an F32 GEMM.
gpuError_t launch_matmul_q_tiled(const QuantMatmulProblem& problem, gpuStream_t stream);

// widen.cu — |rows| rows of weights (|src_row_bytes| apart, |cols| values each, of |dtype|: F16,
// BF16 or a block dtype of plugin.h) into dst [rows, cols] F32, dense, each value exact: the
// operand vendor_blas.cpp hands its F32 GEMM. gpuErrorInvalidValue for any other dtype.
gpuError_t launch_widen_rows(uint32_t dtype, int64_t rows, int64_t cols, const uint8_t* src,
                             int64_t src_row_bytes, float* dst, gpuStream_t stream);

// attention_decode.cu and attention_prefill.cu — the attention launchers; their arguments (the
// paged pools, the block table, the query/output layouts) are the structs of paged_kv.h.
//   decode:  validation, then per batch of sequences the partition kernel and the reduce kernel;
//            |scratch| holds DecodeArgs::scratch_floats() floats.
//   prefill: validation, then the flash-attention kernel.
gpuError_t launch_attention_decode_paged(const DecodeArgs& args, float* scratch,
                                         gpuStream_t stream);
gpuError_t launch_attention_prefill(const PrefillArgs& args, gpuStream_t stream);

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_LAUNCH_H_
