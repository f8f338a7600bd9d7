// weight_blocks.glsl — value i of one GGML weight block, for every block type of plugin.h (ABI
// 1.2), read from raw bytes: the block starts at byte |b| of WEIGHT_WORDS (a uint[] buffer the
// includer names with `#define WEIGHT_WORDS <buffer>` first) at ANY byte alignment. Each function
// is the oracle's formula (sdk/reference/weight_blocks.cpp) in f32; every product in them
// is exact in f32 (binary16 scale times small integers) but Q6_K's, which is rounded once as the
// oracle rounds its double to float, so the values are the oracle's bit for bit.
//
// A shader compiled per type (glslc -DWTYPE=<HWINFER_DTYPE_* id>, CMakeLists.txt's weight_types)
// gets WEIGHT_BLOCK_VALUES, WEIGHT_BLOCK_BYTES and weight_value(b, i) for that type; any shader
// may call block_value(dtype, b, i) to pick the type at run time (embedding.comp).
// Adding a type: one *_value function below, one case in block_value, one #elif, one CMake entry.
#ifndef HWINFER_WEIGHT_BLOCKS_GLSL_
#define HWINFER_WEIGHT_BLOCKS_GLSL_

#define DTYPE_Q4_0 2u
#define DTYPE_Q4_1 3u
#define DTYPE_Q5_0 6u
#define DTYPE_Q5_1 7u
#define DTYPE_Q8_0 8u
#define DTYPE_Q2_K 10u
#define DTYPE_Q3_K 11u
#define DTYPE_Q4_K 12u
#define DTYPE_Q5_K 13u
#define DTYPE_Q6_K 14u
#define DTYPE_IQ4_NL 20u

uint wb_u8(uint b) { return (WEIGHT_WORDS[b >> 2u] >> ((b & 3u) * 8u)) & 0xFFu; }

uint wb_u16(uint b) {
  if ((b & 3u) == 3u) return wb_u8(b) | (wb_u8(b + 1u) << 8u);
  return (WEIGHT_WORDS[b >> 2u] >> ((b & 3u) * 8u)) & 0xFFFFu;
}

float wb_half(uint b) { return unpackHalf2x16(wb_u16(b)).x; }

int wb_i8(uint b) { return bitfieldExtract(int(wb_u8(b)), 0, 8); }

// The 4-bit value i (0..31) of a 32-value block whose 16 bytes of nibbles start at |qs|: low
// nibbles hold values 0..15, high nibbles 16..31.
uint wb_nibble32(uint qs, uint i) {
  const uint byte_ = wb_u8(qs + (i & 15u));
  return i < 16u ? byte_ & 0xFu : byte_ >> 4u;
}

// 32-value blocks: f16 d [, f16 m] [, u32 qh], then the quants.
float q4_0_value(uint b, uint i) { return wb_half(b) * float(int(wb_nibble32(b + 2u, i)) - 8); }

float q4_1_value(uint b, uint i) {
  return wb_half(b) * float(wb_nibble32(b + 4u, i)) + wb_half(b + 2u);
}

// Q5_0 / Q5_1: the fifth bit of value i is bit i of the little-endian u32 qh.
uint q5_quant(uint qh, uint i) {
  return wb_nibble32(qh + 4u, i) | (((wb_u8(qh + (i >> 3u)) >> (i & 7u)) & 1u) << 4u);
}

float q5_0_value(uint b, uint i) { return wb_half(b) * float(int(q5_quant(b + 2u, i)) - 16); }

float q5_1_value(uint b, uint i) {
  return wb_half(b) * float(q5_quant(b + 4u, i)) + wb_half(b + 2u);
}

float q8_0_value(uint b, uint i) { return wb_half(b) * float(wb_i8(b + 2u + i)); }

const int kIq4NlValues[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53,
                                     69, 89, 113);  // HWINFER_IQ4_NL_VALUES

float iq4_nl_value(uint b, uint i) {
  return wb_half(b) * float(kIq4NlValues[wb_nibble32(b + 2u, i)]);
}

// 256-value super-blocks (the K-quants).
// The 2-bit value i (0..255) of Q2_K / Q3_K's qs (64 bytes from |qs|).
uint crumb256(uint qs, uint i) {
  const uint r = i & 127u;
  return (wb_u8(qs + 32u * (i >> 7u) + (r & 31u)) >> (2u * (r >> 5u))) & 3u;
}

// Q2_K (84 bytes): scales[16] (low nibble sc, high nibble mn), qs[64], f16 d, f16 dmin.
float q2_k_value(uint b, uint i) {
  const uint sc = wb_u8(b + (i >> 4u));
  return wb_half(b + 80u) * float(sc & 15u) * float(crumb256(b + 16u, i)) -
         wb_half(b + 82u) * float(sc >> 4u);
}

// Q3_K (110 bytes): hmask[32], qs[64], scales[12] (6-bit, packed), f16 d.
float q3_k_value(uint b, uint i) {
  const uint scales = b + 96u;
  const uint s = i >> 4u;
  const uint low = s < 8u ? wb_u8(scales + s) & 15u : wb_u8(scales + s - 8u) >> 4u;
  const uint high = (wb_u8(scales + 8u + (s & 3u)) >> (2u * (s >> 2u))) & 3u;
  const uint bit = (wb_u8(b + (i & 31u)) >> (i >> 5u)) & 1u;
  const int q = int(crumb256(b + 32u, i)) - (bit != 0u ? 0 : 4);
  return wb_half(b + 108u) * float(int(low | (high << 4u)) - 32) * float(q);
}

