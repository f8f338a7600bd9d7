#version 450
// matmul_qf_rows.comp — matmul_qf_gemv.comp's product (y[i, j] = sum_t xq[i, t] * dequant(w)[j, t],
// f32, m <= 8) for a CPU implementation such as lavapipe, which runs a shader with barriers as
// coroutines: one invocation per row j of w walks the whole row with no barrier and no shared
// memory (kernels_quant.cpp picks it on a CPU device from 64 rows, as matmul_q.comp for Q8_0 /
// Q4_0). Compiled once per type (-DWTYPE, weight_blocks.glsl). Operands and push constants are
// matmul_qf_gemv.comp's; the sum runs in k order, so its rounding differs from the GEMV's tree.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define MAX_M 8u

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Xq { float xq[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

#define WEIGHT_WORDS w
#include "weight_blocks.glsl"

layout(push_constant) uniform Params {
  uint m, n, k;
  uint w_offset, w_row_stride;  // bytes
  uint y_offset, y_row_stride;  // elements
} p;

void main() {
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  for (uint j = gl_GlobalInvocationID.x; j < p.n; j += stride) {
    const uint row = p.w_offset + j * p.w_row_stride;
    float acc[MAX_M];
    [[unroll]] for (uint i = 0u; i < MAX_M; ++i) acc[i] = 0.0;
    for (uint kk = 0u; kk < p.k; kk += WEIGHT_BLOCK_VALUES) {
      const uint block = row + (kk / WEIGHT_BLOCK_VALUES) * WEIGHT_BLOCK_BYTES;
      for (uint t = 0u; t < WEIGHT_BLOCK_VALUES; ++t) {
        const float v = weight_value(block, t);
        [[unroll]] for (uint i = 0u; i < MAX_M; ++i) {
          if (i < p.m) acc[i] += v * xq[i * p.k + kk + t];
        }
      }
    }
    [[unroll]] for (uint i = 0u; i < MAX_M; ++i) {
      if (i < p.m) y[p.y_offset + i * p.y_row_stride + j] = acc[i];
    }
  }
}
