// exact_float.glsl — float arithmetic the shaders need bit-exact, on drivers that only promise
// Vulkan's minimum precision: x * y and x + y are correctly rounded, x / y is only within 2.5 ULP,
// and fma may be split into a rounded multiply and add (lavapipe splits it). `precise` keeps every
// step IEEE (no reassociation, no contraction).
#ifndef HWINFER_EXACT_FLOAT_GLSL_
#define HWINFER_EXACT_FLOAT_GLSL_

// Dekker's exact product: a * b == result.x + result.y (no fma).
vec2 two_product(float a, float b) {
  precise float p = a * b;
  precise float ca = 4097.0 * a;
  precise float a_hi = ca - (ca - a);
  precise float a_lo = a - a_hi;
  precise float cb = 4097.0 * b;
  precise float b_hi = cb - (cb - b);
  precise float b_lo = b - b_hi;
  precise float e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
  return vec2(p, e);
}

// a / b rounded to nearest as C's float division rounds it (for normal, finite a / b): the
// driver's quotient q, then q + (a - q b) / b with the remainder a - q b computed exactly; the
// correction's own error is about 1e-6 ULP of the quotient, so only a quotient that close to a
// halfway point between two floats could still round the other way. Where Dekker's split
// overflows (|q| or |b| above ~1e34) the driver's quotient is returned as it is.
float divide_rounded(float a, float b) {
  precise float q = a / b;
  const vec2 qb = two_product(q, b);
  precise float remainder = (a - qb.x) - qb.y;
  precise float result = q + remainder / b;
  return isnan(result) || isinf(result) ? q : result;
}

#endif  // HWINFER_EXACT_FLOAT_GLSL_
