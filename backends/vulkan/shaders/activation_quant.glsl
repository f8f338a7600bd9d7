// activation_quant.glsl — the rules by which matmul_quantized's decode path quantizes x, as the
// CPU backend and llama.cpp do (sdk/reference/weight_blocks.cpp
// quantize_activation_block), with every division rounded as C rounds it (exact_float.glsl: a
// driver's division is only within 2.5 ULP, and one ULP moves a value near a tie to the other
// integer). Scales stay f32 (llama.cpp stores Q8_0 / Q8_1 scales as binary16; the conformance
// suite's f32-scale model covers this).
#ifndef HWINFER_ACTIVATION_QUANT_GLSL_
#define HWINFER_ACTIVATION_QUANT_GLSL_

#include "exact_float.glsl"

// std::lround: nearest, ties away from zero (a + 0.5 would round up 0.49999997).
int round_away(float v) {
  const float a = abs(v);
  float t = trunc(a);
  if (a - t >= 0.5) t += 1.0;
  return int(v < 0.0 ? -t : t);
}

// Q8_0 / Q8_1 (blocks of 32): d = amax / 127, id = 1 / d (0 when d is 0); q = round_away(x id).
vec2 q8_0_scale_and_inverse(float amax) {
  const float d = divide_rounded(amax, 127.0);
  return vec2(d, d != 0.0 ? divide_rounded(1.0, d) : 0.0);
}

// Q8_K (blocks of 256): |max| is the value of largest magnitude (the first one, with its sign);
// iscale = -127 / max, q = min(127, rint(iscale x)) (ties to even), d = 1 / iscale; all 0 when
// max is 0.
vec2 q8_k_scale_and_inverse(float max_value) {
  if (max_value == 0.0) return vec2(0.0);
  const float iscale = divide_rounded(-127.0, max_value);
  return vec2(divide_rounded(1.0, iscale), iscale);
}

int q8_k_round(float v) { return min(127, int(roundEven(v))); }

#endif  // HWINFER_ACTIVATION_QUANT_GLSL_
