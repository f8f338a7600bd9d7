// common.glsl — what every hwinfer compute shader shares (the dispatch convention of
// ../dispatch.h): each operand is a storage buffer bound at its view's offset rounded DOWN to the
// device's minStorageBufferOffsetAlignment; the remainder (in elements), the shapes and the
// strides (in elements) arrive in push constants. Rows are walked with a stride of
// gl_NumWorkGroups so any row count fits the device's workgroup-count limit.
//
// F32/F16 operands: buffers are declared as uint[] (no 16-bit storage feature needed); an F16
// element index i lives in word i >> 1, low half when i is even. F16 stores go a whole word at a
// time: one invocation writes both halves of a word whose halves are both in its row
// (HWINFER_STORE_HALF_WORD); a word shared with a neighbouring row or with bytes outside the view
// is updated with atomicAnd/atomicOr on its own half only, so neighbours never race.
#ifndef HWINFER_COMMON_GLSL_
#define HWINFER_COMMON_GLSL_

#define HWINFER_WORKGROUP_SIZE 256

// float NAME(bool is_f16, uint index): element |index| (in elements of the dtype) of BUF.
#define HWINFER_DEFINE_LOAD(NAME, BUF)                          \
  float NAME(bool is_f16, uint index) {                         \
    if (is_f16) {                                               \
      const vec2 pair = unpackHalf2x16(BUF[index >> 1u]);       \
      return (index & 1u) != 0u ? pair.y : pair.x;              \
    }                                                           \
    return uintBitsToFloat(BUF[index]);                         \
  }

// void NAME(uint word, bool has_lo, float lo, bool has_hi, float hi): F16 halves of word |word|
// of BUF; a half whose has_ flag is false is left as it is (atomically, see above).
#define HWINFER_DEFINE_STORE_HALF_WORD(NAME, BUF)                                  \
  void NAME(uint word, bool has_lo, float lo, bool has_hi, float hi) {             \
    const uint packed = packHalf2x16(vec2(lo, hi));                                \
    if (has_lo && has_hi) {                                                        \
      BUF[word] = packed;                                                          \
    } else if (has_lo) {                                                           \
      atomicAnd(BUF[word], 0xFFFF0000u);                                           \
      atomicOr(BUF[word], packed & 0x0000FFFFu);                                   \
    } else if (has_hi) {                                                           \
      atomicAnd(BUF[word], 0x0000FFFFu);                                           \
      atomicOr(BUF[word], packed & 0xFFFF0000u);                                   \
    }                                                                              \
  }

// Store units of a row of |n| elements starting at element |base|: an F32 row has n units (one
// element each); an F16 row has one unit per 32-bit word it touches.
uint hwinfer_units(bool is_f16, uint base, uint n) {
  return is_f16 ? ((base + n - 1u) >> 1u) - (base >> 1u) + 1u : n;
}

// The row element indices (may be out of [0, n): skip those) of unit |u|: x = first, y = second
// (F16 only; for F32 y is n, out of range).
uvec2 hwinfer_unit_elements(bool is_f16, uint base, uint n, uint u) {
  if (!is_f16) return uvec2(u, n);
  const uint word = (base >> 1u) + u;
  // 2*word - base may be -1 (as uint: huge, i.e. out of range) for the first word of an odd base.
  return uvec2(2u * word - base, 2u * word + 1u - base);
}

#endif
