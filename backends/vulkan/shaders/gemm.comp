#version 450
// gemm.comp — c[m,n] = alpha * sum_k a[m,k] * B[k,n] + beta * c[m,n] (plugin.h), fp32
// accumulation; beta == 0 ignores c's old contents (even NaN).
// a: [m, k], b: [k, n] or (b_transposed) [n, k], c: [m, n]; each F32 | F16 | BF16 (dtype codes
// below), innermost contiguous, offsets and row strides in elements of each operand's dtype.
// A 16x16 workgroup computes a 16x16 tile of c through 16x16 shared-memory tiles of a and B
// (tiles strided by gl_NumWorkGroups). One invocation owns one c element; 16-bit c elements are
// written with atomics on their own half-word (common.glsl), so neighbours never race.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define TILE 16u

layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) coherent buffer C { uint c[]; };

#define DTYPE_F32 0u
#define DTYPE_F16 1u
#define DTYPE_BF16 2u

layout(push_constant) uniform Params {
  uint m;
  uint n;
  uint k;
  uint b_transposed;
  float alpha;
  float beta;
  uint a_offset;
  uint a_row_stride;
  uint a_dtype;
  uint b_offset;
  uint b_row_stride;
  uint b_dtype;
  uint c_offset;
  uint c_row_stride;
  uint c_dtype;
} p;

shared float a_tile[TILE][TILE];  // [row of c][k]
shared float b_tile[TILE][TILE];  // [k][column of c]

float bf16_to_f32(uint bits) { return uintBitsToFloat(bits << 16u); }

uint f32_to_bf16(float v) {
  const uint bits = floatBitsToUint(v);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (bits >> 16u) | 0x40u;  // NaN stays NaN
  return (bits + 0x7FFFu + ((bits >> 16u) & 1u)) >> 16u;
}

#define HWINFER_DEFINE_LOAD_ANY(NAME, BUF)                                 \
  float NAME(uint dtype, uint index) {                                     \
    if (dtype == DTYPE_F32) return uintBitsToFloat(BUF[index]);            \
    const uint bits = (BUF[index >> 1u] >> ((index & 1u) * 16u)) & 0xFFFFu; \
    return dtype == DTYPE_F16 ? unpackHalf2x16(bits).x : bf16_to_f32(bits); \
  }

HWINFER_DEFINE_LOAD_ANY(load_a, a)
HWINFER_DEFINE_LOAD_ANY(load_b, b)
HWINFER_DEFINE_LOAD_ANY(load_c, c)

void store_c(uint index, float v) {
  if (p.c_dtype == DTYPE_F32) {
    c[index] = floatBitsToUint(v);
    return;
  }
  const uint bits = p.c_dtype == DTYPE_F16 ? packHalf2x16(vec2(v, 0.0)) : f32_to_bf16(v);
  const uint word = index >> 1u;
  if ((index & 1u) == 0u) {
    atomicAnd(c[word], 0xFFFF0000u);
    atomicOr(c[word], bits & 0xFFFFu);
  } else {
    atomicAnd(c[word], 0x0000FFFFu);
    atomicOr(c[word], (bits & 0xFFFFu) << 16u);
  }
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
        // a_tile[ty][tx] = a[tm*TILE + ty, k0 + tx]
        const uint a_k = k0 + tx;
        a_tile[ty][tx] = row < p.m && a_k < p.k
                             ? load_a(p.a_dtype, p.a_offset + row * p.a_row_stride + a_k)
                             : 0.0;
        // b_tile[ty][tx] = B[k0 + ty, tn*TILE + tx]  (transposed: b[col, k0 + ty])
        const uint b_k = k0 + ty;
        float bv = 0.0;
        if (b_k < p.k && col < p.n) {
          const uint at = p.b_transposed != 0u ? p.b_offset + col * p.b_row_stride + b_k
                                               : p.b_offset + b_k * p.b_row_stride + col;
          bv = load_b(p.b_dtype, at);
        }
        b_tile[ty][tx] = bv;
        barrier();
        for (uint kk = 0u; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
        barrier();
      }
      if (row < p.m && col < p.n) {
        const uint at = p.c_offset + row * p.c_row_stride + col;
        float result = p.alpha * acc;
        if (p.beta != 0.0) result += p.beta * load_c(p.c_dtype, at);
        store_c(at, result);
      }
    }
  }
}
