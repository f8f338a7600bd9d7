#version 450
// matmul_qf_gemv.comp — matmul_quantized for decode (m <= 8) for the weight types beyond Q8_0 /
// Q4_0, compiled once per type (-DWTYPE, weight_blocks.glsl): y[i, j] = sum_t xq[i, t] *
// dequant(w)[j, t] in f32, where xq is x quantized as llama.cpp quantizes it for this type and
// dequantized again (quantize_x.comp), so y is llama.cpp's integer-dot result up to f32 rounding.
// xq: [m, k] F32 dense; w: [n, k] blocks of WTYPE addressed in BYTES from w_offset with
// w_row_stride bytes between rows (any byte alignment); y: [m, n] F32.
//
// A workgroup of 256 invocations is SEGMENTS segments of LANES = 32; each segment owns one row j
// of w at a time (rows strided by gl_NumWorkGroups). Lane l dequantizes the 32-value groups l, l +
// 32, ... of the row (a group lies inside one block: blocks are 32 or 256 values) once and
// multiplies them with every x row (m <= 8), then a shared-memory tree reduction over the lanes.
// Correctness first: no subgroup operations, weights read byte by byte.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define MAX_M 8u
#define LANES 32u
#define SEGMENTS (HWINFER_WORKGROUP_SIZE / LANES)

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

shared float partial[MAX_M][HWINFER_WORKGROUP_SIZE];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint lane = tid % LANES;
  const uint segment = tid / LANES;
  const uint groups = p.k / 32u;
  const uint groups_per_block = WEIGHT_BLOCK_VALUES / 32u;
  for (uint j0 = gl_WorkGroupID.x * SEGMENTS; j0 < p.n; j0 += gl_NumWorkGroups.x * SEGMENTS) {
    const uint j = j0 + segment;  // this segment's row of w (may be >= n: idle)
    const uint row = p.w_offset + j * p.w_row_stride;
    float acc[MAX_M];
    [[unroll]] for (uint i = 0u; i < MAX_M; ++i) acc[i] = 0.0;
    for (uint g = lane; j < p.n && g < groups; g += LANES) {
      const uint block = row + (g / groups_per_block) * WEIGHT_BLOCK_BYTES;
      const uint first = (g % groups_per_block) * 32u;
      for (uint t = 0u; t < 32u; ++t) {
        const float v = weight_value(block, first + t);
        [[unroll]] for (uint i = 0u; i < MAX_M; ++i) {
          if (i < p.m) acc[i] += v * xq[i * p.k + g * 32u + t];
        }
      }
    }
    [[unroll]] for (uint i = 0u; i < MAX_M; ++i) partial[i][tid] = acc[i];
    barrier();
    [[unroll]] for (uint s = LANES / 2u; s > 0u; s >>= 1u) {
      if (lane < s) {
        [[unroll]] for (uint i = 0u; i < MAX_M; ++i) {
          if (i < p.m) partial[i][tid] += partial[i][tid + s];
        }
      }
      barrier();
    }
    if (j < p.n && lane < p.m) {
      y[p.y_offset + lane * p.y_row_stride + j] = partial[lane][segment * LANES];
    }
    barrier();  // partial is read before the next row overwrites it
  }
}
