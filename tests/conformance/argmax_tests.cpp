// argmax_tests.cpp — conformance of argmax (ABI 1.3) against the scalar reference
// (hwinfer::reference::argmax_reference) on fresh random rows (the seed is in every failure
// message; HWINFER_CONFORMANCE_SEED=<seed> repeats it): F32 and F16, vocabulary-sized and odd
// widths, padded rows and unaligned offsets, ties (the first index wins), NaN (never chosen), ids
// with guard bands checked, and malformed descriptors rejected. Exact: an id is right or wrong.
//
//   x: [n_rows, n_cols] F32 | F16;  ids: [n_rows] I32
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "case_runner.h"
#include "conformance_fixture.h"
#include "hwinfer/tensor_view.h"
#include "reference/reference_ops.h"
#include "row_matrix.h"

namespace hwinfer::conformance {
namespace {

using ArgmaxTest = ConformanceTest;

constexpr uint64_t kIdsFront = 16;  // poisoned bytes before and after the ids

struct ArgmaxCase {
  int64_t n_rows = 1, n_cols = 1;
  uint32_t dtype = HWINFER_DTYPE_F32;
  int64_t pad = 0;
  uint64_t offset = 64;
  // What the rows hold: random values, every value equal (a tie across the row), or random with
  // NaN at every third column.
  enum class Fill { kRandom, kAllEqual, kNans } fill = Fill::kRandom;

  std::string Describe() const {
    return fmt::format("n_rows={} n_cols={} x={} pad={} offset={} fill={}", n_rows, n_cols,
                       DtypeName(dtype), pad, offset, static_cast<int>(fill));
  }
};

void FillRows(RowMatrix& x, const ArgmaxCase& c, std::mt19937_64& rng) {
  x.FillRandom(rng, -4.0f, 4.0f);
  for (int64_t r = 0; r < c.n_rows; ++r) {
    for (int64_t col = 0; col < c.n_cols; ++col) {
      if (c.fill == ArgmaxCase::Fill::kAllEqual) x.Set(r, col, 0.5f);
      if (c.fill == ArgmaxCase::Fill::kNans && col % 3 == 0) {
        x.Set(r, col, std::numeric_limits<float>::quiet_NaN());
      }
    }
  }
}

CaseResult RunArgmaxCase(Device& device, Stream& stream, const ArgmaxCase& c, std::mt19937_64& rng,
                         std::string& reason) {
  SCOPED_TRACE(c.Describe());
  RowMatrix x(c.dtype, c.n_rows, c.n_cols, c.pad, c.offset);
  FillRows(x, c, rng);
  std::vector<uint8_t> ids_image(kIdsFront * 2 + static_cast<size_t>(c.n_rows) * 4, kPoisonByte);
  Buffer xb, ib;
  if (!UploadAll(device, stream, {{&xb, &x.image}, {&ib, &ids_image}})) return CaseResult::kRan;
  hwinfer_argmax_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_ARGMAX;
  desc.n_rows = c.n_rows;
  desc.n_cols = c.n_cols;
  desc.x = x.View(xb);
  desc.ids = ContiguousView(ib, kIdsFront, HWINFER_DTYPE_I32, {c.n_rows});
  if (const auto early =
          QueryAndLaunch(device, stream, AsKernelDesc(desc), "argmax", c.Describe(), reason)) {
    return *early;
  }
  std::vector<uint8_t> x_after, ids_after;
  if (!DownloadAll(stream, {{&x_after, &xb}, {&ids_after, &ib}})) return CaseResult::kRan;
  EXPECT_TRUE(BytesEqual(x_after.data(), x.image.data(), x.image.size(), "x"));
  EXPECT_TRUE(BytesAre(ids_after.data(), kIdsFront, kPoisonByte, "ids front guard"));
  EXPECT_TRUE(BytesAre(ids_after.data() + ids_after.size() - kIdsFront, kIdsFront, kPoisonByte,
                       "ids back guard"));
  const std::vector<float> dense = x.Dense(x.image);
  std::vector<int32_t> want(static_cast<size_t>(c.n_rows));
  reference::argmax_reference(c.n_rows, c.n_cols, dense.data(), want.data());
  for (int64_t r = 0; r < c.n_rows; ++r) {
    int32_t got = 0;
    std::memcpy(&got, ids_after.data() + kIdsFront + 4 * r, sizeof(got));
    EXPECT_EQ(got, want[static_cast<size_t>(r)]) << "row " << r;
  }
  return CaseResult::kRan;
}

void RunArgmaxCases(Device& device, Stream& stream, const std::vector<ArgmaxCase>& cases) {
  RunCases(device, cases, "argmax cases",
           [&](const ArgmaxCase& c, std::mt19937_64& rng, std::string& reason) {
             return RunArgmaxCase(device, stream, c, rng, reason);
           });
}

// Shapes: one value, odd widths, a Llama vocabulary, more rows than a CPU pool has threads.
std::vector<ArgmaxCase> ShapeCases(const ArgmaxCase& base) {
  std::vector<ArgmaxCase> cases;
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {3, 7}, {1, 32000}, {5, 32000}, {17, 1000}, {2, 128256}}) {
    ArgmaxCase c = base;
    c.n_rows = rows;
    c.n_cols = cols;
    cases.push_back(c);
  }
  return cases;
}

