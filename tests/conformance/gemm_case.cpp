// gemm_case.cpp — builds, launches and checks one GEMM case (F32/F16/BF16 operands) against the
// scalar reference.
// Must not skip or excuse anything itself: unsupported answers go back to the caller.
#include "gemm_case.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "conformance_fixture.h"
#include "hwinfer/tensor_view.h"
#include "reference/reference_matmul.h"

namespace hwinfer::conformance {
namespace {

constexpr uint64_t kBackGuardBytes = 256;
constexpr double kMaxNmse = 1e-10;

// A row-major F32/F16/BF16 matrix placed in a buffer image: poison everywhere, elements at
// offset + (row * stride + col) * element size.
struct Operand {
  int64_t rows = 0, cols = 0, stride = 0;  // stride in elements (>= cols)
  uint64_t offset = 0;
  uint32_t dtype = HWINFER_DTYPE_F32;
  size_t element_bytes = 4;
  std::vector<uint8_t> image;

  Operand(int64_t r, int64_t c, int64_t pad, uint64_t front, uint32_t type)
      : rows(r), cols(c), stride(c + pad), offset(front), dtype(type) {
    element_bytes = dtype == HWINFER_DTYPE_F32 ? 4 : 2;
    const uint64_t span = static_cast<uint64_t>((rows - 1) * stride + cols) * element_bytes;
    image.assign(offset + span + kBackGuardBytes, kPoisonByte);
  }
  size_t ByteAt(int64_t row, int64_t col) const {
    return offset + static_cast<size_t>(row * stride + col) * element_bytes;
  }
  float Get(const std::vector<uint8_t>& bytes, int64_t row, int64_t col) const {
    return static_cast<float>(reference::load_real(bytes.data() + ByteAt(row, col), 0, dtype));
  }
  // Stores |value| rounded to the dtype.
  void Set(int64_t row, int64_t col, float value) {
    reference::store_real(image.data() + ByteAt(row, col), 0, dtype, value);
  }
  // The elements as f32 (exact), densely packed (leading dimension = cols).
  std::vector<float> Dense(const std::vector<uint8_t>& bytes) const {
    std::vector<float> out(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(r * cols + c)] = Get(bytes, r, c);
    }
    return out;
  }
  // The elements in their own dtype, densely packed, as the reference takes them.
  std::vector<uint8_t> DenseRaw(const std::vector<uint8_t>& bytes) const {
    std::vector<uint8_t> out(static_cast<size_t>(rows * cols) * element_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(out.data() + static_cast<size_t>(r * cols) * element_bytes,
                  bytes.data() + ByteAt(r, 0), static_cast<size_t>(cols) * element_bytes);
    }
    return out;
  }
  hwinfer_tensor_view View(const Buffer& buffer) const {
    hwinfer_tensor_view view = ContiguousView(buffer, offset, dtype, {rows, cols});
    view.strides_bytes[0] = stride * static_cast<int64_t>(element_bytes);
    return view;
  }
};

// Unit roundoff of c's dtype (what one extra rounding of a correct f32 result may cost).
double UnitRoundoff(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F16:
      return 0x1p-11;
    case HWINFER_DTYPE_BF16:
      return 0x1p-8;
    default:
      return 0.0;
  }
}

void FillRandom(Operand& operand, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t r = 0; r < operand.rows; ++r) {
    for (int64_t c = 0; c < operand.cols; ++c) operand.Set(r, c, uniform(rng));
  }
}

// Checks |after| differs from |before| only inside the elements of |operand|.
testing::AssertionResult OnlyElementsChanged(const Operand& operand,
                                             const std::vector<uint8_t>& before,
                                             std::vector<uint8_t> after) {
  for (int64_t r = 0; r < operand.rows; ++r) {
    const size_t row_start = operand.ByteAt(r, 0);
    std::memcpy(after.data() + row_start, before.data() + row_start,
                static_cast<size_t>(operand.cols) * operand.element_bytes);
  }
  return BytesEqual(after.data(), before.data(), before.size(),
                    "c's buffer outside the view's elements (guards and row padding)");
}

// Unit roundoff a may take before the product: BF16 weights may run in their own precision, a
// rounded to BF16 (plugin.h), an error of at most u(bf16) * |a| * |b| per product.
double ActivationRoundoff(const GemmCase& gemm) {
  return gemm.b_dtype == HWINFER_DTYPE_BF16 && gemm.a_dtype != HWINFER_DTYPE_BF16
             ? UnitRoundoff(HWINFER_DTYPE_BF16)
             : 0.0;
}

