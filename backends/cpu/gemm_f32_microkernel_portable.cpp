// gemm_f32_microkernel_portable.cpp — the 6 x 8 micro-kernel on 16-byte vectors, built with the
// project's baseline flags (plus -O3), so it runs on every CPU the library runs on. Must not be
// compiled with -m flags that raise the baseline.
#include "gemm_f32_microkernel.h"
#include "gemm_f32_microkernel_body.h"

namespace hwinfer::cpu {

namespace {
typedef float Vec4f __attribute__((vector_size(16)));

void gemm_microkernel_6x8(int64_t kc, const float* a_panel, const float* b_panel, float* c_tile) {
  gemm_microkernel_body<Vec4f, 6, 8>(kc, a_panel, b_panel, c_tile);
}
}  // namespace

GemmMicroKernel gemm_microkernel_portable() { return {6, 8, &gemm_microkernel_6x8}; }

}  // namespace hwinfer::cpu
