// gemm_case.h — one GEMM conformance case (each operand F32, F16 or BF16): build the operands (each
// view inside a larger buffer: poisoned front guard, optional row padding, poisoned back guard),
// launch the backend's gemm, and compare with the CPU scalar reference
// (hwinfer::reference::gemm_reference_f32).
//
//   a: [m, k]   b: [k, n] (b_transposed = 0) or [n, k] (b_transposed = 1)   c: [m, n]
//   c = alpha * a @ B + beta * c
//
// Checks: NMSE = sum((x - ref)^2) / sum(ref^2) <= 1e-10 (c F32; c F16/BF16: <= u^2, u its unit
// roundoff, since the backend may round its f32 result to c once more than the double reference),
// every element within a forward-error bound 2 (k + 2) eps (|alpha| sum_p |a_ip b_pj| +
// |beta c_ij|) plus, for half c, 2 u |ref| (both sides may round), every element finite (c is
// poisoned with NaN when beta = 0), inputs unchanged, and no byte of c's buffer outside the view's
// elements touched. Must not decide whether a failed case is allowed: it only reports.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "hwinfer/device.h"

namespace hwinfer::conformance {

struct GemmCase {
  int64_t m = 1, n = 1, k = 1;
  bool b_transposed = false;
  uint32_t a_dtype = HWINFER_DTYPE_F32, b_dtype = HWINFER_DTYPE_F32, c_dtype = HWINFER_DTYPE_F32;
  float alpha = 1.0f;
  float beta = 0.0f;
  // Extra elements after each row of a, b and c (row stride = columns + pad), left poisoned.
  int64_t pad_a = 0, pad_b = 0, pad_c = 0;
  // Where each view starts in its buffer: the front guard, in bytes (a multiple of 4).
  uint64_t offset_bytes = 64;

  // "17x33x65 b_transposed=1 alpha=1 beta=0" (+ " a/b/c f32/f16/f32" when not all f32)
  std::string Describe() const;
};

struct GemmOutcome {
  bool ran = false;          // launched and checked (the checks report through GoogleTest)
  bool unsupported = false;  // the device answered UNSUPPORTED for this case
  std::string reason;        // the plugin's reason when unsupported
};

// Runs and checks one case. Inputs are uniform in [-1, 1) from |rng|. Failures are reported with
// EXPECT/ADD_FAILURE and carry the case; the caller adds the seed with SCOPED_TRACE.
GemmOutcome RunGemmCase(Device& device, Stream& stream, const GemmCase& gemm, std::mt19937_64& rng);

}  // namespace hwinfer::conformance
