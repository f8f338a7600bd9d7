#version 450
// rms_norm_f32.comp — RMSNorm over F32 rows, optionally fused with the residual add (plugin.h):
//   with residual:  residual[t,:] += x[t,:]; h = residual[t,:]   (in place)
//   otherwise:      h = x[t,:]
//   out[t,i] = h[i] / sqrt(mean(h^2) + eps) * weight[i]
// x, out, residual: [n_tokens, dim] F32 (innermost contiguous);  weight: [dim] F32.
// One workgroup per row (rows strided by gl_NumWorkGroups.x); offsets and row strides in floats.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Residual { float residual[]; };
layout(std430, binding = 2) readonly buffer Weight { float weight[]; };
layout(std430, binding = 3) writeonly buffer Out { float out_[]; };

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
} p;

shared float partial[HWINFER_WORKGROUP_SIZE];

void main() {
  const uint lane = gl_LocalInvocationID.x;
  for (uint t = gl_WorkGroupID.x; t < p.n_tokens; t += gl_NumWorkGroups.x) {
    const uint x_row = p.x_offset + t * p.x_row_stride;
    const uint r_row = p.residual_offset + t * p.residual_row_stride;
    float sum = 0.0;
    for (uint i = lane; i < p.dim; i += HWINFER_WORKGROUP_SIZE) {
      float h = x[x_row + i];
      if (p.has_residual != 0u) {
        h += residual[r_row + i];
        residual[r_row + i] = h;  // read back below by this same invocation
      }
      sum += h * h;
    }
    partial[lane] = sum;
    barrier();
    for (uint half_ = HWINFER_WORKGROUP_SIZE / 2u; half_ > 0u; half_ >>= 1u) {
      if (lane < half_) partial[lane] += partial[lane + half_];
      barrier();
    }
    const float inv_rms = inversesqrt(partial[0] / float(p.dim) + p.eps);
    barrier();  // everyone has read partial[0] before the next row overwrites it
    const uint o_row = p.out_offset + t * p.out_row_stride;
    for (uint i = lane; i < p.dim; i += HWINFER_WORKGROUP_SIZE) {
      const float h = p.has_residual != 0u ? residual[r_row + i] : x[x_row + i];
      out_[o_row + i] = h * inv_rms * weight[p.weight_offset + i];
    }
  }
}
