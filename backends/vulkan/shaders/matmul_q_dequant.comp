#version 450
// matmul_q_dequant.comp — matmul_quantized for larger m (prefill chunks), as the CPU backend does
// there (backends/cpu/matmul_quantized.h): x stays exact F32 and the weights are dequantized
// as they are loaded, then an F32 GEMM: y[m, n] = x[m, k] · dequant(w)^T.
// Compiled once per weight type (-DWTYPE, weight_blocks.glsl: the dequantized values are the
// oracle's bit for bit). x: [m, k] F32 (offset, row stride in elements); w: [n, k] blocks of
// WTYPE addressed in BYTES from w_offset with w_row_stride bytes between rows (any byte
// alignment); y: [m, n] F32.
// A 16x16 workgroup computes a 16x16 tile of y through 16x16 shared-memory tiles (tiles strided
// by gl_NumWorkGroups), fp32 accumulation in k order. Correctness first, not tuned.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define TILE 16u

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };

#define WEIGHT_WORDS w
#include "weight_blocks.glsl"

layout(push_constant) uniform Params {
  uint m, n, k;
  uint x_offset, x_row_stride;  // elements
  uint w_offset, w_row_stride;  // bytes
  uint y_offset, y_row_stride;  // elements
} p;

shared float x_tile[TILE][TILE];  // [row of y][k]
shared float w_tile[TILE][TILE];  // [k][column of y]

// Element kk of weight row |col|, dequantized.
float weight(uint col, uint kk) {
  const uint block =
      p.w_offset + col * p.w_row_stride + (kk / WEIGHT_BLOCK_VALUES) * WEIGHT_BLOCK_BYTES;
  return weight_value(block, kk % WEIGHT_BLOCK_VALUES);
}

void main() {
  const uint tx = gl_LocalInvocationID.x;  // column within the tile
  const uint ty = gl_LocalInvocationID.y;  // row within the tile
  const uint tiles_n = (p.n + TILE - 1u) / TILE;
  const uint tiles_m = (p.m + TILE - 1u) / TILE;
  for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
    for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
      const uint row = tm * TILE + ty;
      const uint col = tn * TILE + tx;
      float acc = 0.0;
      for (uint k0 = 0u; k0 < p.k; k0 += TILE) {
        const uint x_k = k0 + tx;
        x_tile[ty][tx] =
            row < p.m && x_k < p.k ? x[p.x_offset + row * p.x_row_stride + x_k] : 0.0;
        const uint w_k = k0 + ty;
        w_tile[ty][tx] = w_k < p.k && col < p.n ? weight(col, w_k) : 0.0;
        barrier();
        for (uint kk = 0u; kk < TILE; ++kk) acc += x_tile[ty][kk] * w_tile[kk][tx];
        barrier();
      }
      if (row < p.m && col < p.n) y[p.y_offset + row * p.y_row_stride + col] = acc;
    }
  }
}
