// gemm_f32_microkernel_body.h — the one source of every GEMM micro-kernel (see
// gemm_f32_microkernel.h for the contract), instantiated per instruction set.
//
// Included ONLY by gemm_f32_microkernel_<isa>.cpp, each compiled with its own -m flags. Everything
// here sits in an anonymous namespace on purpose: each translation unit gets its own private copy,
// so the linker can never merge an AVX2 instantiation into the portable path (an ODR merge would
// run AVX2 code on a CPU without it). For the same reason this header includes nothing with inline
// functions; GCC/Clang vector extensions spell the vectors, so no intrinsics header is needed and
// the code stays the same on every architecture.
#ifndef HWINFER_BACKENDS_CPU_GEMM_F32_MICROKERNEL_BODY_H_
#define HWINFER_BACKENDS_CPU_GEMM_F32_MICROKERNEL_BODY_H_

#include <cstdint>

namespace {

// |Vec| is a GCC vector of floats; NR must be a multiple of its lane count. The MR x NR/lanes
// accumulators must fit the register file (12 of 16 registers on SSE2/NEON and AVX2, 24 of 32 on
// AVX-512).
template <typename Vec, int MR, int NR>
inline void gemm_microkernel_body(int64_t kc, const float* __restrict a_panel,
                                  const float* __restrict b_panel, float* __restrict c_tile) {
  constexpr int kLanes = static_cast<int>(sizeof(Vec) / sizeof(float));
  constexpr int kVectorsPerRow = NR / kLanes;
  static_assert(NR % kLanes == 0, "NR must be a whole number of vectors");

  Vec acc[MR][kVectorsPerRow] = {};  // c_tile[i, v*lanes : (v+1)*lanes]
  for (int64_t p = 0; p < kc; ++p) {
    Vec b_row[kVectorsPerRow];  // B[p, 0:NR]
    for (int v = 0; v < kVectorsPerRow; ++v) {
      __builtin_memcpy(&b_row[v], b_panel + p * NR + v * kLanes, sizeof(Vec));
    }
    for (int i = 0; i < MR; ++i) {
      const float a_ip = a_panel[p * MR + i];  // broadcast A[i, p]
      for (int v = 0; v < kVectorsPerRow; ++v) acc[i][v] += a_ip * b_row[v];
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < kVectorsPerRow; ++v) {
      __builtin_memcpy(c_tile + i * NR + v * kLanes, &acc[i][v], sizeof(Vec));
    }
  }
}

}  // namespace

#endif  // HWINFER_BACKENDS_CPU_GEMM_F32_MICROKERNEL_BODY_H_
