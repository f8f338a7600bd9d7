#version 450
// silu_mul_f32.comp — out[t,i] = silu(gate[t,i]) * up[t,i], silu(g) = g / (1 + exp(-g)).
// gate, up, out: [n_tokens, dim] F32 (innermost contiguous); offsets and row strides in floats.
// x covers dim (grid-stride), y covers rows (strided by gl_NumWorkGroups.y).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Gate { float gate[]; };
layout(std430, binding = 1) readonly buffer Up { float up[]; };
layout(std430, binding = 2) writeonly buffer Out { float out_[]; };

layout(push_constant) uniform Params {
  uint n_tokens;
  uint dim;
  uint gate_offset;
  uint gate_row_stride;
  uint up_offset;
  uint up_row_stride;
  uint out_offset;
  uint out_row_stride;
} p;

void main() {
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  for (uint t = gl_WorkGroupID.y; t < p.n_tokens; t += gl_NumWorkGroups.y) {
    for (uint i = gl_GlobalInvocationID.x; i < p.dim; i += stride) {
      const float g = gate[p.gate_offset + t * p.gate_row_stride + i];
      const float u = up[p.up_offset + t * p.up_row_stride + i];
      out_[p.out_offset + t * p.out_row_stride + i] = g / (1.0 + exp(-g)) * u;
    }
  }
}
