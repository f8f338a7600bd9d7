// gemm_f32_microkernel_avx512.cpp — the 12 x 32 micro-kernel on 64-byte vectors with FMA: twice
// the AVX2 kernel's lanes and 24 accumulators of the 32 vector registers (two B loads and 12
// broadcasts per 24 FMAs). Each element of C is the same chain of FMAs over p as on AVX2, so the
// two kernels give the same bits.
//
// Built with -mavx512f -mfma -ffp-contract=fast (see CMakeLists.txt): reach it only after
// use_avx512_vnni() said the CPU has AVX-512; include no header with inline functions.
#include "gemm_f32_microkernel.h"
#include "gemm_f32_microkernel_body.h"

namespace hwinfer::cpu {

namespace {
typedef float Vec16f __attribute__((vector_size(64)));

void gemm_microkernel_12x32(int64_t kc, const float* a_panel, const float* b_panel, float* c_tile) {
  gemm_microkernel_body<Vec16f, 12, 32>(kc, a_panel, b_panel, c_tile);
}
}  // namespace

GemmMicroKernel gemm_microkernel_avx512() { return {12, 32, &gemm_microkernel_12x32}; }

}  // namespace hwinfer::cpu
