// gemm_tests.cpp — conformance of the gemm kernel against the CPU scalar reference on fresh
// random inputs (the seed is in every failure message; HWINFER_CONFORMANCE_SEED=<seed> repeats
// it): odd shapes, the m = 1 gemv case, b_transposed 0 and 1, alpha/beta (beta = 0 ignores a
// NaN-poisoned c, beta = 0.5 uses it), padded rows and unaligned view offsets, F16/BF16 weights
// (the executor's case: a and c F32) and F16/BF16 activations and outputs, and malformed
// descriptors rejected with an error instead of a crash. Decode shapes (m <= 8, b transposed) with
// every b dtype, rows of b that are and are not whole 16-byte units (k, padding, odd element
// offsets), alpha and beta: backends may route these to a dedicated GEMV (the Vulkan backend's
// wide and scalar paths). A shape the device answers UNSUPPORTED
// for is skipped with its reason; a shape it claims and then gets wrong fails. Must not loosen
// the tolerance per backend.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "case_runner.h"
#include "conformance_fixture.h"
#include "gemm_case.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer::conformance {
namespace {

using GemmTest = ConformanceTest;

struct Shape {
  int64_t m, n, k;
};
const Shape kOddShapes[] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 65}, {64, 64, 64}, {128, 96, 200}};
const Shape kGemvShapes[] = {{1, 7, 3}, {1, 33, 65}, {1, 1000, 513}, {1, 4096, 64}};
const Shape kScalingShapes[] = {{3, 5, 7}, {17, 33, 65}, {1, 33, 65}};
// Half weights: decode (m <= 8) and prefill-sized m, odd n and k, k past one 256-deep k block.
const Shape kHalfWeightShapes[] = {{1, 7, 3},     {1, 1000, 513}, {2, 33, 65},   {5, 130, 300},
                                   {8, 64, 17},   {9, 33, 65},    {33, 70, 257}, {128, 96, 200},
                                   {1, 4096, 64}, {3, 5, 7}};

// |shapes| x b_transposed {0, 1}, each with |base|'s remaining settings.
std::vector<GemmCase> Cases(const Shape* shapes, size_t count, const GemmCase& base) {
  std::vector<GemmCase> cases;
  for (size_t i = 0; i < count; ++i) {
    for (bool transposed : {false, true}) {
      GemmCase gemm = base;
      gemm.m = shapes[i].m;
      gemm.n = shapes[i].n;
      gemm.k = shapes[i].k;
      gemm.b_transposed = transposed;
      cases.push_back(gemm);
    }
  }
  return cases;
}

// Runs every case with inputs from one seed. Cases the device answers UNSUPPORTED for are listed
// in a note, or skip the test (with the reasons) when that is all of them.
void RunCases(Device& device, Stream& stream, const std::vector<GemmCase>& cases) {
  conformance::RunCases(device, cases, "gemm cases",
                        [&](const GemmCase& c, std::mt19937_64& rng, std::string& reason) {
                          GemmOutcome outcome = RunGemmCase(device, stream, c, rng);
                          reason = outcome.reason;
                          if (outcome.ran) return CaseResult::kRan;
                          return outcome.unsupported ? CaseResult::kUnsupported : CaseResult::kStop;
                        });
}

TEST_P(GemmTest, MatchesReferenceOnOddShapes) {
  RunCases(device(), stream(), Cases(kOddShapes, std::size(kOddShapes), GemmCase{}));
}

TEST_P(GemmTest, GemvMatchesReference) {
  RunCases(device(), stream(), Cases(kGemvShapes, std::size(kGemvShapes), GemmCase{}));
}

TEST_P(GemmTest, AlphaScalesAndBetaZeroIgnoresNanInC) {
  GemmCase base;
  base.alpha = -1.5f;
  base.beta = 0.0f;
  RunCases(device(), stream(), Cases(kScalingShapes, std::size(kScalingShapes), base));
}

TEST_P(GemmTest, BetaHalfAccumulatesPriorC) {
  GemmCase base;
  base.alpha = 0.75f;
  base.beta = 0.5f;
  RunCases(device(), stream(), Cases(kScalingShapes, std::size(kScalingShapes), base));
}

// F16 and BF16 weights with f32 activations and outputs: what the model executor runs.
TEST_P(GemmTest, HalfWeightsMatchReference) {
  std::vector<GemmCase> cases;
  for (uint32_t dtype : {HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16}) {
    GemmCase base;
    base.b_dtype = dtype;
    const auto some = Cases(kHalfWeightShapes, std::size(kHalfWeightShapes), base);
    cases.insert(cases.end(), some.begin(), some.end());
  }
  RunCases(device(), stream(), cases);
}

