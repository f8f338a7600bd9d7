// gemm_half_kernels.h — the per-instruction-set inner loops of gemm_half: f16/bf16 -> f32
// conversion and the decode dot products against f16/bf16 weight rows.
//
// The AVX2 set lives in gemm_half_avx2.cpp (built with -mavx2 -mfma -mf16c) and may be called only
// when detect_gemm_isa() returned kAvx2Fma; the AVX-512 set (gemm_half_avx512.cpp) only where
// use_avx512_vnni() also said yes, and its bf16-dot extension only where use_avx512_bf16() did;
// the portable set (gemm_half.cpp) runs anywhere. Widening converts exactly (f16 and bf16 values
// are all representable in f32). They must not allocate.
#ifndef HWINFER_BACKENDS_CPU_GEMM_HALF_KERNELS_H_
#define HWINFER_BACKENDS_CPU_GEMM_HALF_KERNELS_H_

#include <cstdint>

#include "gemm_f32.h"

namespace hwinfer::cpu {

struct GemmHalfKernels {
  // out[0:n] = f32(src[0:n]); |bf16| selects bf16, else f16. Contiguous.
  void (*to_f32)(const uint16_t* src, int64_t n, bool bf16, float* out) = nullptr;
  // sums[i] = sum_l a[i * lda + l] * f32(b_row[l]) for i < m (any m >= 1), l < k; contiguous rows.
  void (*dot_rows)(const float* a, int64_t lda, int64_t m, const uint16_t* b_row, int64_t k,
                   bool bf16, float* sums) = nullptr;
  // out[i * rows + j] = sum_l a[i * lda + l] * f32(b[j * ldb + l]) for i < m, j < rows, l < k:
  // register tiles of rows of a by weight rows (batched decode, prefill). nullptr: use dot_rows.
  void (*dot_tiles)(const float* a, int64_t lda, int64_t m, const uint16_t* b, int64_t ldb,
                    int64_t rows, int64_t k, bool bf16, float* out) = nullptr;
  // True: dot_tiles is fast at any m and its sums do not depend on m or the tile (dot_rows gives
  // the same), so the driver runs it for prefill too instead of packing for the f32 GEMM.
  bool tiles_at_every_m = false;
  // Set where the CPU multiplies bf16 pairs itself (AVX512_BF16): bf16 weights then run in their
  // own precision at every m, against a rounded to bf16 by to_bf16 (nearest even, as the
  // instruction set rounds); products exact, sums f32. nullptr: bf16 goes through dot_tiles.
  void (*to_bf16)(const float* src, int64_t n, uint16_t* out) = nullptr;
  // dot_tiles with a in bf16: out[i * rows + j] = sum_l a[i * lda + l] * b[j * ldb + l].
  void (*dot_tiles_bf16)(const uint16_t* a, int64_t lda, int64_t m, const uint16_t* b, int64_t ldb,
                         int64_t rows, int64_t k, float* out) = nullptr;
};

GemmHalfKernels gemm_half_kernels_portable();
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
GemmHalfKernels gemm_half_kernels_avx2();
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
// gemm_half_avx512.cpp (-mavx512f -mavx512bw -mavx512vl): only after use_avx512_vnni() said yes.
GemmHalfKernels gemm_half_kernels_avx512();
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_BF16_KERNEL)
// gemm_half_bf16dot.cpp (the AVX-512 set plus -mavx512bf16): only after use_avx512_bf16().
GemmHalfKernels gemm_half_kernels_avx512_bf16();
#endif

// The set gemm_half runs for |isa| on this CPU (the best it may use).
const GemmHalfKernels& gemm_half_kernels_for(GemmIsa isa);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_GEMM_HALF_KERNELS_H_
