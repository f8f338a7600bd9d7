// norm_tests.cpp — conformance of rms_norm (optionally fused with the residual add) against the
// scalar reference (hwinfer::reference::rms_norm_reference) on fresh random inputs (the seed is in
// every failure message; HWINFER_CONFORMANCE_SEED=<seed> repeats it): F32 and F16 x/out/residual,
// odd shapes, padded rows and unaligned offsets, out poisoned with NaN, guard bands checked, inputs
// unchanged, and malformed descriptors rejected. Tolerances: row_matrix.h. Must not loosen them
// per backend.
//
//   x, out, residual: [n_tokens, dim] F32 | F16;  weight: [dim] F32
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "case_runner.h"
#include "conformance_fixture.h"
#include "hwinfer/tensor_view.h"
#include "reference/reference_ops.h"
#include "row_matrix.h"

namespace hwinfer::conformance {
namespace {

using RmsNormTest = ConformanceTest;

constexpr uint32_t kNoResidual = 0;

struct NormCase {
  int64_t n_tokens = 1, dim = 1;
  uint32_t x_dtype = HWINFER_DTYPE_F32, out_dtype = HWINFER_DTYPE_F32;
  uint32_t residual_dtype = kNoResidual;
  int64_t pad = 0;
  uint64_t offset = 64;
  float eps = 1e-5f;