TEST_P(GemmTest, HalfWeightsWithAlphaBetaAndPadding) {
  std::vector<GemmCase> cases;
  for (uint32_t dtype : {HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16}) {
    GemmCase base;
    base.b_dtype = dtype;
    base.alpha = 0.75f;
    base.beta = 0.5f;
    base.pad_a = 3;
    base.pad_b = 5;
    base.pad_c = 2;
    base.offset_bytes = 68;
    const auto some = Cases(kScalingShapes, std::size(kScalingShapes), base);
    cases.insert(cases.end(), some.begin(), some.end());
  }
  RunCases(device(), stream(), cases);
}

// Half activations and outputs (a and/or c F16/BF16), beta 0 (NaN-poisoned c) and 0.5.
TEST_P(GemmTest, HalfActivationsAndOutputsMatchReference) {
  struct Dtypes {
    uint32_t a, b, c;
  };
  constexpr uint32_t kF32 = HWINFER_DTYPE_F32, kF16 = HWINFER_DTYPE_F16, kBf16 = HWINFER_DTYPE_BF16;
  const Dtypes mixes[] = {{kF16, kF16, kF16}, {kBf16, kBf16, kBf16}, {kF32, kF16, kF16},
                          {kF16, kF32, kF32}, {kBf16, kF32, kBf16},  {kF32, kF32, kF16},
                          {kBf16, kF16, kF32}};
  const Shape shapes[] = {{1, 33, 65}, {17, 33, 65}};
  std::vector<GemmCase> cases;
  for (const Dtypes& mix : mixes) {
    for (float beta : {0.0f, 0.5f}) {
      GemmCase base;
      base.a_dtype = mix.a;
      base.b_dtype = mix.b;
      base.c_dtype = mix.c;
      base.beta = beta;
      const auto some = Cases(shapes, std::size(shapes), base);
      cases.insert(cases.end(), some.begin(), some.end());
    }
  }
  RunCases(device(), stream(), cases);
}

// Decode shapes, b transposed: rows of b of 16-byte multiples (wide loads) and not (k = 13, 36,
// padding of 3 elements: odd element starts), m = 1..8, n = 1 and odd n, short and long rows.
TEST_P(GemmTest, DecodeShapesEveryWeightDtype) {
  const Shape shapes[] = {{2, 33, 64}, {4, 19, 256}, {8, 67, 128},  {6, 9, 40},   {3, 17, 36},
                          {7, 5, 13},  {8, 1, 96},   {1, 70, 1032}, {2, 9, 1100}, {3, 5, 2048}};
  struct Layout {
    int64_t pad_b;
    uint64_t offset_bytes;
  };
  const Layout layouts[] = {{0, 64}, {8, 64}, {3, 68}};
  std::vector<GemmCase> cases;
  for (uint32_t b_dtype : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16}) {
    for (const Layout& layout : layouts) {
      for (const Shape& s : shapes) {
        GemmCase gemm;
        gemm.m = s.m;
        gemm.n = s.n;
        gemm.k = s.k;
        gemm.b_transposed = true;
        gemm.b_dtype = b_dtype;
        gemm.pad_b = layout.pad_b;
        gemm.pad_a = layout.pad_b == 0 ? 0 : 1;
        gemm.pad_c = layout.pad_b == 0 ? 0 : 2;
        gemm.offset_bytes = layout.offset_bytes;
        gemm.alpha = layout.pad_b == 3 ? -1.25f : 1.0f;
        gemm.beta = layout.pad_b == 8 ? 0.5f : 0.0f;
        cases.push_back(gemm);
      }
    }
  }
  // Half activations and outputs on the decode path.
  for (const Shape& s : {Shape{1, 33, 64}, Shape{5, 17, 40}, Shape{3, 9, 13}}) {
    GemmCase gemm;
    gemm.m = s.m;
    gemm.n = s.n;
    gemm.k = s.k;
    gemm.b_transposed = true;
    gemm.a_dtype = HWINFER_DTYPE_F16;
    gemm.b_dtype = HWINFER_DTYPE_BF16;
    gemm.c_dtype = HWINFER_DTYPE_F16;
    gemm.beta = 0.5f;
    cases.push_back(gemm);
    gemm.a_dtype = HWINFER_DTYPE_BF16;
    gemm.b_dtype = HWINFER_DTYPE_F16;
    gemm.c_dtype = HWINFER_DTYPE_BF16;
    gemm.beta = 0.0f;
    cases.push_back(gemm);
  }
  RunCases(device(), stream(), cases);
}

