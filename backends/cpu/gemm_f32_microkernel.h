// gemm_f32_microkernel.h — the innermost GEMM step: one register tile of C from packed panels.
//
// c_tile[mr, nr] = sum_p a_panel[p, 0:mr]^T * b_panel[p, 0:nr]   for p < kc
//   a_panel: [kc, mr] (mr rows of A, packed column by column: a_panel[p * mr + i] = A[i, p])
//   b_panel: [kc, nr] (nr columns of B, packed row by row:    b_panel[p * nr + j] = B[p, j])
//   c_tile:  [mr, nr] row-major, OVERWRITTEN with the sum (the caller applies alpha/beta)
// Each instruction set has its own translation unit compiled with its own flags; only the portable
// one may be called without asking the CPU first. Micro-kernels must not allocate, throw or touch
// anything but their three arguments.
#ifndef HWINFER_BACKENDS_CPU_GEMM_F32_MICROKERNEL_H_
#define HWINFER_BACKENDS_CPU_GEMM_F32_MICROKERNEL_H_

#include <cstdint>

namespace hwinfer::cpu {

struct GemmMicroKernel {
  int mr = 0;  // rows of the register tile
  int nr = 0;  // columns of the register tile
  void (*run)(int64_t kc, const float* a_panel, const float* b_panel, float* c_tile) = nullptr;
};

// 6 x 8 on 16-byte vectors: SSE2 on x86-64, NEON on AArch64, scalar elsewhere. Always available.
GemmMicroKernel gemm_microkernel_portable();

#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
// 6 x 16 on 32-byte vectors with FMA (built with -mavx2 -mfma). Call only when the CPU has
// AVX2 and FMA (see detect_gemm_isa in gemm_f32.h).
GemmMicroKernel gemm_microkernel_avx2_fma();
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
// 12 x 32 on 64-byte vectors with FMA (built with -mavx512f): call only when use_avx512_vnni()
// (weight_formats.h) says the CPU has AVX-512.
GemmMicroKernel gemm_microkernel_avx512();
#endif

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_GEMM_F32_MICROKERNEL_H_