  std::string Describe() const {
    return fmt::format("n_tokens={} dim={} x={} out={} residual={} pad={} offset={} eps={}",
                       n_tokens, dim, DtypeName(x_dtype), DtypeName(out_dtype),
                       residual_dtype == kNoResidual ? "none" : DtypeName(residual_dtype), pad,
                       offset, eps);
  }
};

// Runs one case: kUnsupported (with |reason|) when the device answers UNSUPPORTED, else kRan
// (its checks report their own failures).
CaseResult RunNormCase(Device& device, Stream& stream, const NormCase& c, std::mt19937_64& rng,
                       std::string& reason) {
  SCOPED_TRACE(c.Describe());
  const bool has_residual = c.residual_dtype != kNoResidual;
  RowMatrix x(c.x_dtype, c.n_tokens, c.dim, c.pad, c.offset);
  RowMatrix out(c.out_dtype, c.n_tokens, c.dim, c.pad, c.offset);
  RowMatrix residual(has_residual ? c.residual_dtype : HWINFER_DTYPE_F32, c.n_tokens, c.dim, c.pad,
                     c.offset);
  RowMatrix weight(HWINFER_DTYPE_F32, 1, c.dim, 0, c.offset / 4 * 4);
  x.FillRandom(rng, -2.0f, 2.0f);
  residual.FillRandom(rng, -2.0f, 2.0f);
  weight.FillRandom(rng, 0.5f, 1.5f);
  out.FillNan();

  Buffer xb, ob, rb, wb;
  if (!UploadAll(
          device, stream,
          {{&xb, &x.image}, {&ob, &out.image}, {&rb, &residual.image}, {&wb, &weight.image}})) {
    return CaseResult::kRan;
  }
  hwinfer_rms_norm_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_RMS_NORM;
  desc.n_tokens = c.n_tokens;
  desc.dim = c.dim;
  desc.eps = c.eps;
  desc.x = x.View(xb);
  desc.out = out.View(ob);
  desc.weight = weight.View(wb, true);
  if (has_residual) desc.residual = residual.View(rb);

  if (const auto early =
          QueryAndLaunch(device, stream, AsKernelDesc(desc), "rms_norm", c.Describe(), reason)) {
    return *early;
  }
  std::vector<uint8_t> x_after, o_after, r_after, w_after;
  if (!DownloadAll(stream, {{&x_after, &xb}, {&o_after, &ob}, {&r_after, &rb}, {&w_after, &wb}})) {
    return CaseResult::kRan;
  }
  EXPECT_TRUE(BytesEqual(x_after.data(), x.image.data(), x.image.size(), "x (an input)"));
  EXPECT_TRUE(BytesEqual(w_after.data(), weight.image.data(), weight.image.size(), "weight"));
  EXPECT_TRUE(out.OnlyElementsChanged(o_after, "out"));
  if (has_residual) {
    EXPECT_TRUE(residual.OnlyElementsChanged(r_after, "residual"));
  } else {
    EXPECT_TRUE(BytesEqual(r_after.data(), residual.image.data(), residual.image.size(),
                           "an unused residual buffer"));
  }

  const std::vector<float> x_dense = x.Dense(x.image);
  std::vector<float> residual_ref = residual.Dense(residual.image);
  const std::vector<float> w_dense = weight.Dense(weight.image);
  std::vector<float> out_ref(x_dense.size());
  reference::rms_norm_reference(c.n_tokens, c.dim, c.eps, x_dense.data(),
                                has_residual ? residual_ref.data() : nullptr,
                                c.residual_dtype == HWINFER_DTYPE_F16, w_dense.data(),
                                out_ref.data(), c.out_dtype == HWINFER_DTYPE_F16);
  ExpectNmse(out.Dense(o_after), out_ref, MaxNmse(c.out_dtype), "out");
  if (has_residual) {
    ExpectNmse(residual.Dense(r_after), residual_ref, MaxNmse(c.residual_dtype), "residual");
  }
  return CaseResult::kRan;
}

void RunNormCases(Device& device, Stream& stream, const std::vector<NormCase>& cases) {
  RunCases(device, cases, "rms_norm cases",
           [&](const NormCase& c, std::mt19937_64& rng, std::string& reason) {
             return RunNormCase(device, stream, c, rng, reason);
           });
}

struct Shape {
  int64_t n_tokens, dim;
};
const Shape kShapes[] = {{1, 1}, {3, 7}, {5, 64}, {17, 1000}, {2, 4096}, {33, 130}};

std::vector<NormCase> ShapeCases(const NormCase& base) {
  std::vector<NormCase> cases;
  for (const Shape& s : kShapes) {
    NormCase c = base;
    c.n_tokens = s.n_tokens;
    c.dim = s.dim;
    cases.push_back(c);
  }
  return cases;
}

TEST_P(RmsNormTest, F32MatchesReference) {
  RunNormCases(device(), stream(), ShapeCases(NormCase{}));
}

TEST_P(RmsNormTest, F16MatchesReference) {
  NormCase base;
  base.x_dtype = base.out_dtype = HWINFER_DTYPE_F16;
  RunNormCases(device(), stream(), ShapeCases(base));
}

TEST_P(RmsNormTest, FusedResidualAddMatchesReference) {
  std::vector<NormCase> cases;
  for (uint32_t dtype : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}) {
    NormCase base;
    base.x_dtype = base.out_dtype = base.residual_dtype = dtype;
    base.eps = 1e-6f;
    for (const NormCase& c : ShapeCases(base)) cases.push_back(c);
  }
  RunNormCases(device(), stream(), cases);
}

TEST_P(RmsNormTest, MixedDtypesPaddedRowsAndUnalignedOffsets) {
  NormCase a;
  a.x_dtype = HWINFER_DTYPE_F16;
  a.residual_dtype = HWINFER_DTYPE_F32;
  a.pad = 3;
  a.offset = 68;
  NormCase b;
  b.out_dtype = HWINFER_DTYPE_F16;
  b.residual_dtype = HWINFER_DTYPE_F16;
  b.pad = 5;
  b.offset = 72;
  NormCase h;  // all f16: 2-byte aligned offset
  h.x_dtype = h.out_dtype = h.residual_dtype = HWINFER_DTYPE_F16;
  h.pad = 1;
  h.offset = 66;
  std::vector<NormCase> cases = ShapeCases(a);
  for (const NormCase& c : ShapeCases(b)) cases.push_back(c);
  for (const NormCase& c : ShapeCases(h)) cases.push_back(c);
  RunNormCases(device(), stream(), cases);
}

// A well-formed 4x6 rms_norm with views that exactly fill their buffers, mutated one way at a time.
TEST_P(RmsNormTest, MalformedDescriptorsAreRejected) {
  constexpr int64_t n = 4, dim = 6;
  constexpr uint64_t kBytes = n * dim * sizeof(float);
  ASSERT_OK_AND_ASSIGN(Buffer x, FilledBuffer(device(), stream(), kBytes, 0));
  ASSERT_OK_AND_ASSIGN(Buffer w, FilledBuffer(device(), stream(), dim * sizeof(float), 0));
  ASSERT_OK_AND_ASSIGN(Buffer out, FilledBuffer(device(), stream(), kBytes, kPoisonByte));
  hwinfer_rms_norm_desc valid;
  std::memset(&valid, 0, sizeof(valid));
  valid.struct_size = sizeof(valid);
  valid.kind = HWINFER_KERNEL_RMS_NORM;
  valid.n_tokens = n;
  valid.dim = dim;
  valid.eps = 1e-5f;
  valid.x = ContiguousView(x, 0, HWINFER_DTYPE_F32, {n, dim});
  valid.weight = ContiguousView(w, 0, HWINFER_DTYPE_F32, {dim});
  valid.out = ContiguousView(out, 0, HWINFER_DTYPE_F32, {n, dim});
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;

  struct Variant {
    const char* what;
    bool shape_or_dtype;  // kernel_query must not answer SUPPORTED either
    void (*mutate)(hwinfer_rms_norm_desc&);
  };
  const Variant variants[] = {
      {"dim = 0", true,
       [](hwinfer_rms_norm_desc& d) {
         d.dim = 0;
         d.x.shape[1] = d.out.shape[1] = d.weight.shape[0] = 0;
       }},
      {"n_tokens < 0", true,
       [](hwinfer_rms_norm_desc& d) {
         d.n_tokens = -4;
         d.x.shape[0] = d.out.shape[0] = -4;
       }},
      {"x's shape disagrees with dim", true, [](hwinfer_rms_norm_desc& d) { d.x.shape[1] = 5; }},
      {"weight has 5 elements", true, [](hwinfer_rms_norm_desc& d) { d.weight.shape[0] = 5; }},
      {"weight has dtype f16", true,
       [](hwinfer_rms_norm_desc& d) { d.weight.dtype = HWINFER_DTYPE_F16; }},
      {"out has dtype i32", true,
       [](hwinfer_rms_norm_desc& d) { d.out.dtype = HWINFER_DTYPE_I32; }},
      {"eps is negative", true, [](hwinfer_rms_norm_desc& d) { d.eps = -1.0f; }},
      {"out runs 4 bytes past its buffer", false,
       [](hwinfer_rms_norm_desc& d) { d.out.offset_bytes = 4; }},
      {"out is x (aliasing)", false, [](hwinfer_rms_norm_desc& d) { d.x = d.out; }},
      {"x has no buffer", false, [](hwinfer_rms_norm_desc& d) { d.x.buffer = nullptr; }},
  };
  ExpectVariantsRejected(device(), stream(), valid, variants,
                         "a malformed rms_norm was accepted at enqueue");
  EXPECT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> out_after, Download(stream(), out));
  EXPECT_TRUE(BytesAre(out_after.data(), out_after.size(), kPoisonByte, "out after rejections"));
}

INSTANTIATE_TEST_SUITE_P(RmsNorm, RmsNormTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RmsNormTest);

}  // namespace
}  // namespace hwinfer::conformance
