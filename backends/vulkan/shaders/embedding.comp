#version 450
// embedding.comp — out[t,:] = dequantize(table[ids[t],:]) (plugin.h).
// table: [vocab, dim] F32 | F16 | BF16 | any GGUF block type (weight_blocks.glsl), addressed in
// BYTES from table_offset with table_row_stride bytes between rows (block tables may start at any
// byte);
// ids: [n_tokens] I32 (ids_offset / ids_stride in elements);  out: [n_tokens, dim] F32.
// An id outside [0, vocab) sets error[0] (the host turns it into INVALID_ARGUMENT at the next
// synchronize) and that token's row is left untouched: nothing outside the table is read.
// x covers dim (grid-stride), y covers tokens (strided by gl_NumWorkGroups.y).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Table { uint table[]; };
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly buffer Out { float out_[]; };
layout(std430, binding = 3) buffer Error { uint error[]; };

#define WEIGHT_WORDS table
#include "weight_blocks.glsl"

#define DTYPE_F32 0u
#define DTYPE_F16 1u
#define DTYPE_BF16 30u

layout(push_constant) uniform Params {
  uint n_tokens;
  uint vocab;
  uint dim;
  uint dtype;  // HWINFER_DTYPE_* (plugin.h's ids)
  uint table_offset;      // bytes
  uint table_row_stride;  // bytes
  uint ids_offset;
  uint ids_stride;
  uint out_offset;
  uint out_row_stride;
  uint block_values, block_bytes;  // of one block of a block dtype
} p;

float value(uint row, uint i) {
  switch (p.dtype) {
    case DTYPE_F32:
      return uintBitsToFloat(table[(row + 4u * i) >> 2u]);
    case DTYPE_F16:
      return wb_half(row + 2u * i);
    case DTYPE_BF16:
      return uintBitsToFloat(wb_u16(row + 2u * i) << 16u);
    default:
      return block_value(p.dtype, row + (i / p.block_values) * p.block_bytes, i % p.block_values);
  }
}

void main() {
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  for (uint t = gl_WorkGroupID.y; t < p.n_tokens; t += gl_NumWorkGroups.y) {
    const int id = ids[p.ids_offset + t * p.ids_stride];
    if (id < 0 || uint(id) >= p.vocab) {
      if (gl_GlobalInvocationID.x == 0u) atomicOr(error[0], 1u);
      continue;
    }
    const uint row = p.table_offset + uint(id) * p.table_row_stride;
    const uint o_row = p.out_offset + t * p.out_row_stride;
    for (uint i = gl_GlobalInvocationID.x; i < p.dim; i += stride) {
      out_[o_row + i] = value(row, i);
    }
  }
}
