#version 450
// kv_append.comp — one side (k or v) of kv_append (plugin.h): the n_tokens new token-heads of src
// into the paged pool [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8, with the I8 pool's
// per-(block, head) F32 scales, exactly as the CPU backend (backends/cpu/kv_append.cpp):
//   F16: pool row = f16(x), round to nearest even (an F16 src is copied bit for bit);
//   I8:  absmax = max |x|; when absmax > scale * 127 the block-head's block_size rows are
//        requantized, q = quantize(q * old_scale, absmax / 127), and the scale becomes
//        absmax / 127; then the row is quantize(x, scale), quantize = clamp(roundEven(x / s),
//        -127, 127) (0 when s == 0).
// Tokens are appended in token order (a later token may rescale the block an earlier one wrote),
// so one workgroup owns a KV head (heads strided by gl_NumWorkGroups.x) and walks the tokens.
// A slot >= n_slots anywhere in slot_mapping sets error[0] and nothing is written (the host turns
// it into INVALID_ARGUMENT at the next synchronize, as the CPU backend reports it); a negative
// slot skips its token. Pool bytes and halves are stored with atomicAnd/atomicOr on their own
// bits only, so rows of neighbouring heads sharing a word never race.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = HWINFER_WORKGROUP_SIZE) in;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) readonly buffer Slots { int slots[]; };
layout(std430, binding = 2) coherent buffer Pool { uint pool[]; };
layout(std430, binding = 3) coherent buffer Scales { uint scales[]; };
layout(std430, binding = 4) buffer Error { uint error[]; };

layout(push_constant) uniform Params {
  uint n_tokens, n_kv_heads, head_dim, block_size, n_slots;
  uint slots_offset, slots_stride;
  uint src_offset, src_token_stride, src_head_stride, src_f16;  // elements of src's dtype
  uint pool_offset, pool_block_stride, pool_row_stride, pool_head_stride, pool_i8;  // elements
  uint scale_offset, scale_block_stride, scale_head_stride;  // elements (I8 pools only)
} p;

shared float s_max[HWINFER_WORKGROUP_SIZE];
shared uint s_bad;

// sdk/reference/half.h f32_to_f16, bit for bit.
uint f32_to_f16(float value) {
  const uint bits = floatBitsToUint(value);
  const uint sign = (bits >> 16u) & 0x8000u;
  const uint a = bits & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;
  if (a >= 0x477ff000u) return sign | 0x7c00u;
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return sign;
    const uint exponent = a >> 23u;
    const uint mantissa = (a & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - exponent;
    uint half_ = mantissa >> shift;
    const uint remainder = mantissa & ((1u << shift) - 1u);
    const uint halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half_ & 1u) != 0u)) ++half_;
    return sign | half_;
  }
  const uint rounded = a + 0xfffu + ((a >> 13u) & 1u);
  return sign | ((rounded - 0x38000000u) >> 13u);
}

uint src_half_bits(uint e) { return (src[e >> 1u] >> ((e & 1u) * 16u)) & 0xFFFFu; }

float load_src(uint e) {
  if (p.src_f16 != 0u) return unpackHalf2x16(src_half_bits(e)).x;
  return uintBitsToFloat(src[e]);
}

void store_half(uint e, uint bits) {
  const uint shift = (e & 1u) * 16u;
  atomicAnd(pool[e >> 1u], ~(0xFFFFu << shift));
  atomicOr(pool[e >> 1u], bits << shift);
}

int load_i8(uint b) { return bitfieldExtract(int(pool[b >> 2u]), int((b & 3u) * 8u), 8); }

void store_i8(uint b, int q) {
  const uint shift = (b & 3u) * 8u;
  atomicAnd(pool[b >> 2u], ~(0xFFu << shift));
  atomicOr(pool[b >> 2u], (uint(q) & 0xFFu) << shift);
}

int quantize(float x, float scale) {
  if (scale == 0.0) return 0;
  return int(clamp(roundEven(x / scale), -127.0, 127.0));
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  if (lid == 0u) s_bad = 0u;
  barrier();
  for (uint t = lid; t < p.n_tokens; t += HWINFER_WORKGROUP_SIZE) {
    const int slot = slots[p.slots_offset + t * p.slots_stride];
    if (slot >= 0 && uint(slot) >= p.n_slots) atomicOr(s_bad, 1u);
  }
  barrier();
  if (s_bad != 0u) {
    if (gl_WorkGroupID.x == 0u && lid == 0u) atomicOr(error[0], 1u);
    return;
  }
  for (uint head = gl_WorkGroupID.x; head < p.n_kv_heads; head += gl_NumWorkGroups.x) {
    for (uint t = 0u; t < p.n_tokens; ++t) {
      const int slot = slots[p.slots_offset + t * p.slots_stride];
      if (slot < 0) continue;  // uniform: every invocation reads the same slot
      const uint block = uint(slot) / p.block_size;
      const uint row = uint(slot) % p.block_size;
      const uint x0 = p.src_offset + t * p.src_token_stride + head * p.src_head_stride;
      const uint block_head = p.pool_offset + block * p.pool_block_stride + head * p.pool_head_stride;
      const uint dst = block_head + row * p.pool_row_stride;
      if (p.pool_i8 == 0u) {
        for (uint d = lid; d < p.head_dim; d += HWINFER_WORKGROUP_SIZE) {
          const uint bits = p.src_f16 != 0u ? src_half_bits(x0 + d) : f32_to_f16(load_src(x0 + d));
          store_half(dst + d, bits);
        }
        continue;
      }
      float m = 0.0;
      for (uint d = lid; d < p.head_dim; d += HWINFER_WORKGROUP_SIZE) {
        m = max(m, abs(load_src(x0 + d)));
      }
      s_max[lid] = m;
      barrier();
      for (uint s = HWINFER_WORKGROUP_SIZE / 2u; s > 0u; s >>= 1u) {
        if (lid < s) s_max[lid] = max(s_max[lid], s_max[lid + s]);
        barrier();
      }
      const float absmax = s_max[0];
      const uint scale_index = p.scale_offset + block * p.scale_block_stride +
                               head * p.scale_head_stride;
      float scale = uintBitsToFloat(scales[scale_index]);
      barrier();  // s_max[0] and the scale are read before anyone changes them
      if (absmax > scale * 127.0) {
        const float new_scale = absmax / 127.0;
        const uint n = p.block_size * p.head_dim;
        for (uint e = lid; e < n; e += HWINFER_WORKGROUP_SIZE) {
          const uint b = block_head + (e / p.head_dim) * p.pool_row_stride + e % p.head_dim;
          store_i8(b, quantize(float(load_i8(b)) * scale, new_scale));
        }
        memoryBarrierBuffer();
        barrier();
        if (lid == 0u) scales[scale_index] = floatBitsToUint(new_scale);
        scale = new_scale;
      }
      for (uint d = lid; d < p.head_dim; d += HWINFER_WORKGROUP_SIZE) {
        store_i8(dst + d, quantize(load_src(x0 + d), scale));
      }
      memoryBarrierBuffer();
      barrier();  // the next token sees this token's rows and scale
    }
  }
}
