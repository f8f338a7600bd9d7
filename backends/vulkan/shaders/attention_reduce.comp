#version 450
// attention_reduce.comp — the second pass of attention_decode_paged (plugin.h): one workgroup per
// row = seq * n_heads + head in [p.row_begin, p.row_end) (strided by gl_NumWorkGroups.x) combines
// the used partitions i < ceil(len / 256) that attention_decode.comp left in scratch
// [(row - row_begin) * n_parts + i] (m_i, l_i, acc_i[head_dim], F32):
//   M = max m_i,  L = sum l_i * exp(m_i - M),  out[seq, head, d] = sum acc_i[d] * exp(m_i - M) / L
// out [n_seqs, n_heads, head_dim] F32 | F16 (q's dtype, innermost contiguous), F16 stored a word
// at a time by the half-word convention of common.glsl. Does nothing when the validation pass set
// error[0] (out is left untouched).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Lens { int lens[]; };
layout(std430, binding = 1) readonly buffer Scratch { float scratch[]; };
layout(std430, binding = 2) buffer Out { uint out_[]; };
layout(std430, binding = 3) readonly buffer Error { uint error[]; };

layout(push_constant) uniform Params {
  uint row_begin, row_end;  // (seq * n_heads + head) rows of this dispatch
  uint n_heads, head_dim, n_parts;
  uint cl_offset, cl_stride;
  uint out_offset, out_seq_stride, out_head_stride, out_f16;  // elements of out's dtype
} p;

// attention_decode.comp's partition size.
const uint kPartitionTokens = HWINFER_WORKGROUP_SIZE;

HWINFER_DEFINE_STORE_HALF_WORD(store_half_word, out_)

// Element d of the combined row whose partitions start at scratch[base].
float combined(uint base, uint used, float big_m, float inv_l, uint d) {
  const uint width = p.head_dim + 2u;
  float sum = 0.0;
  for (uint i = 0u; i < used; ++i) {
    const uint at = base + i * width;
    sum += scratch[at + 2u + d] * exp(scratch[at] - big_m);
  }
  return sum * inv_l;
}

void main() {
  if (error[0] != 0u) return;  // the validation pass found bad data: out is not written
  const uint lid = gl_LocalInvocationID.x;
  const bool f16 = p.out_f16 != 0u;
  const uint width = p.head_dim + 2u;
  for (uint row = p.row_begin + gl_WorkGroupID.x; row < p.row_end; row += gl_NumWorkGroups.x) {
    const uint seq = row / p.n_heads, head = row % p.n_heads;
    const uint len = uint(lens[p.cl_offset + seq * p.cl_stride]);  // validated: >= 1
    const uint used = min((len + kPartitionTokens - 1u) / kPartitionTokens, p.n_parts);
    const uint base = (row - p.row_begin) * p.n_parts * width;
    float big_m = scratch[base];
    for (uint i = 1u; i < used; ++i) big_m = max(big_m, scratch[base + i * width]);
    float big_l = 0.0;
    for (uint i = 0u; i < used; ++i) {
      big_l += scratch[base + i * width + 1u] * exp(scratch[base + i * width] - big_m);
    }
    const float inv_l = 1.0 / big_l;
    const uint first = p.out_offset + seq * p.out_seq_stride + head * p.out_head_stride;
    const uint units = hwinfer_units(f16, first, p.head_dim);
    for (uint u = lid; u < units; u += HWINFER_WORKGROUP_SIZE) {
      const uvec2 e = hwinfer_unit_elements(f16, first, p.head_dim, u);
      const bool has_lo = e.x < p.head_dim, has_hi = e.y < p.head_dim;
      const float lo = has_lo ? combined(base, used, big_m, inv_l, e.x) : 0.0;
      if (!f16) {
        out_[first + e.x] = floatBitsToUint(lo);
        continue;
      }
      const float hi = has_hi ? combined(base, used, big_m, inv_l, e.y) : 0.0;
      store_half_word((first >> 1u) + u, has_lo, lo, has_hi, hi);
    }
  }
}
