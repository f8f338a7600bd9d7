// gemm_f32.h — the CPU backend's optimised f32 GEMM on host pointers:
//   c[m,n] = alpha * sum_k a[m,k] * B[k,n] + beta * c[m,n]
//
// Cache-blocked (Goto/BLIS style: B packed in k x n blocks, A in m x k blocks, a register-tile
// micro-kernel), multi-threaded over the caller's ThreadPool, with a packing-free path for small m
// (decode GEMV). Works on any element strides, including B transposed (GGUF's [n, k] weights),
// which is just a choice of strides. It must not validate ABI views (kernels.cpp does), must not
// create threads, and must not read c when beta == 0 (c may hold NaN).
#ifndef HWINFER_BACKENDS_CPU_GEMM_F32_H_
#define HWINFER_BACKENDS_CPU_GEMM_F32_H_

#include <cstdint>

#include "thread_pool.h"

namespace hwinfer::cpu {

// Strides are in ELEMENTS and may be any value (zero and negative included), as long as every
// element addressed lies in memory the caller owns.
struct GemmF32Problem {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;  // a[i,l] = a[i * a_row_stride + l * a_col_stride]     [m, k]
  int64_t a_row_stride = 0, a_col_stride = 0;
  const float* b = nullptr;  // B[l,j] = b[l * b_row_stride + j * b_col_stride]     [k, n]
  int64_t b_row_stride = 0, b_col_stride = 0;
  float* c = nullptr;  // c[i,j] = c[i * c_row_stride + j * c_col_stride]     [m, n]
  int64_t c_row_stride = 0, c_col_stride = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
};

// The micro-kernel family a GEMM runs with.
enum class GemmIsa {
  kPortable,  // baseline vectors (SSE2 / NEON), any CPU
  kAvx2Fma,   // x86-64 with AVX2, FMA and F16C (only when the build has the AVX2 kernels)
};

// The best micro-kernel this CPU can run (asks the CPU at run time).
GemmIsa detect_gemm_isa();
const char* gemm_isa_name(GemmIsa isa);

// Runs the GEMM on |pool| (the calling thread takes part). |isa| must be one detect_gemm_isa()
// allows (kPortable always is). m, n, k > 0. Throws std::bad_alloc when the packing buffers
// cannot be allocated.
void gemm_f32(const GemmF32Problem& problem, ThreadPool& pool, GemmIsa isa);

// A source of B that is not an f32 matrix (f16/bf16 or quantized weights): |pack| writes
// B[l0 : l0+kc, col0 : col0+cols] as f32 panels of |nr| columns, panel p (of columns
// col0 + p*nr ...) at out[p * nr * kc], laid out [kc][nr], columns past |cols| zero. l0 is always
// a multiple of 256 (so of any block size up to 256) and kc is 256 or what is left of k.
// Called concurrently from the pool's threads on disjoint outputs.
struct GemmBPacker {
  void (*pack)(const void* context, int64_t col0, int64_t cols, int64_t l0, int64_t kc, int64_t nr,
               float* out) = nullptr;
  const void* context = nullptr;
};

// The packed (compute-bound) GEMM of gemm_f32 with B taken from |b_packer| instead of problem.b
// (which is ignored). For any m; meant for m large enough that packing B once pays.
void gemm_f32_packed_b(const GemmF32Problem& problem, const GemmBPacker& b_packer, ThreadPool& pool,
                       GemmIsa isa);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_GEMM_F32_H_
