#version 450
// matmul_q.comp — the second half of matmul_quantized: y[i, j] = sum over blocks b of
// d_w * d_x * dot(q_w, q_x), integer dot products per block of 32, as the CPU backend
// (dot_q8_0_portable / dot_q4_0_portable). xq: quantize_q8.comp's blocks; w: [n, k] Q8_0 | Q4_0
// GGUF blocks, addressed in BYTES from w_offset with w_row_stride bytes between rows (any byte
// alignment); y: [m, n] F32. x covers n (grid-stride), y covers rows of y. The sum is `precise`
// (no FMA contraction of sum + term on any driver), so y is the CPU rule's bits everywhere and
// matmul_q_gemv.comp (the m <= 8 path) writes the same bits.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Xq { uint xq[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
  uint m, n, blocks, q4;
  uint w_offset, w_row_stride;  // bytes
  uint y_offset, y_row_stride;  // elements
} p;

// The 4 bytes at byte |b| (any alignment; never reads a word past the one holding b + 3).
uint read_u32(uint b) {
  const uint shift = (b & 3u) * 8u;
  const uint lo = w[b >> 2u];
  if (shift == 0u) return lo;
  return (lo >> shift) | (w[(b >> 2u) + 1u] << (32u - shift));
}

int sbyte(uint word, uint c) { return bitfieldExtract(int(word), int(8u * c), 8); }

void main() {
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  for (uint i = gl_WorkGroupID.y; i < p.m; i += gl_NumWorkGroups.y) {
    for (uint j = gl_GlobalInvocationID.x; j < p.n; j += stride) {
      const uint row = p.w_offset + j * p.w_row_stride;
      precise float sum = 0.0;
      for (uint b = 0u; b < p.blocks; ++b) {
        const uint xb = (i * p.blocks + b) * 9u;
        int dot = 0;
        uint block;
        if (p.q4 != 0u) {
          block = row + b * 18u;
          for (uint u = 0u; u < 4u; ++u) {
            const uint ww = read_u32(block + 2u + 4u * u);
            const uint xlo = xq[xb + 1u + u];
            const uint xhi = xq[xb + 5u + u];
            for (uint c = 0u; c < 4u; ++c) {
              const int lo = int((ww >> (8u * c)) & 0xFu) - 8;
              const int hi = int((ww >> (8u * c + 4u)) & 0xFu) - 8;
              dot += sbyte(xlo, c) * lo + sbyte(xhi, c) * hi;
            }
          }
        } else {
          block = row + b * 34u;
          for (uint u = 0u; u < 8u; ++u) {
            const uint ww = read_u32(block + 2u + 4u * u);
            const uint xw = xq[xb + 1u + u];
            for (uint c = 0u; c < 4u; ++c) dot += sbyte(xw, c) * sbyte(ww, c);
          }
        }
        const uint d_bits = (block & 3u) == 3u ? (read_u32(block) & 0xFFFFu)
                                               : (w[block >> 2u] >> ((block & 3u) * 8u)) & 0xFFFFu;
        const float d_w = unpackHalf2x16(d_bits).x;
        const float d_x = uintBitsToFloat(xq[xb]);
        precise const float term = d_w * d_x * float(dot);
        sum += term;
      }
      y[p.y_offset + i * p.y_row_stride + j] = sum;
    }
  }
}
