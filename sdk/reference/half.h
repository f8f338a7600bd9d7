// half.h — IEEE binary16 (f16) and bfloat16 (bf16) <-> f32 conversions, scalar and exact
// (round to nearest even; NaN stays NaN, infinities and subnormals are kept). Used by the reference
// kernels, the CPU plugin, the GGUF code and tests. Bit manipulation only: no SIMD here (optimised
// kernels may use F16C where the CPU has it and must match these results).
#ifndef HWINFER_SDK_REFERENCE_HALF_H_
#define HWINFER_SDK_REFERENCE_HALF_H_

#include <cstdint>
#include <cstring>

namespace hwinfer::reference {

inline float bits_to_f32(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline uint32_t f32_to_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return bits_to_f32(sign | 0x7f800000u | (mantissa << 13));  // inf / NaN
  if (exponent != 0) return bits_to_f32(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_to_f32(sign);  // +-0
  // Subnormal: value = mantissa * 2^-24.
  int shift = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  mantissa &= 0x3ffu;
  return bits_to_f32(sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13));
}

inline uint16_t f32_to_f16(float value) {
  const uint32_t bits = f32_to_bits(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: value / 2^-24, rounded to nearest even.
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // 14..24 for exponent 102..112
    uint32_t half = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  // Normal: rebias the exponent and round the mantissa to 10 bits, nearest even.
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

// |value| as binary16 into the two bytes at |at| (little-endian as GGUF stores it, any alignment).
inline void put_f16(uint8_t* at, float value) {
  const uint16_t h = f32_to_f16(value);
  std::memcpy(at, &h, sizeof(h));
}

inline float bf16_to_f32(uint16_t b) { return bits_to_f32(static_cast<uint32_t>(b) << 16); }

inline uint16_t f32_to_bf16(float value) {
  const uint32_t bits = f32_to_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_HALF_H_
