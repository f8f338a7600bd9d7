#version 450
// matmul_q_gemv.comp — matmul_q.comp for decode (kernels_quant.cpp routes m <= 8 here; on a CPU
// device such as lavapipe only n < 64), with the same result bit for bit: y[i, j] = sum over blocks b, IN BLOCK ORDER, of
// (d_w * d_x) * float(dot(q_w, q_x)) (the CPU backend's portable dot_q8_0 / dot_q4_0 rule).
// xq: [m, blocks] quantize_q8.comp blocks (9 words: d, then 32 int8); w: [n, k] Q8_0 | Q4_0 GGUF
// blocks (Q8_0: f16 d + 32 int8 = 34 bytes; Q4_0: f16 d + 16 bytes, byte t = value t in the low
// nibble and value t + 16 in the high one, each minus 8 = 18 bytes), addressed in BYTES from
// w_offset with w_row_stride bytes between rows (any byte alignment); y: [m, n] F32.
//
// A workgroup of 256 invocations is SEGMENTS segments of LANES = 32; each segment owns one row j
// of w (one output column) at a time, rows strided by gl_NumWorkGroups. The row is walked in
// chunks of LANES * PER_LANE blocks: lane l computes the terms of blocks l, l + LANES, ... of the
// chunk (neighbouring lanes read neighbouring blocks) for every row of xq (m <= 8: the weights
// are read once) and parks them in shared memory; then invocation i < m of the segment adds the
// chunk's terms for x row i to its running sum one by one in block order. A tree reduction would
// change the rounding of the float sum, so the sum stays sequential: the parallel part is the
// weight reads and the integer dot products, the serial part is LANES * PER_LANE float adds per
// chunk from shared memory. Each term is rounded when stored to shared memory, and `precise`
// forbids contracting the adds, so no FMA can change the result.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define MAX_M 8u
#define LANES 32u
#define SEGMENTS (HWINFER_WORKGROUP_SIZE / LANES)
#define PER_LANE 2u
#define CHUNK (LANES * PER_LANE)  // blocks per chunk

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Xq { uint xq[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
  uint m, n, blocks, q4;
  uint w_offset, w_row_stride;  // bytes
  uint y_offset, y_row_stride;  // elements
} p;

// terms[i][segment][q]: the term of block q of the current chunk for x row i.
shared float terms[MAX_M][SEGMENTS][CHUNK];

int sbyte(uint word, uint c) { return bitfieldExtract(int(word), int(8u * c), 8); }

// The 4 bytes at bytes |b| .. b + 3 (any alignment), given the words |lo| = w[b >> 2] and |hi|,
// the next word (not read when b is word-aligned: the caller may pass any word then).
uint funnel(uint lo, uint hi, uint b) {
  const uint shift = (b & 3u) * 8u;
  return (lo >> shift) | ((hi << 1u) << (31u - shift));  // hi << (32 - shift), 0 when shift = 0
}

// The 4 bytes of w at byte |b| + 4 * |u| from |first| = b >> 2, never reading past word |last|.
uint quant_word(uint first, uint last, uint b, uint u) {
  return funnel(w[first + u], w[min(first + u + 1u, last)], b);
}

// The quants of the block at byte |block| as 32-bit words: q0 = bytes block + 2 .. + 17 (Q4_0:
// all of them), q1 = the next 16 (Q8_0 only; zero for Q4_0), and the block's scale. Branch-free
// but for the uniform dtype, and never reads a word past the block's last byte. No arrays: a CPU
// implementation (lavapipe) would keep them in memory.
void read_block(uint block, bool q4, out uvec4 q0, out uvec4 q1, out float d_w) {
  const uint start = block + 2u;
  const uint first = start >> 2u;
  const uint last = (start + (q4 ? 15u : 31u)) >> 2u;
  q0 = uvec4(quant_word(first, last, start, 0u), quant_word(first, last, start, 1u),
             quant_word(first, last, start, 2u), quant_word(first, last, start, 3u));
  q1 = uvec4(0u);
  if (!q4) {
    q1 = uvec4(quant_word(first, last, start, 4u), quant_word(first, last, start, 5u),
               quant_word(first, last, start, 6u), quant_word(first, last, start, 7u));
  }
  const uint d_word = block >> 2u;
  const uint d_bits = funnel(w[d_word], w[min(d_word + 1u, (block + 1u) >> 2u)], block) & 0xFFFFu;
  d_w = unpackHalf2x16(d_bits).x;
}

// Q8_0: the dot product of 4 weight bytes |wq| with 4 x bytes |xw|.
int dot_q8_word(uint wq, uint xw) {
  return sbyte(xw, 0u) * sbyte(wq, 0u) + sbyte(xw, 1u) * sbyte(wq, 1u) +
         sbyte(xw, 2u) * sbyte(wq, 2u) + sbyte(xw, 3u) * sbyte(wq, 3u);
}

// Q4_0: 4 bytes of nibbles |wq| (low nibbles: values t, high: t + 16) with x bytes |xlo|, |xhi|.
int dot_q4_word(uint wq, uint xlo, uint xhi) {
  int dot = 0;
  [[unroll]] for (uint c = 0u; c < 4u; ++c) {
    const int lo = int((wq >> (8u * c)) & 0xFu) - 8;
    const int hi = int((wq >> (8u * c + 4u)) & 0xFu) - 8;
    dot += sbyte(xlo, c) * lo + sbyte(xhi, c) * hi;
  }
  return dot;
}

// The integer dot product of a block (q0, q1) with block b of x row i (xq words xb ..).
int block_dot(bool q4, uvec4 q0, uvec4 q1, uint xb) {
  if (q4) {
    return dot_q4_word(q0.x, xq[xb + 1u], xq[xb + 5u]) + dot_q4_word(q0.y, xq[xb + 2u], xq[xb + 6u]) +
           dot_q4_word(q0.z, xq[xb + 3u], xq[xb + 7u]) + dot_q4_word(q0.w, xq[xb + 4u], xq[xb + 8u]);
  }
  return dot_q8_word(q0.x, xq[xb + 1u]) + dot_q8_word(q0.y, xq[xb + 2u]) +
         dot_q8_word(q0.z, xq[xb + 3u]) + dot_q8_word(q0.w, xq[xb + 4u]) +
         dot_q8_word(q1.x, xq[xb + 5u]) + dot_q8_word(q1.y, xq[xb + 6u]) +
         dot_q8_word(q1.z, xq[xb + 7u]) + dot_q8_word(q1.w, xq[xb + 8u]);
}

void main() {
  const uint lane = gl_LocalInvocationID.x % LANES;
  const uint segment = gl_LocalInvocationID.x / LANES;
  for (uint j0 = gl_WorkGroupID.x * SEGMENTS; j0 < p.n; j0 += gl_NumWorkGroups.x * SEGMENTS) {
    const uint j = j0 + segment;  // this segment's row of w (may be >= n: idle)
    const uint row = p.w_offset + j * p.w_row_stride;
    precise float sum = 0.0;  // invocation lane (< m) of the segment: x row lane
    for (uint b0 = 0u; b0 < p.blocks; b0 += CHUNK) {
      [[unroll]] for (uint r = 0u; r < PER_LANE; ++r) {
        const uint q = lane + r * LANES;
        const uint b = b0 + q;
        const bool valid = j < p.n && b < p.blocks;
        const bool q4 = p.q4 != 0u;
        uvec4 q0 = uvec4(0u), q1 = uvec4(0u);
        float d_w = 0.0;
        if (valid) read_block(row + b * (q4 ? 18u : 34u), q4, q0, q1, d_w);
        [[unroll]] for (uint i = 0u; i < MAX_M; ++i) {
          if (i < p.m) {
            float term = 0.0;
            if (valid) {
              const uint xb = (i * p.blocks + b) * 9u;
              const int dot = block_dot(q4, q0, q1, xb);
              precise const float scale = d_w * uintBitsToFloat(xq[xb]);
              precise const float product = scale * float(dot);
              term = product;
            }
            terms[i][segment][q] = term;
          }
        }
      }
      barrier();
      if (j < p.n && lane < p.m) {
        const uint count = min(CHUNK, p.blocks - b0);
        for (uint q = 0u; q < count; ++q) sum += terms[lane][segment][q];
      }
      barrier();  // the terms have been read before the next chunk overwrites them
    }
    if (j < p.n && lane < p.m) y[p.y_offset + lane * p.y_row_stride + j] = sum;
  }
}
