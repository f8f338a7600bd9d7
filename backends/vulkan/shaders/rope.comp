#version 450
// rope.comp — rotary position embedding IN PLACE on q and (optionally) k (plugin.h):
//   theta_i = positions[t] * theta_base^(-2i / rotary_dim), i < rotary_dim / 2 = half;
//   NORMAL rotates pairs (2i, 2i+1), NEOX pairs (i, i + half); dimensions past rotary_dim are
//   untouched.
// q: [n_tokens, n_heads, head_dim], k: [n_tokens, n_kv_heads, head_dim] F32 | F16 each (innermost
// contiguous; offsets and strides in elements of each operand's dtype); positions: [n_tokens] I32.
// inv_freq[i] arrives from the host as a float pair (hi, lo) = theta_base^(-2i/rotary_dim) in
// double; the angle is reduced modulo 2*pi in float-float arithmetic (Dekker products) so that
// large positions keep an absolute angle error near 1e-7 (the CPU computes it in double), and
// sin/cos are Cephes polynomials (driver sin/cos may be inaccurate).
// F16 elements are written with atomics on their own half-word (common.glsl), so pairs that share
// words never race. x: the (head, pair) units of a token (grid-stride); y: tokens.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "exact_float.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) coherent buffer Q { uint q[]; };
layout(std430, binding = 1) coherent buffer K { uint k[]; };
layout(std430, binding = 2) readonly buffer Positions { int positions[]; };
layout(std430, binding = 3) readonly buffer InvFreq { vec2 inv_freq[]; };

layout(push_constant) uniform Params {
  uint n_tokens;
  uint n_heads;
  uint n_kv_heads;  // 0 when k is absent (binding 1 then aliases q, never touched)
  uint half_;
  uint neox;
  uint q_offset;
  uint q_token_stride;
  uint q_head_stride;
  uint q_f16;
  uint k_offset;
  uint k_token_stride;
  uint k_head_stride;
  uint k_f16;
  uint positions_offset;
  uint positions_stride;
} p;

HWINFER_DEFINE_LOAD(load_q, q)
HWINFER_DEFINE_LOAD(load_k, k)
HWINFER_DEFINE_STORE_HALF_WORD(store_q_word, q)
HWINFER_DEFINE_STORE_HALF_WORD(store_k_word, k)

void store_q(bool is_f16, uint index, float v) {
  if (is_f16) {
    store_q_word(index >> 1u, (index & 1u) == 0u, v, (index & 1u) != 0u, v);
  } else {
    q[index] = floatBitsToUint(v);
  }
}

void store_k(bool is_f16, uint index, float v) {
  if (is_f16) {
    store_k_word(index >> 1u, (index & 1u) == 0u, v, (index & 1u) != 0u, v);
  } else {
    k[index] = floatBitsToUint(v);
  }
}

// position * (hi + lo) reduced to about [-pi, pi], in float-float arithmetic.
float reduced_angle(float position, vec2 f) {
  const float kTwoPi1 = 6.28318548202514648438;    // float(2 pi)
  const float kTwoPi2 = -1.74845553146951715e-07;  // float(2 pi - kTwoPi1)
  const vec2 product = two_product(position, f.x);
  precise float n = round(product.x * 0.159154943091895335768);
  const vec2 whole_turns = two_product(n, kTwoPi1);
  precise float r = product.x - whole_turns.x;  // exact (Sterbenz)
  precise float tail = (product.y - whole_turns.y) + position * f.y - n * kTwoPi2;
  return r + tail;
}

// sin and cos of |r| (about [-pi, pi]) with Cephes' single-precision polynomials after a
// reduction to [-pi/4, pi/4] (the drivers' sin/cos may be far less accurate, lavapipe's is).
vec2 sin_cos(float r) {
  const float kHalfPi1 = 1.57079637050628662109;    // float(pi / 2)
  const float kHalfPi2 = -4.37113882867379489e-08;  // float(pi / 2 - kHalfPi1)
  precise float j = round(r * 0.636619772367581343076);  // |j| <= 2: j * kHalfPi1 nearly exact
  const vec2 turns = two_product(j, kHalfPi1);
  precise float y = (r - turns.x) - turns.y - j * kHalfPi2;
  const float z = y * y;
  const float s = y + y * z * ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1);
  const float c =
      1.0 - 0.5 * z + z * z * ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z +
                               4.166664568298827e-2);
  const int quadrant = int(j) & 3;
  if (quadrant == 0) return vec2(s, c);
  if (quadrant == 1) return vec2(c, -s);
  if (quadrant == 2) return vec2(-s, -c);
  return vec2(-c, s);
}

void main() {
  const uint stride = gl_NumWorkGroups.x * HWINFER_WORKGROUP_SIZE;
  const uint q_units = p.n_heads * p.half_;
  const uint units = (p.n_heads + p.n_kv_heads) * p.half_;
  const bool q_f16 = p.q_f16 != 0u;
  const bool k_f16 = p.k_f16 != 0u;
  for (uint t = gl_WorkGroupID.y; t < p.n_tokens; t += gl_NumWorkGroups.y) {
    const float position = float(positions[p.positions_offset + t * p.positions_stride]);
    for (uint u = gl_GlobalInvocationID.x; u < units; u += stride) {
      const bool is_q = u < q_units;
      const uint v = is_q ? u : u - q_units;
      const uint head = v / p.half_;
      const uint i = v % p.half_;
      const uint a_at = p.neox != 0u ? i : 2u * i;
      const uint b_at = p.neox != 0u ? i + p.half_ : 2u * i + 1u;
      const float angle = reduced_angle(position, inv_freq[i]);
      const vec2 sc = sin_cos(angle);
      const float s = sc.x;
      const float c = sc.y;
      if (is_q) {
        const uint base = p.q_offset + t * p.q_token_stride + head * p.q_head_stride;
        const float a = load_q(q_f16, base + a_at);
        const float b = load_q(q_f16, base + b_at);
        store_q(q_f16, base + a_at, a * c - b * s);
        store_q(q_f16, base + b_at, a * s + b * c);
      } else {
        const uint base = p.k_offset + t * p.k_token_stride + head * p.k_head_stride;
        const float a = load_k(k_f16, base + a_at);
        const float b = load_k(k_f16, base + b_at);
        store_k(k_f16, base + a_at, a * c - b * s);
        store_k(k_f16, base + b_at, a * s + b * c);
      }
    }
  }
}
