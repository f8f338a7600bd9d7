#version 450
// quantize_x.comp — matmul_quantized's decode path for the weight types beyond Q8_0 / Q4_0: x
// [m, k] F32 quantized to 8-bit blocks as llama.cpp quantizes it for the weight type
// (activation_quant.glsl), written back DEQUANTIZED, xq[i, t] = d * q (f32, dense [m, k]), so
// matmul_qf_gemv.comp is a plain f32 dot product with the dequantized weights: the same sum as
// llama.cpp's integer dots with its Q8_0 / Q8_1 (the Q8_1 sum term is the weights' min times the
// dequantized x) and Q8_K blocks, up to f32 rounding.
//   super_blocks = 0: Q8_0 / Q8_1 blocks of 32 (Q4_1, Q5_0, Q5_1, IQ4_NL weights)
//   super_blocks = 1: Q8_K blocks of 256 (Q2_K .. Q6_K weights)
// x covers blocks (grid-stride), y covers rows.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "activation_quant.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Xq { float xq[]; };

layout(push_constant) uniform Params {
  uint m, k, super_blocks;
  uint x_offset, x_row_stride;  // elements
} p;

void main() {
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  const uint values = p.super_blocks != 0u ? 256u : 32u;
  const uint blocks = p.k / values;
  for (uint i = gl_WorkGroupID.y; i < p.m; i += gl_NumWorkGroups.y) {
    for (uint b = gl_GlobalInvocationID.x; b < blocks; b += stride) {
      const uint base = p.x_offset + i * p.x_row_stride + b * values;
      const uint out_ = i * p.k + b * values;
      float amax = 0.0, max_value = 0.0;
      for (uint t = 0u; t < values; ++t) {
        const float v = x[base + t];
        if (abs(v) > amax) {
          amax = abs(v);
          max_value = v;
        }
      }
      if (p.super_blocks != 0u) {
        const vec2 scales = q8_k_scale_and_inverse(max_value);
        for (uint t = 0u; t < values; ++t) {
          xq[out_ + t] = scales.x * float(q8_k_round(x[base + t] * scales.y));
        }
      } else {
        const vec2 scales = q8_0_scale_and_inverse(amax);
        for (uint t = 0u; t < values; ++t) {
          xq[out_ + t] = scales.x * float(round_away(x[base + t] * scales.y));
        }
      }
    }
  }
}
