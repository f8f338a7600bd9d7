// paged_kv.glsl — reading the paged KV pools (plugin.h, "Paged KV-cache layout") in the attention
// shaders: pool [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8, declared as uint[] like
// every operand (common.glsl); an I8 pool's value is scales[block, head] * int8.
// Element indices are in elements of the pool's dtype (bytes for I8, halves for F16).
#ifndef HWINFER_PAGED_KV_GLSL_
#define HWINFER_PAGED_KV_GLSL_

// float NAME(bool is_i8, uint element, float scale): element |element| of POOL as a float; for
// an I8 pool |scale| is the element's (block, head) scale, for F16 it is ignored.
#define HWINFER_DEFINE_POOL_LOAD(NAME, POOL)                                             \
  float NAME(bool is_i8, uint element, float scale) {                                    \
    if (is_i8) {                                                                         \
      return scale *                                                                     \
             float(bitfieldExtract(int(POOL[element >> 2u]), int((element & 3u) * 8u), 8)); \
    }                                                                                    \
    const vec2 pair = unpackHalf2x16(POOL[element >> 1u]);                               \
    return (element & 1u) != 0u ? pair.y : pair.x;                                       \
  }

#endif
