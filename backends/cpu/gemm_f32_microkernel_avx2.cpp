// gemm_f32_microkernel_avx2.cpp — the 6 x 16 micro-kernel on 32-byte vectors with FMA.
//
// Built with -mavx2 -mfma -ffp-contract=fast (see CMakeLists.txt): everything in this file may
// contain AVX2 instructions, so it must only be reached after detect_gemm_isa() has checked the
// CPU, and it must not include headers with inline functions (their AVX2 copies could replace the
// portable ones at link time).
#include "gemm_f32_microkernel.h"
#include "gemm_f32_microkernel_body.h"

namespace hwinfer::cpu {

namespace {
typedef float Vec8f __attribute__((vector_size(32)));

void gemm_microkernel_6x16(int64_t kc, const float* a_panel, const float* b_panel, float* c_tile) {
  gemm_microkernel_body<Vec8f, 6, 16>(kc, a_panel, b_panel, c_tile);
}
}  // namespace

GemmMicroKernel gemm_microkernel_avx2_fma() { return {6, 16, &gemm_microkernel_6x16}; }

}  // namespace hwinfer::cpu
