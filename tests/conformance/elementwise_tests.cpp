// elementwise_tests.cpp — conformance of silu_mul against the scalar reference
// (hwinfer::reference::silu_mul_reference) on fresh random inputs (the seed is in every failure
// message; HWINFER_CONFORMANCE_SEED=<seed> repeats it): F32 and F16 (also mixed), odd shapes,
// padded rows and unaligned offsets, out poisoned with NaN, guard bands checked, inputs unchanged,
// and malformed descriptors rejected. Tolerances: row_matrix.h. Must not loosen them per backend.
//
//   gate, up, out: [n_tokens, dim] F32 | F16
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

using SiluMulTest = ConformanceTest;

struct SiluCase {
  int64_t n_tokens = 1, dim = 1;
  uint32_t gate_dtype = HWINFER_DTYPE_F32, up_dtype = HWINFER_DTYPE_F32,
           out_dtype = HWINFER_DTYPE_F32;
  int64_t pad = 0;
  uint64_t offset = 64;

  std::string Describe() const {
    return fmt::format("n_tokens={} dim={} gate={} up={} out={} pad={} offset={}", n_tokens, dim,
                       DtypeName(gate_dtype), DtypeName(up_dtype), DtypeName(out_dtype), pad,
                       offset);
  }
};

// Runs one case: kUnsupported (with |reason|) when the device answers UNSUPPORTED, else kRan
// (its checks report their own failures).
CaseResult RunSiluCase(Device& device, Stream& stream, const SiluCase& c, std::mt19937_64& rng,
                       std::string& reason) {
  SCOPED_TRACE(c.Describe());
  RowMatrix gate(c.gate_dtype, c.n_tokens, c.dim, c.pad, c.offset);
  RowMatrix up(c.up_dtype, c.n_tokens, c.dim, c.pad, c.offset);
  RowMatrix out(c.out_dtype, c.n_tokens, c.dim, c.pad, c.offset);
  gate.FillRandom(rng, -8.0f, 8.0f);  // both tails of the sigmoid
  up.FillRandom(rng, -2.0f, 2.0f);
  out.FillNan();
  Buffer gb, ub, ob;
  if (!UploadAll(device, stream, {{&gb, &gate.image}, {&ub, &up.image}, {&ob, &out.image}})) {
    return CaseResult::kRan;
  }
  hwinfer_silu_mul_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_SILU_MUL;
  desc.n_tokens = c.n_tokens;
  desc.dim = c.dim;
  desc.gate = gate.View(gb);
  desc.up = up.View(ub);
  desc.out = out.View(ob);
  if (const auto early =
          QueryAndLaunch(device, stream, AsKernelDesc(desc), "silu_mul", c.Describe(), reason)) {
    return *early;
  }
  std::vector<uint8_t> g_after, u_after, o_after;
  if (!DownloadAll(stream, {{&g_after, &gb}, {&u_after, &ub}, {&o_after, &ob}}))
    return CaseResult::kRan;
  EXPECT_TRUE(BytesEqual(g_after.data(), gate.image.data(), gate.image.size(), "gate"));
  EXPECT_TRUE(BytesEqual(u_after.data(), up.image.data(), up.image.size(), "up"));
  EXPECT_TRUE(out.OnlyElementsChanged(o_after, "out"));
  const std::vector<float> g = gate.Dense(gate.image), u = up.Dense(up.image);
  std::vector<float> ref(g.size());
  reference::silu_mul_reference(static_cast<int64_t>(g.size()), g.data(), u.data(), ref.data(),
                                c.out_dtype == HWINFER_DTYPE_F16);
  ExpectNmse(out.Dense(o_after), ref, MaxNmse(c.out_dtype), "out");
  return CaseResult::kRan;
}

void RunSiluCases(Device& device, Stream& stream, const std::vector<SiluCase>& cases) {
  RunCases(device, cases, "silu_mul cases",
           [&](const SiluCase& c, std::mt19937_64& rng, std::string& reason) {
             return RunSiluCase(device, stream, c, rng, reason);
           });
}

struct Shape {
  int64_t n_tokens, dim;
};
// 5000 and 9000 cross the cpu backend's 4096-value work chunks.
const Shape kShapes[] = {{1, 1}, {3, 7}, {5, 64}, {17, 1000}, {1, 9000}, {3, 5000}};