// Row strides larger than the rows (padding that must stay untouched) and view offsets that are
// 4-byte but not 16-byte aligned.
TEST_P(GemmTest, PaddedRowsAndUnalignedOffsets) {
  GemmCase base;
  base.pad_a = 3;
  base.pad_b = 5;
  base.pad_c = 2;
  base.offset_bytes = 68;
  base.beta = 0.5f;
  RunCases(device(), stream(), Cases(kScalingShapes, std::size(kScalingShapes), base));
}

// A well-formed 4x5x6 gemm with views that exactly fill their buffers, mutated one way at a time.
TEST_P(GemmTest, MalformedDescriptorsAreRejected) {
  constexpr int64_t m = 4, n = 5, k = 6;
  constexpr uint64_t kCBytes = m * n * sizeof(float);
  ASSERT_OK_AND_ASSIGN(Buffer a, FilledBuffer(device(), stream(), m * k * sizeof(float), 0));
  ASSERT_OK_AND_ASSIGN(Buffer b, FilledBuffer(device(), stream(), k * n * sizeof(float), 0));
  ASSERT_OK_AND_ASSIGN(Buffer c, FilledBuffer(device(), stream(), kCBytes, kPoisonByte));
  hwinfer_gemm_desc valid;
  std::memset(&valid, 0, sizeof(valid));
  valid.struct_size = sizeof(valid);
  valid.kind = HWINFER_KERNEL_GEMM;
  valid.m = m;
  valid.n = n;
  valid.k = k;
  valid.alpha = 1.0f;
  valid.a = ContiguousView(a, 0, HWINFER_DTYPE_F32, {m, k});
  valid.b = ContiguousView(b, 0, HWINFER_DTYPE_F32, {k, n});
  valid.c = ContiguousView(c, 0, HWINFER_DTYPE_F32, {m, n});
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;

  struct Variant {
    const char* what;
    bool shape_or_dtype;  // kernel_query must not answer SUPPORTED either
    void (*mutate)(hwinfer_gemm_desc&);
  };
  const Variant variants[] = {
      {"k = 0", true,
       [](hwinfer_gemm_desc& d) {
         d.k = 0;
         d.a.shape[1] = 0;
         d.b.shape[0] = 0;
       }},
      {"m < 0", true,
       [](hwinfer_gemm_desc& d) {
         d.m = -4;
         d.a.shape[0] = -4;
         d.c.shape[0] = -4;
       }},
      {"a's shape disagrees with m, k", true, [](hwinfer_gemm_desc& d) { d.a.shape[1] = 7; }},
      {"a has rank 1", true,
       [](hwinfer_gemm_desc& d) {
         d.a.rank = 1;
         d.a.shape[0] = 24;
         d.a.shape[1] = 0;
       }},
      {"b_transposed = 2", true, [](hwinfer_gemm_desc& d) { d.b_transposed = 2; }},
      {"c has dtype i32", true, [](hwinfer_gemm_desc& d) { d.c.dtype = HWINFER_DTYPE_I32; }},
      {"b has dtype q8_0 (gemm takes no block dtype)", true,
       [](hwinfer_gemm_desc& d) { d.b.dtype = HWINFER_DTYPE_Q8_0; }},
      {"c's view runs 4 bytes past its buffer", false,
       [](hwinfer_gemm_desc& d) { d.c.offset_bytes = 4; }},
      {"a's row stride runs past its buffer", false,
       [](hwinfer_gemm_desc& d) { d.a.strides_bytes[0] *= 2; }},
      {"c's offset + size wraps past 2^64", false,
       [](hwinfer_gemm_desc& d) { d.c.offset_bytes = UINT64_MAX - 8; }},
      {"c has no buffer", false, [](hwinfer_gemm_desc& d) { d.c.buffer = nullptr; }},
  };
  ExpectVariantsRejected(device(), stream(), valid, variants,
                         "a malformed gemm was accepted at enqueue (plugin.h: errors the "
                         "plugin can see at enqueue time are returned then)");
  EXPECT_OK(stream().Synchronize());  // rejected launches leave the stream usable
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> c_after, Download(stream(), c));
  EXPECT_TRUE(BytesAre(c_after.data(), c_after.size(), kPoisonByte, "c after rejected launches"));
}

INSTANTIATE_TEST_SUITE_P(Gemm, GemmTest, testing::ValuesIn(BackendParams()), BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GemmTest);

}  // namespace
}  // namespace hwinfer::conformance
