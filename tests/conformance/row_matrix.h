// row_matrix.h — host-side operands for the per-token kernel suites (rms_norm, silu_mul, ...):
// a [rows, cols] F32 | F16 row-major matrix placed in a buffer image with a poisoned front guard,
// optional poisoned row padding and a poisoned back guard, and the NMSE comparison with the
// tolerances of every per-token suite (one place: kMaxNmseF32 / kMaxNmseF16).
//
// Must not decide whether a failure is allowed: it only builds operands and reports.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hwinfer/device.h"

namespace hwinfer::conformance {

// NMSE = sum((x - ref)^2) / sum(ref^2) allowed for an output stored as F32 (only f32 rounding of
// the same formula: ~1e-13 in practice) and as F16 (a last-bit difference where the f32 and double
// values round to different halves: ~1e-9 in practice; one wrong element in a row of 64 is ~1e-2).
constexpr double kMaxNmseF32 = 1e-10;
constexpr double kMaxNmseF16 = 1e-6;
double MaxNmse(uint32_t dtype);

struct RowMatrix {
  uint32_t dtype = HWINFER_DTYPE_F32;
  int64_t rows = 0, cols = 0, stride = 0;  // stride in elements (>= cols)
  uint64_t offset = 0;                     // front guard, bytes
  std::vector<uint8_t> image;              // the whole buffer, poison outside the elements

  RowMatrix(uint32_t dtype, int64_t rows, int64_t cols, int64_t pad = 0, uint64_t front = 64);
  size_t ElementBytes() const;
  size_t ByteAt(int64_t row, int64_t col) const;
  float Get(const std::vector<uint8_t>& bytes, int64_t row, int64_t col) const;
  // Stores |value| (rounded to f16 for F16).
  void Set(int64_t row, int64_t col, float value);
  // Uniform in [lo, hi).
  void FillRandom(std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f);
  void FillNan();
  // The elements as floats, dense (leading dimension = cols).
  std::vector<float> Dense(const std::vector<uint8_t>& bytes) const;
  // A 2-D view; with rank1, a 1-D view of row 0 ([cols]).
  hwinfer_tensor_view View(const Buffer& buffer, bool rank1 = false) const;
  // |after| equals |image| outside the elements (guards and row padding untouched).
  testing::AssertionResult OnlyElementsChanged(const std::vector<uint8_t>& after,
                                               const std::string& what) const;
};

// Allocates a buffer of image.size() bytes and uploads |image|.
StatusOr<Buffer> UploadImage(Device& device, Stream& stream, const std::vector<uint8_t>& image);

// Every element of |got| finite and NMSE(got, ref) <= |max_nmse|; names |what| in failures.
void ExpectNmse(const std::vector<float>& got, const std::vector<float>& ref, double max_nmse,
                const std::string& what);

}  // namespace hwinfer::conformance
