#version 450
// gemv.comp — the decode-shaped gemm (kernels_gemm.cpp routes b_transposed = 1 and m <= 8 here):
//   c[i, j] = alpha * sum_l a[i, l] * b[j, l] + beta * c[i, j]   (beta == 0 ignores c, even NaN)
// a: [m, k], b: [n, k] (row j of b is output column j), c: [m, n]; each F32 | F16 | BF16 (the
// DTYPE_* codes of gemm.comp), innermost contiguous, offsets and row strides in elements.
//
// A workgroup of 256 invocations is 256 / lanes segments of |lanes| invocations (32..256, a power
// of two the host picks from k, n and the device type); each segment owns one output column j
// (one row of b) at a time, columns strided by gl_NumWorkGroups. The lanes stride along the row
// of b and every row of a (m <= 8) is multiplied against the same loaded weights, so b is read
// once per GEMV. fp32 accumulation, then a shared-memory tree reduction per segment (barriers
// only, no subgroup operations: any Vulkan 1.1 device, lavapipe included). Wide mode (host-chosen,
// wide = 1): the row start, row stride and row length of b are whole 16-byte units from the
// binding, so each lane loads uvec4s (4 F32 or 8 F16/BF16 values) at unit lane, lane + lanes, ...;
// otherwise each lane loads single elements lane, lane + lanes, ... (scalar fallback). 16-bit c
// elements are written with atomics on their own half-word, as gemm.comp does.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define MAX_M 8u

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer A { uint a[]; };
// Two views of the same binding: 32-bit words (scalar path) and 16-byte units (wide path).
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 1) readonly buffer B4 { uvec4 b4[]; };
layout(std430, binding = 2) coherent buffer C { uint c[]; };

#define DTYPE_F32 0u
#define DTYPE_F16 1u
#define DTYPE_BF16 2u

layout(push_constant) uniform Params {
  uint m;  // 1..MAX_M
  uint n;
  uint k;
  float alpha;
  float beta;
  uint a_offset;
  uint a_row_stride;
  uint a_dtype;
  uint b_offset;  // elements from the binding (wide: a multiple of the elements per uvec4)
  uint b_row_stride;
  uint b_dtype;
  uint c_offset;
  uint c_row_stride;
  uint c_dtype;
  uint lanes;  // invocations per output column: 32, 64, 128 or 256
  uint wide;   // 1: uvec4 loads of b (see above)
} p;

shared float partial[MAX_M][HWINFER_WORKGROUP_SIZE];  // [row of a][invocation]

float bf16_to_f32(uint bits) { return uintBitsToFloat(bits << 16u); }

uint f32_to_bf16(float v) {
  const uint bits = floatBitsToUint(v);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (bits >> 16u) | 0x40u;  // NaN stays NaN
  return (bits + 0x7FFFu + ((bits >> 16u) & 1u)) >> 16u;
}

// A 16-bit value (low half of |bits|) of dtype F16 or BF16 as float.
float half_to_f32(uint dtype, uint bits) {
  return dtype == DTYPE_F16 ? unpackHalf2x16(bits).x : bf16_to_f32(bits & 0xFFFFu);
}