// Compares the backend's c with the reference: finite, within the per-element bound, NMSE.
void CompareWithReference(const GemmCase& gemm, const std::vector<float>& got,
                          const std::vector<float>& ref, const std::vector<double>& bound) {
  const double a_roundoff = ActivationRoundoff(gemm);
  auto tolerance_at = [&](size_t i) {
    return (2.0 * static_cast<double>(gemm.k + 2) * FLT_EPSILON + a_roundoff) * bound[i] +
           2.0 * UnitRoundoff(gemm.c_dtype) * std::abs(ref[i]) + FLT_MIN;
  };
  double err2 = 0, ref2 = 0, bound2 = 0, worst_excess = -1;
  size_t worst = 0, non_finite = 0, first_non_finite = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(ref[i])) {
      ADD_FAILURE() << "the reference produced " << ref[i] << " at element " << i
                    << ": a bug in the CPU reference, not in the backend";
      return;
    }
    if (!std::isfinite(got[i])) {
      if (non_finite++ == 0) first_non_finite = i;
      continue;
    }
    const double diff = static_cast<double>(got[i]) - static_cast<double>(ref[i]);
    err2 += diff * diff;
    ref2 += static_cast<double>(ref[i]) * static_cast<double>(ref[i]);
    bound2 += bound[i] * bound[i];
    const double excess = std::abs(diff) - tolerance_at(i);
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  const auto n = static_cast<size_t>(gemm.n);
  EXPECT_EQ(non_finite, 0u) << non_finite << " of " << got.size()
                            << " outputs are not finite; first at [" << first_non_finite / n << ", "
                            << first_non_finite % n << "] = " << got[first_non_finite]
                            << (gemm.beta == 0.0f ? " (c was poisoned with NaN and beta = 0: "
                                                    "the old c must be ignored)"
                                                  : "");
  if (non_finite > 0) return;
  const double nmse = ref2 > 0 ? err2 / ref2 : err2;
  // Rounding c costs u(c)^2 of NMSE; rounding a costs up to u(a)^2 sum|a||b|, squared, relative to
  // sum ref^2: more than u(a)^2 where the products cancel (a 1x7x3 case of seed
  // 5719114510075904935 on bf16 weights: 2.4e-5 against u(bf16)^2 = 1.5e-5).
  const double u_c = UnitRoundoff(gemm.c_dtype);
  const double a_nmse = ref2 > 0 ? a_roundoff * a_roundoff * bound2 / ref2 : 0.0;
  EXPECT_LE(nmse, std::max({kMaxNmse, u_c * u_c, a_nmse}))
      << "NMSE sum((x-ref)^2)/sum(ref^2) over " << got.size() << " outputs";
  EXPECT_LE(worst_excess, 0.0) << fmt::format(
      "c[{}, {}] = {:.9g}, reference {:.9g}: |difference| {:.3g} exceeds the bound {:.3g}",
      worst / n, worst % n, got[worst], ref[worst],
      std::abs(static_cast<double>(got[worst]) - static_cast<double>(ref[worst])),
      tolerance_at(worst));
}

}  // namespace

std::string GemmCase::Describe() const {
  std::string out = fmt::format("{}x{}x{} b_transposed={} alpha={} beta={}", m, n, k,
                                b_transposed ? 1 : 0, alpha, beta);
  if (pad_a || pad_b || pad_c)
    out += fmt::format(" row padding a/b/c {}/{}/{}", pad_a, pad_b, pad_c);
  if (offset_bytes != 64) out += fmt::format(" view offset {} bytes", offset_bytes);
  if (a_dtype != HWINFER_DTYPE_F32 || b_dtype != HWINFER_DTYPE_F32 ||
      c_dtype != HWINFER_DTYPE_F32) {
    out +=
        fmt::format(" a/b/c {}/{}/{}", DtypeName(a_dtype), DtypeName(b_dtype), DtypeName(c_dtype));
  }
  return out;
}

