#version 450
// rms_norm.comp — RMSNorm over rows, optionally fused with the residual add (plugin.h):
//   with residual:  residual[t,:] += x[t,:]; h = residual[t,:] as stored (rounded when F16)
//   otherwise:      h = x[t,:]
//   out[t,i] = h[i] / sqrt(mean(h^2) + eps) * weight[i]
// x, out, residual: [n_tokens, dim] F32 | F16 each (innermost contiguous);  weight: [dim] F32.
// One workgroup per row (rows strided by gl_NumWorkGroups.x); offsets and row strides in elements
// of each operand's dtype. F16 stores follow common.glsl (whole words, atomics at row edges).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) coherent buffer Residual { uint residual[]; };
layout(std430, binding = 2) readonly buffer Weight { float weight[]; };
layout(std430, binding = 3) buffer Out { uint out_[]; };

layout(push_constant) uniform Params {
  uint n_tokens;
  uint dim;
  uint x_offset;
  uint x_row_stride;
  uint residual_offset;  // unused when has_residual == 0 (binding 1 then aliases x)
  uint residual_row_stride;
  uint weight_offset;
  uint out_offset;
  uint out_row_stride;
  uint has_residual;
  float eps;
  uint x_f16;
  uint residual_f16;
  uint out_f16;
} p;

shared float partial[HWINFER_WORKGROUP_SIZE];

HWINFER_DEFINE_LOAD(load_x, x)
HWINFER_DEFINE_LOAD(load_residual, residual)
HWINFER_DEFINE_STORE_HALF_WORD(store_residual_word, residual)
HWINFER_DEFINE_STORE_HALF_WORD(store_out_word, out_)

void main() {
  const uint lane = gl_LocalInvocationID.x;
  const bool x_f16 = p.x_f16 != 0u;
  const bool r_f16 = p.residual_f16 != 0u;
  const bool o_f16 = p.out_f16 != 0u;
  const bool has_residual = p.has_residual != 0u;
  for (uint t = gl_WorkGroupID.x; t < p.n_tokens; t += gl_NumWorkGroups.x) {
    const uint x_row = p.x_offset + t * p.x_row_stride;
    const uint r_row = p.residual_offset + t * p.residual_row_stride;
    float sum = 0.0;
    if (has_residual) {
      // Units of the residual row: each invocation updates whole words of it.
      const uint units = hwinfer_units(r_f16, r_row, p.dim);
      for (uint u = lane; u < units; u += HWINFER_WORKGROUP_SIZE) {
        const uvec2 e = hwinfer_unit_elements(r_f16, r_row, p.dim, u);
        const bool has_lo = e.x < p.dim;
        const bool has_hi = e.y < p.dim;
        float lo = 0.0;
        float hi = 0.0;
        if (has_lo) lo = load_x(x_f16, x_row + e.x) + load_residual(r_f16, r_row + e.x);
        if (has_hi) hi = load_x(x_f16, x_row + e.y) + load_residual(r_f16, r_row + e.y);
        if (r_f16) {
          store_residual_word(r_row / 2u + u, has_lo, lo, has_hi, hi);
          const vec2 rounded = unpackHalf2x16(packHalf2x16(vec2(lo, hi)));
          lo = rounded.x;
          hi = rounded.y;
        } else {
          residual[r_row + u] = floatBitsToUint(lo);
        }
        if (has_lo) sum += lo * lo;
        if (has_hi) sum += hi * hi;
      }
    } else {
      for (uint i = lane; i < p.dim; i += HWINFER_WORKGROUP_SIZE) {
        const float h = load_x(x_f16, x_row + i);
        sum += h * h;
      }
    }
    partial[lane] = sum;
    memoryBarrierBuffer();  // the residual row written above is read back below by any lane
    barrier();
    for (uint half_ = HWINFER_WORKGROUP_SIZE / 2u; half_ > 0u; half_ >>= 1u) {
      if (lane < half_) partial[lane] += partial[lane + half_];
      barrier();
    }
    const float inv_rms = inversesqrt(partial[0] / float(p.dim) + p.eps);
    barrier();  // everyone has read partial[0] before the next row overwrites it
    const uint o_row = p.out_offset + t * p.out_row_stride;
    const uint units = hwinfer_units(o_f16, o_row, p.dim);
    for (uint u = lane; u < units; u += HWINFER_WORKGROUP_SIZE) {
      const uvec2 e = hwinfer_unit_elements(o_f16, o_row, p.dim, u);
      const bool has_lo = e.x < p.dim;
      const bool has_hi = e.y < p.dim;
      float lo = 0.0;
      float hi = 0.0;
      if (has_lo) {
        const float h = has_residual ? load_residual(r_f16, r_row + e.x) : load_x(x_f16, x_row + e.x);
        lo = h * inv_rms * weight[p.weight_offset + e.x];
      }
      if (has_hi) {
        const float h = has_residual ? load_residual(r_f16, r_row + e.y) : load_x(x_f16, x_row + e.y);
        hi = h * inv_rms * weight[p.weight_offset + e.y];
      }
      if (o_f16) {
        store_out_word(o_row / 2u + u, has_lo, lo, has_hi, hi);
      } else {
        out_[o_row + u] = floatBitsToUint(lo);
      }
    }
  }
}