// Q4_K / Q5_K's 6-bit scale (x) and min (y) of sub-block s (0..7) from scales[12] at |scales|.
uvec2 scale_min_k4(uint scales, uint s) {
  if (s < 4u) return uvec2(wb_u8(scales + s) & 63u, wb_u8(scales + s + 4u) & 63u);
  const uint packed = wb_u8(scales + s + 4u);
  return uvec2((packed & 15u) | ((wb_u8(scales + s - 4u) >> 6u) << 4u),
               (packed >> 4u) | ((wb_u8(scales + s) >> 6u) << 4u));
}

// Q4_K (144 bytes): f16 d, f16 dmin, scales[12], qs[128]; Q5_K (176): the same with qh[32]
// before qs.
float q45_k_value(uint b, uint i, bool q5) {
  const uint byte_ = wb_u8(b + (q5 ? 48u : 16u) + 32u * (i >> 6u) + (i & 31u));
  uint q = (i & 63u) < 32u ? byte_ & 15u : byte_ >> 4u;
  if (q5) q += ((wb_u8(b + 16u + (i & 31u)) >> (i >> 5u)) & 1u) << 4u;
  const uvec2 sm = scale_min_k4(b + 4u, i >> 5u);
  return wb_half(b) * float(sm.x) * float(q) - wb_half(b + 2u) * float(sm.y);
}

float q4_k_value(uint b, uint i) { return q45_k_value(b, i, false); }
float q5_k_value(uint b, uint i) { return q45_k_value(b, i, true); }

// Q6_K (210 bytes): ql[128] (low 4 bits), qh[64] (high 2 bits), int8 scales[16], f16 d.
float q6_k_value(uint b, uint i) {
  const uint h = i >> 7u, r = i & 127u, l = r & 31u, t = r >> 5u;
  const uint low_byte = wb_u8(b + 64u * h + l + 32u * (t & 1u));
  const uint low = t < 2u ? low_byte & 15u : low_byte >> 4u;
  const uint high = (wb_u8(b + 128u + 32u * h + l) >> (2u * t)) & 3u;
  return (wb_half(b + 208u) * float(wb_i8(b + 192u + (i >> 4u)))) *
         float(int(low | (high << 4u)) - 32);
}

// Value i of the block of |dtype| at byte b (0 for a dtype that is not a block type).
float block_value(uint dtype, uint b, uint i) {
  switch (dtype) {
    case DTYPE_Q4_0: return q4_0_value(b, i);
    case DTYPE_Q4_1: return q4_1_value(b, i);
    case DTYPE_Q5_0: return q5_0_value(b, i);
    case DTYPE_Q5_1: return q5_1_value(b, i);
    case DTYPE_Q8_0: return q8_0_value(b, i);
    case DTYPE_IQ4_NL: return iq4_nl_value(b, i);
    case DTYPE_Q2_K: return q2_k_value(b, i);
    case DTYPE_Q3_K: return q3_k_value(b, i);
    case DTYPE_Q4_K: return q4_k_value(b, i);
    case DTYPE_Q5_K: return q5_k_value(b, i);
    case DTYPE_Q6_K: return q6_k_value(b, i);
    default: return 0.0;
  }
}

#ifdef WTYPE
#if WTYPE == 2
#define weight_value q4_0_value
#define WEIGHT_BLOCK_BYTES 18u
#elif WTYPE == 3
#define weight_value q4_1_value
#define WEIGHT_BLOCK_BYTES 20u
#elif WTYPE == 6
#define weight_value q5_0_value
#define WEIGHT_BLOCK_BYTES 22u
#elif WTYPE == 7
#define weight_value q5_1_value
#define WEIGHT_BLOCK_BYTES 24u
#elif WTYPE == 8
#define weight_value q8_0_value
#define WEIGHT_BLOCK_BYTES 34u
#elif WTYPE == 20
#define weight_value iq4_nl_value
#define WEIGHT_BLOCK_BYTES 18u
#elif WTYPE == 10
#define weight_value q2_k_value
#define WEIGHT_BLOCK_BYTES 84u
#elif WTYPE == 11
#define weight_value q3_k_value
#define WEIGHT_BLOCK_BYTES 110u
#elif WTYPE == 12
#define weight_value q4_k_value
#define WEIGHT_BLOCK_BYTES 144u
#elif WTYPE == 13
#define weight_value q5_k_value
#define WEIGHT_BLOCK_BYTES 176u
#elif WTYPE == 14
#define weight_value q6_k_value
#define WEIGHT_BLOCK_BYTES 210u
#else
#error "weight_blocks.glsl: WTYPE is not a block type"
#endif
#if WTYPE >= 10 && WTYPE <= 14
#define WEIGHT_BLOCK_VALUES 256u
#else
#define WEIGHT_BLOCK_VALUES 32u
#endif
#endif  // WTYPE

#endif  // HWINFER_WEIGHT_BLOCKS_GLSL_
