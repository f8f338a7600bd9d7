// matmul_quantized_vnni.cpp — the tiles of matmul_quantized_kernels.h on AVX-512 VL VNNI:
// vpdpbusd on 256-bit vectors in place of maddubs + madd, and 4 x 2 tiles in the 32 vector
// registers. Bit for bit the AVX2 kernels' sums (matmul_quantized_tile_body.h says why).
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni (and AVX2, FMA, F16C); reached only
// after use_avx512_vnni() said the CPU has them.
#include <immintrin.h>

#include "matmul_quantized_kernels.h"
#include "matmul_quantized_tile_body.h"

namespace hwinfer::cpu {

MatmulQuantizedKernels matmul_quantized_kernels_vnni() {
  MatmulQuantizedKernels kernels = matmul_quantized_kernels_avx2();
  kernels.tiles_q8_0 = &tiles_q8_0<true, 4, 2>;
  kernels.tiles_q4_0 = &tiles_q4_0<true, 4, 2>;
  return kernels;
}

}  // namespace hwinfer::cpu