TEST_P(ArgmaxTest, F32MatchesReference) {
  RunArgmaxCases(device(), stream(), ShapeCases(ArgmaxCase{}));
}

TEST_P(ArgmaxTest, F16MatchesReference) {
  ArgmaxCase base;
  base.dtype = HWINFER_DTYPE_F16;  // many ties: the first index must win
  RunArgmaxCases(device(), stream(), ShapeCases(base));
}

TEST_P(ArgmaxTest, PaddedRowsAndUnalignedOffsets) {
  ArgmaxCase f32;
  f32.pad = 3;
  f32.offset = 68;
  ArgmaxCase f16 = f32;
  f16.dtype = HWINFER_DTYPE_F16;
  f16.offset = 66;
  std::vector<ArgmaxCase> cases = ShapeCases(f32);
  for (const ArgmaxCase& c : ShapeCases(f16)) cases.push_back(c);
  RunArgmaxCases(device(), stream(), cases);
}

TEST_P(ArgmaxTest, TiesGiveTheFirstIndexAndNanIsNeverChosen) {
  std::vector<ArgmaxCase> cases;
  for (const ArgmaxCase::Fill fill : {ArgmaxCase::Fill::kAllEqual, ArgmaxCase::Fill::kNans}) {
    for (const uint32_t dtype : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}) {
      ArgmaxCase c;
      c.fill = fill;
      c.dtype = dtype;
      for (const ArgmaxCase& shaped : ShapeCases(c)) cases.push_back(shaped);
    }
  }
  ArgmaxCase all_nan;  // every value NaN: 0
  all_nan.n_rows = 2;
  all_nan.n_cols = 1;
  all_nan.fill = ArgmaxCase::Fill::kNans;
  cases.push_back(all_nan);
  RunArgmaxCases(device(), stream(), cases);
}

// A well-formed 4x6 argmax with views that exactly fill their buffers, mutated one way at a time.
TEST_P(ArgmaxTest, MalformedDescriptorsAreRejected) {
  constexpr int64_t n = 4, cols = 6;
  ASSERT_OK_AND_ASSIGN(Buffer x, FilledBuffer(device(), stream(), n * cols * sizeof(float), 0));
  ASSERT_OK_AND_ASSIGN(Buffer ids, FilledBuffer(device(), stream(), n * 4, kPoisonByte));
  hwinfer_argmax_desc valid;
  std::memset(&valid, 0, sizeof(valid));
  valid.struct_size = sizeof(valid);
  valid.kind = HWINFER_KERNEL_ARGMAX;
  valid.n_rows = n;
  valid.n_cols = cols;
  valid.x = ContiguousView(x, 0, HWINFER_DTYPE_F32, {n, cols});
  valid.ids = ContiguousView(ids, 0, HWINFER_DTYPE_I32, {n});
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;

  struct Variant {
    const char* what;
    bool shape_or_dtype;  // kernel_query must not answer SUPPORTED either
    void (*mutate)(hwinfer_argmax_desc&);
  };
  const Variant variants[] = {
      {"n_cols = 0", true,
       [](hwinfer_argmax_desc& d) {
         d.n_cols = 0;
         d.x.shape[1] = 0;
       }},
      {"ids' shape disagrees with n_rows", true,
       [](hwinfer_argmax_desc& d) { d.ids.shape[0] = 3; }},
      {"ids has dtype f32", true, [](hwinfer_argmax_desc& d) { d.ids.dtype = HWINFER_DTYPE_F32; }},
      {"x has dtype bf16", true, [](hwinfer_argmax_desc& d) { d.x.dtype = HWINFER_DTYPE_BF16; }},
      {"struct_size too small", true,
       [](hwinfer_argmax_desc& d) { d.struct_size = sizeof(hwinfer_kernel_desc) + 8; }},
      {"ids run 4 bytes past their buffer", false,
       [](hwinfer_argmax_desc& d) { d.ids.offset_bytes = 4; }},
      {"x has no buffer", false, [](hwinfer_argmax_desc& d) { d.x.buffer = nullptr; }},
  };
  ExpectVariantsRejected(device(), stream(), valid, variants,
                         "a malformed argmax was accepted at enqueue");
  EXPECT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> ids_after, Download(stream(), ids));
  EXPECT_TRUE(BytesAre(ids_after.data(), ids_after.size(), kPoisonByte, "ids after rejections"));
}

INSTANTIATE_TEST_SUITE_P(Argmax, ArgmaxTest, testing::ValuesIn(BackendParams()), BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ArgmaxTest);

}  // namespace
}  // namespace hwinfer::conformance