#define HWINFER_DEFINE_LOAD_ANY(NAME, BUF)                                 \
  float NAME(uint dtype, uint index) {                                     \
    if (dtype == DTYPE_F32) return uintBitsToFloat(BUF[index]);            \
    const uint bits = (BUF[index >> 1u] >> ((index & 1u) * 16u)) & 0xFFFFu; \
    return half_to_f32(dtype, bits);                                       \
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

// acc[i] += sum over the |count| values w of a[i, l0 ..] * w (count 4 or 8). Loops over MAX_M
// are unrolled with a uniform guard (no break), so acc stays in registers.
void fma_rows(inout float acc[MAX_M], uint l0, const float w[8], uint count) {
  [[unroll]] for (uint i = 0u; i < MAX_M; ++i) {
    if (i < p.m) {
      const uint at = p.a_offset + i * p.a_row_stride + l0;
      float s = 0.0;
      [[unroll]] for (uint e = 0u; e < 8u; ++e) {
        if (e < count) s += load_a(p.a_dtype, at + e) * w[e];
      }
      acc[i] += s;
    }
  }
}

// m = 1 (the decode step): one accumulator, no per-row loop. A CPU implementation (lavapipe)
// runs guarded bodies masked rather than skipping them, so the unrolled MAX_M loops below would
// cost it MAX_M times the work; GPUs skip the uniform branch.
float dot_row0(uint row, uint lane, uint lanes) {
  float acc = 0.0;
  if (p.wide != 0u) {
    const uint per_unit = p.b_dtype == DTYPE_F32 ? 4u : 8u;
    const uint units = p.k / per_unit;
    const uint row_unit = row / per_unit;
    for (uint u = lane; u < units; u += lanes) {
      const uvec4 v = b4[row_unit + u];
      const uint at = p.a_offset + u * per_unit;
      if (p.b_dtype == DTYPE_F32) {
        acc += load_a(p.a_dtype, at) * uintBitsToFloat(v.x) +
               load_a(p.a_dtype, at + 1u) * uintBitsToFloat(v.y) +
               load_a(p.a_dtype, at + 2u) * uintBitsToFloat(v.z) +
               load_a(p.a_dtype, at + 3u) * uintBitsToFloat(v.w);
      } else {
        float s = 0.0;
        [[unroll]] for (uint q = 0u; q < 4u; ++q) {
          s += load_a(p.a_dtype, at + 2u * q) * half_to_f32(p.b_dtype, v[q]) +
               load_a(p.a_dtype, at + 2u * q + 1u) * half_to_f32(p.b_dtype, v[q] >> 16u);
        }
        acc += s;
      }
    }
  } else {
    for (uint l = lane; l < p.k; l += lanes) {
      acc += load_a(p.a_dtype, p.a_offset + l) * load_b(p.b_dtype, row + l);
    }
  }
  return acc;
}

void main() {
  const uint lanes = p.lanes;
  const uint lane = gl_LocalInvocationID.x & (lanes - 1u);
  const uint segment = gl_LocalInvocationID.x / lanes;
  const uint segments = HWINFER_WORKGROUP_SIZE / lanes;
  const uint seg_base = segment * lanes;
  for (uint j0 = gl_WorkGroupID.x * segments; j0 < p.n; j0 += gl_NumWorkGroups.x * segments) {
    const uint j = j0 + segment;  // this segment's output column (may be >= n: idle)
    float acc[MAX_M];
    [[unroll]] for (uint i = 0u; i < MAX_M; ++i) acc[i] = 0.0;
    if (j < p.n && p.m == 1u) {
      acc[0] = dot_row0(p.b_offset + j * p.b_row_stride, lane, lanes);
    } else if (j < p.n) {
      const uint row = p.b_offset + j * p.b_row_stride;  // element index of b[j, 0]
      if (p.wide != 0u) {
        const uint per_unit = p.b_dtype == DTYPE_F32 ? 4u : 8u;
        const uint units = p.k / per_unit;
        const uint row_unit = row / per_unit;
        for (uint u = lane; u < units; u += lanes) {
          const uvec4 v = b4[row_unit + u];
          float w[8];
          if (p.b_dtype == DTYPE_F32) {
            w[0] = uintBitsToFloat(v.x);
            w[1] = uintBitsToFloat(v.y);
            w[2] = uintBitsToFloat(v.z);
            w[3] = uintBitsToFloat(v.w);
            w[4] = 0.0;
            w[5] = 0.0;
            w[6] = 0.0;
            w[7] = 0.0;
          } else {
            [[unroll]] for (uint q = 0u; q < 4u; ++q) {
              w[2u * q] = half_to_f32(p.b_dtype, v[q]);
              w[2u * q + 1u] = half_to_f32(p.b_dtype, v[q] >> 16u);
            }
          }
          fma_rows(acc, u * per_unit, w, per_unit);
        }
      } else {
        for (uint l = lane; l < p.k; l += lanes) {
          const float wv = load_b(p.b_dtype, row + l);
          [[unroll]] for (uint i = 0u; i < MAX_M; ++i) {
            if (i < p.m) acc[i] += load_a(p.a_dtype, p.a_offset + i * p.a_row_stride + l) * wv;
          }
        }
      }
    }
    barrier();  // the previous column's results have been read from partial
    if (p.m == 1u) {
      partial[0][gl_LocalInvocationID.x] = acc[0];
    } else {
      [[unroll]] for (uint i = 0u; i < MAX_M; ++i) partial[i][gl_LocalInvocationID.x] = acc[i];
    }
    barrier();
    for (uint s = lanes >> 1u; s > 0u; s >>= 1u) {
      if (lane < s && p.m == 1u) {
        partial[0][gl_LocalInvocationID.x] += partial[0][gl_LocalInvocationID.x + s];
      } else if (lane < s) {
        [[unroll]] for (uint i = 0u; i < MAX_M; ++i) {
          if (i < p.m) partial[i][gl_LocalInvocationID.x] += partial[i][gl_LocalInvocationID.x + s];
        }
      }
      barrier();
    }
    if (j < p.n && lane < p.m) {
      const uint at = p.c_offset + lane * p.c_row_stride + j;
      float result = p.alpha * partial[lane][seg_base];
      if (p.beta != 0.0) result += p.beta * load_c(p.c_dtype, at);
      store_c(at, result);
    }
  }
}
