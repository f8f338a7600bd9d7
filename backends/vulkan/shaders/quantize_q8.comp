#version 450
// quantize_q8.comp — the first half of matmul_quantized: x [m, k] F32 into 8-bit blocks of 32
// values exactly as the CPU backend (backends/cpu/matmul_quantized.cpp quantize_x_portable):
//   d = amax / 127, id = d != 0 ? 1 / d : 0, q[t] = lround(x[t] * id) (half away from zero).
// xq: [m, blocks] blocks of 9 words: word 0 = d (F32 bits), words 1..8 = the 32 int8 values,
// value t in byte t % 4 of word 1 + t / 4. x covers blocks (grid-stride), y covers rows.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "activation_quant.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Xq { uint xq[]; };

layout(push_constant) uniform Params {
  uint m, blocks;
  uint x_offset, x_row_stride;  // elements
} p;

void main() {
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  for (uint i = gl_WorkGroupID.y; i < p.m; i += gl_NumWorkGroups.y) {
    for (uint b = gl_GlobalInvocationID.x; b < p.blocks; b += stride) {
      const uint base = p.x_offset + i * p.x_row_stride + b * 32u;
      float amax = 0.0;
      for (uint t = 0u; t < 32u; ++t) amax = max(amax, abs(x[base + t]));
      // Both divisions rounded as C rounds them (activation_quant.glsl). Written plainly, the
      // shader compiler may rewrite 1 / (amax / 127) (lavapipe did) and a value near a tie of x * id
      // rounded to the other integer than the CPU backend's now and then (conformance:
      // Q4_0MatchesReference on lavapipe, NMSE 1.3e-7 vs llama.cpp's scheme instead of ~1e-13).
      const vec2 scales = q8_0_scale_and_inverse(amax);
      const float d = scales.x;
      const float id = scales.y;
      const uint out_ = (i * p.blocks + b) * 9u;
      xq[out_] = floatBitsToUint(d);
      for (uint w = 0u; w < 8u; ++w) {
        uint packed = 0u;
        for (uint c = 0u; c < 4u; ++c) {
          const int q = round_away(x[base + 4u * w + c] * id);
          packed |= (uint(q) & 0xFFu) << (8u * c);
        }
        xq[out_ + 1u + w] = packed;
      }
    }
  }
}
