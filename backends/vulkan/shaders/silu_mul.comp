#version 450
// silu_mul.comp — out[t,i] = silu(gate[t,i]) * up[t,i], silu(g) = g / (1 + exp(-g)).
// gate, up, out: [n_tokens, dim] F32 | F16 each (innermost contiguous); offsets and row strides in
// elements of each operand's dtype; the *_f16 flags say which operands are F16.
// x covers the output row's store units (common.glsl; grid-stride), y covers rows (strided by
// gl_NumWorkGroups.y).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Gate { uint gate[]; };
layout(std430, binding = 1) readonly buffer Up { uint up[]; };
layout(std430, binding = 2) buffer Out { uint out_[]; };

layout(push_constant) uniform Params {
  uint n_tokens;
  uint dim;
  uint gate_offset;
  uint gate_row_stride;
  uint up_offset;
  uint up_row_stride;
  uint out_offset;
  uint out_row_stride;
  uint gate_f16;
  uint up_f16;
  uint out_f16;
} p;

HWINFER_DEFINE_LOAD(load_gate, gate)
HWINFER_DEFINE_LOAD(load_up, up)
HWINFER_DEFINE_STORE_HALF_WORD(store_out_word, out_)

float value(uint t, uint i) {
  const float g = load_gate(p.gate_f16 != 0u, p.gate_offset + t * p.gate_row_stride + i);
  const float u = load_up(p.up_f16 != 0u, p.up_offset + t * p.up_row_stride + i);
  return g / (1.0 + exp(-g)) * u;
}

void main() {
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  const bool out_f16 = p.out_f16 != 0u;
  for (uint t = gl_WorkGroupID.y; t < p.n_tokens; t += gl_NumWorkGroups.y) {
    const uint base = p.out_offset + t * p.out_row_stride;
    const uint units = hwinfer_units(out_f16, base, p.dim);
    for (uint u = gl_GlobalInvocationID.x; u < units; u += stride) {
      const uvec2 e = hwinfer_unit_elements(out_f16, base, p.dim, u);
      const bool has_lo = e.x < p.dim;
      const bool has_hi = e.y < p.dim;
      const float lo = has_lo ? value(t, e.x) : 0.0;
      if (!out_f16) {
        out_[base + u] = floatBitsToUint(lo);
      } else {
        store_out_word(base / 2u + u, has_lo, lo, has_hi, has_hi ? value(t, e.y) : 0.0);
      }
    }
  }
}