std::vector<SiluCase> ShapeCases(const SiluCase& base) {
  std::vector<SiluCase> cases;
  for (const Shape& s : kShapes) {
    SiluCase c = base;
    c.n_tokens = s.n_tokens;
    c.dim = s.dim;
    cases.push_back(c);
  }
  return cases;
}

TEST_P(SiluMulTest, F32MatchesReference) {
  RunSiluCases(device(), stream(), ShapeCases(SiluCase{}));
}

TEST_P(SiluMulTest, F16MatchesReference) {
  SiluCase base;
  base.gate_dtype = base.up_dtype = base.out_dtype = HWINFER_DTYPE_F16;
  RunSiluCases(device(), stream(), ShapeCases(base));
}

TEST_P(SiluMulTest, MixedDtypesPaddedRowsAndUnalignedOffsets) {
  SiluCase a;
  a.gate_dtype = HWINFER_DTYPE_F16;
  a.pad = 3;
  a.offset = 68;
  SiluCase h;
  h.gate_dtype = h.up_dtype = h.out_dtype = HWINFER_DTYPE_F16;
  h.pad = 1;
  h.offset = 66;
  std::vector<SiluCase> cases = ShapeCases(a);
  for (const SiluCase& c : ShapeCases(h)) cases.push_back(c);
  RunSiluCases(device(), stream(), cases);
}

// A well-formed 4x6 silu_mul with views that exactly fill their buffers, mutated one way at a time.
TEST_P(SiluMulTest, MalformedDescriptorsAreRejected) {
  constexpr int64_t n = 4, dim = 6;
  constexpr uint64_t kBytes = n * dim * sizeof(float);
  ASSERT_OK_AND_ASSIGN(Buffer gate, FilledBuffer(device(), stream(), kBytes, 0));
  ASSERT_OK_AND_ASSIGN(Buffer up, FilledBuffer(device(), stream(), kBytes, 0));
  ASSERT_OK_AND_ASSIGN(Buffer out, FilledBuffer(device(), stream(), kBytes, kPoisonByte));
  hwinfer_silu_mul_desc valid;
  std::memset(&valid, 0, sizeof(valid));
  valid.struct_size = sizeof(valid);
  valid.kind = HWINFER_KERNEL_SILU_MUL;
  valid.n_tokens = n;
  valid.dim = dim;
  valid.gate = ContiguousView(gate, 0, HWINFER_DTYPE_F32, {n, dim});
  valid.up = ContiguousView(up, 0, HWINFER_DTYPE_F32, {n, dim});
  valid.out = ContiguousView(out, 0, HWINFER_DTYPE_F32, {n, dim});
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;

  struct Variant {
    const char* what;
    bool shape_or_dtype;  // kernel_query must not answer SUPPORTED either
    void (*mutate)(hwinfer_silu_mul_desc&);
  };
  const Variant variants[] = {
      {"dim = 0", true,
       [](hwinfer_silu_mul_desc& d) {
         d.dim = 0;
         d.gate.shape[1] = d.up.shape[1] = d.out.shape[1] = 0;
       }},
      {"up's shape disagrees with n_tokens", true,
       [](hwinfer_silu_mul_desc& d) { d.up.shape[0] = 3; }},
      {"gate has rank 1", true,
       [](hwinfer_silu_mul_desc& d) {
         d.gate.rank = 1;
         d.gate.shape[0] = 24;
         d.gate.shape[1] = 0;
       }},
      {"out has dtype bf16", true,
       [](hwinfer_silu_mul_desc& d) { d.out.dtype = HWINFER_DTYPE_BF16; }},
      {"struct_size too small", true,
       [](hwinfer_silu_mul_desc& d) { d.struct_size = sizeof(hwinfer_kernel_desc) + 8; }},
      {"out runs 4 bytes past its buffer", false,
       [](hwinfer_silu_mul_desc& d) { d.out.offset_bytes = 4; }},
      {"out is gate (aliasing)", false, [](hwinfer_silu_mul_desc& d) { d.out = d.gate; }},
      {"up has no buffer", false, [](hwinfer_silu_mul_desc& d) { d.up.buffer = nullptr; }},
  };
  ExpectVariantsRejected(device(), stream(), valid, variants,
                         "a malformed silu_mul was accepted at enqueue");
  EXPECT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> out_after, Download(stream(), out));
  EXPECT_TRUE(BytesAre(out_after.data(), out_after.size(), kPoisonByte, "out after rejections"));
}

INSTANTIATE_TEST_SUITE_P(SiluMul, SiluMulTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SiluMulTest);

}  // namespace
}  // namespace hwinfer::conformance
