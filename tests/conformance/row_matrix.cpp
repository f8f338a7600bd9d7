// row_matrix.cpp — see row_matrix.h.
#include "row_matrix.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "conformance_fixture.h"
#include "hwinfer/tensor_view.h"
#include "reference/half.h"

namespace hwinfer::conformance {

namespace {
constexpr uint64_t kBackGuardBytes = 256;
}  // namespace

double MaxNmse(uint32_t dtype) { return dtype == HWINFER_DTYPE_F16 ? kMaxNmseF16 : kMaxNmseF32; }

RowMatrix::RowMatrix(uint32_t dtype_in, int64_t rows_in, int64_t cols_in, int64_t pad,
                     uint64_t front)
    : dtype(dtype_in), rows(rows_in), cols(cols_in), stride(cols_in + pad), offset(front) {
  const uint64_t span = static_cast<uint64_t>((rows - 1) * stride + cols) * ElementBytes();
  image.assign(offset + span + kBackGuardBytes, kPoisonByte);
}

size_t RowMatrix::ElementBytes() const { return dtype == HWINFER_DTYPE_F16 ? 2 : 4; }

size_t RowMatrix::ByteAt(int64_t row, int64_t col) const {
  return offset + static_cast<size_t>(row * stride + col) * ElementBytes();
}

float RowMatrix::Get(const std::vector<uint8_t>& bytes, int64_t row, int64_t col) const {
  if (dtype == HWINFER_DTYPE_F16) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + ByteAt(row, col), sizeof(h));
    return reference::f16_to_f32(h);
  }
  float value;
  std::memcpy(&value, bytes.data() + ByteAt(row, col), sizeof(value));
  return value;
}

void RowMatrix::Set(int64_t row, int64_t col, float value) {
  if (dtype == HWINFER_DTYPE_F16) {
    const uint16_t h = reference::f32_to_f16(value);
    std::memcpy(image.data() + ByteAt(row, col), &h, sizeof(h));
    return;
  }
  std::memcpy(image.data() + ByteAt(row, col), &value, sizeof(value));
}

void RowMatrix::FillRandom(std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> uniform(lo, hi);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) Set(r, c, uniform(rng));
  }
}

void RowMatrix::FillNan() {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) Set(r, c, std::numeric_limits<float>::quiet_NaN());
  }
}

std::vector<float> RowMatrix::Dense(const std::vector<uint8_t>& bytes) const {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(r * cols + c)] = Get(bytes, r, c);
  }
  return out;
}

hwinfer_tensor_view RowMatrix::View(const Buffer& buffer, bool rank1) const {
  if (rank1) return ContiguousView(buffer, offset, dtype, {cols});
  hwinfer_tensor_view view = ContiguousView(buffer, offset, dtype, {rows, cols});
  view.strides_bytes[0] = stride * static_cast<int64_t>(ElementBytes());
  return view;
}

testing::AssertionResult RowMatrix::OnlyElementsChanged(const std::vector<uint8_t>& after,
                                                        const std::string& what) const {
  if (after.size() != image.size()) {
    return testing::AssertionFailure() << what << ": buffer size changed";
  }
  std::vector<uint8_t> masked = after;
  for (int64_t r = 0; r < rows; ++r) {
    const size_t start = ByteAt(r, 0);
    std::memcpy(masked.data() + start, image.data() + start,
                static_cast<size_t>(cols) * ElementBytes());
  }
  return BytesEqual(masked.data(), image.data(), image.size(),
                    what + " outside the view's elements (guards and row padding)");
}

StatusOr<Buffer> UploadImage(Device& device, Stream& stream, const std::vector<uint8_t>& image) {
  HWINFER_ASSIGN_OR_RETURN(Buffer buffer, device.Allocate(image.size()));
  HWINFER_RETURN_IF_ERROR(Upload(stream, buffer, image));
  return buffer;
}

void ExpectNmse(const std::vector<float>& got, const std::vector<float>& ref, double max_nmse,
                const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double err2 = 0, ref2 = 0;
  size_t non_finite = 0, first_non_finite = 0, worst = 0;
  double worst_diff = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      if (non_finite++ == 0) first_non_finite = i;
      continue;
    }
    const double diff = static_cast<double>(got[i]) - static_cast<double>(ref[i]);
    err2 += diff * diff;
    ref2 += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
    if (std::abs(diff) > worst_diff) {
      worst_diff = std::abs(diff);
      worst = i;
    }
  }
  EXPECT_EQ(non_finite, 0u) << what << ": " << non_finite << " of " << got.size()
                            << " outputs are not finite; first at flat index " << first_non_finite
                            << " = " << got[first_non_finite];
  if (non_finite > 0) return;
  const double nmse = ref2 > 0 ? err2 / ref2 : err2;
  EXPECT_LE(nmse, max_nmse) << fmt::format(
      "{}: NMSE sum((x-ref)^2)/sum(ref^2) over {} outputs; worst at flat index {}: {:.9g} vs "
      "reference {:.9g}",
      what, got.size(), worst, got[worst], ref[worst]);
}

}  // namespace hwinfer::conformance