GemmOutcome RunGemmCase(Device& device, Stream& stream, const GemmCase& gemm,
                        std::mt19937_64& rng) {
  SCOPED_TRACE(gemm.Describe());
  GemmOutcome outcome;
  Operand a(gemm.m, gemm.k, gemm.pad_a, gemm.offset_bytes, gemm.a_dtype);
  Operand b(gemm.b_transposed ? gemm.n : gemm.k, gemm.b_transposed ? gemm.k : gemm.n, gemm.pad_b,
            gemm.offset_bytes, gemm.b_dtype);
  Operand c(gemm.m, gemm.n, gemm.pad_c, gemm.offset_bytes, gemm.c_dtype);
  FillRandom(a, rng);
  FillRandom(b, rng);
  if (gemm.beta == 0.0f) {
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t col = 0; col < c.cols; ++col) {
        c.Set(r, col, std::numeric_limits<float>::quiet_NaN());  // a NaN in every dtype
      }
    }
  } else {
    FillRandom(c, rng);
  }

  auto allocate = [&](const Operand& operand) -> StatusOr<Buffer> {
    HWINFER_ASSIGN_OR_RETURN(Buffer buffer, device.Allocate(operand.image.size()));
    HWINFER_RETURN_IF_ERROR(Upload(stream, buffer, operand.image));
    return buffer;
  };
  auto a_buffer = allocate(a), b_buffer = allocate(b), c_buffer = allocate(c);
  for (const auto* buffer : {&a_buffer, &b_buffer, &c_buffer}) {
    if (!buffer->ok()) {
      ADD_FAILURE() << "setting up the operands: " << buffer->status().ToString();
      return outcome;
    }
  }

  hwinfer_gemm_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_GEMM;
  desc.m = gemm.m;
  desc.n = gemm.n;
  desc.k = gemm.k;
  desc.b_transposed = gemm.b_transposed ? 1u : 0u;
  desc.alpha = gemm.alpha;
  desc.beta = gemm.beta;
  desc.a = a.View(*a_buffer);
  desc.b = b.View(*b_buffer);
  desc.c = c.View(*c_buffer);

  auto support = device.QueryKernel(AsKernelDesc(desc));
  if (!support.ok()) {
    ADD_FAILURE() << "kernel_query(gemm) failed: " << support.status().ToString();
    return outcome;
  }
  if (!support->supported) {
    outcome.unsupported = true;
    outcome.reason = gemm.Describe() + ": " + support->reason;
    return outcome;
  }
  outcome.ran = true;
  Status launched = stream.Launch(AsKernelDesc(desc));
  if (launched.ok()) launched = stream.Synchronize();
  if (!launched.ok()) {
    ADD_FAILURE() << "the device claims this gemm (kernel_query: SUPPORTED) but running it failed: "
                  << launched.ToString();
    return outcome;
  }
  auto c_after = Download(stream, *c_buffer);
  auto a_after = Download(stream, *a_buffer);
  auto b_after = Download(stream, *b_buffer);
  for (const auto* after : {&c_after, &a_after, &b_after}) {
    if (!after->ok()) {
      ADD_FAILURE() << "reading the operands back: " << after->status().ToString();
      return outcome;
    }
  }
  EXPECT_TRUE(BytesEqual(a_after->data(), a.image.data(), a.image.size(), "a (an input)"));
  EXPECT_TRUE(BytesEqual(b_after->data(), b.image.data(), b.image.size(), "b (an input)"));
  EXPECT_TRUE(OnlyElementsChanged(c, c.image, *c_after));

  // The reference, on dense copies of the same inputs (each in its own dtype).
  const std::vector<float> a_dense = a.Dense(a.image);
  const std::vector<float> b_dense = b.Dense(b.image);
  const std::vector<float> c_before = c.Dense(c.image);
  std::vector<uint8_t> ref_raw = c.DenseRaw(c.image);
  const std::vector<uint8_t> a_raw = a.DenseRaw(a.image);
  const std::vector<uint8_t> b_raw = b.DenseRaw(b.image);
  hwinfer::reference::gemm_reference(gemm.m, gemm.n, gemm.k, a_raw.data(), gemm.a_dtype, gemm.k,
                                     b_raw.data(), gemm.b_dtype, b.cols, gemm.b_transposed,
                                     ref_raw.data(), gemm.c_dtype, gemm.n, gemm.alpha, gemm.beta);
  std::vector<float> ref(static_cast<size_t>(gemm.m * gemm.n));
  for (size_t e = 0; e < ref.size(); ++e) {
    ref[e] = static_cast<float>(
        hwinfer::reference::load_real(ref_raw.data(), static_cast<int64_t>(e), gemm.c_dtype));
  }
  // Per-element magnitude for the error bound: |alpha| sum_p |a_ip b_pj| + |beta c_ij|.
  std::vector<double> bound(ref.size(), 0.0);
  for (int64_t i = 0; i < gemm.m; ++i) {
    for (int64_t j = 0; j < gemm.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < gemm.k; ++p) {
        const float bv = gemm.b_transposed ? b_dense[static_cast<size_t>(j * gemm.k + p)]
                                           : b_dense[static_cast<size_t>(p * gemm.n + j)];
        sum += std::abs(static_cast<double>(a_dense[static_cast<size_t>(i * gemm.k + p)]) * bv);
      }
      const size_t e = static_cast<size_t>(i * gemm.n + j);
      bound[e] = std::abs(static_cast<double>(gemm.alpha)) * sum +
                 (gemm.beta == 0.0f ? 0.0 : std::abs(static_cast<double>(gemm.beta) * c_before[e]));
    }
  }
  CompareWithReference(gemm, c.Dense(*c_after), ref, bound);
  return outcome;
}

}  // namespace hwinfer::conformance
