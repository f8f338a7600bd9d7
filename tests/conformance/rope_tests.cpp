// rope_tests.cpp — conformance of rope against the scalar reference
// (hwinfer::reference::rope_reference) on fresh random inputs (the seed is in every failure
// message; HWINFER_CONFORMANCE_SEED=<seed> repeats it): NORMAL and NEOX pairing, F32 and F16 (also
// mixed), rotary_dim < head_dim (the tail must be untouched), GQA (n_kv_heads < n_heads), k absent,
// large positions, padded rows and unaligned offsets, guard bands checked, positions unchanged,
// and malformed descriptors rejected. Tolerances: row_matrix.h. Must not loosen them per backend.
//
//   q: [n_tokens, n_heads, head_dim], k: [n_tokens, n_kv_heads, head_dim] F32 | F16 (in place)
//   positions: [n_tokens] I32
#include <fmt/format.h>

#include <algorithm>
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

using RopeTest = ConformanceTest;

struct RopeCase {
  int64_t n_tokens = 1, n_heads = 1, n_kv_heads = 1, head_dim = 2, rotary_dim = 2;
  uint32_t mode = HWINFER_ROPE_NORMAL;
  uint32_t q_dtype = HWINFER_DTYPE_F32, k_dtype = HWINFER_DTYPE_F32;
  bool has_k = true;
  float theta_base = 10000.0f;
  int32_t max_position = 4096;  // positions uniform in [0, max_position]; 0 and the max included
  int64_t pad = 0;              // row padding of q and k, elements
  uint64_t offset = 64;

  std::string Describe() const {
    return fmt::format(
        "n_tokens={} n_heads={} n_kv_heads={} head_dim={} rotary_dim={} mode={} q={} k={} "
        "theta={} max_position={} pad={} offset={}",
        n_tokens, n_heads, n_kv_heads, head_dim, rotary_dim,
        mode == HWINFER_ROPE_NEOX ? "neox" : "normal", DtypeName(q_dtype),
        has_k ? DtypeName(k_dtype) : "absent", theta_base, max_position, pad, offset);
  }
};

// [rows, n_heads * head_dim] RowMatrix seen as [rows, n_heads, head_dim] (row padding kept).
hwinfer_tensor_view HeadView(const RowMatrix& m, const Buffer& buffer, int64_t n_heads,
                             int64_t head_dim) {
  hwinfer_tensor_view view = ContiguousView(buffer, m.offset, m.dtype, {m.rows, n_heads, head_dim});
  view.strides_bytes[0] = m.stride * static_cast<int64_t>(m.ElementBytes());
  return view;
}

// |values| as I32 at |offset| in a poisoned image with a back guard.
std::vector<uint8_t> I32Image(const std::vector<int32_t>& values, uint64_t offset) {
  std::vector<uint8_t> image(offset + values.size() * sizeof(int32_t) + 64, kPoisonByte);
  std::memcpy(image.data() + offset, values.data(), values.size() * sizeof(int32_t));
  return image;
}

// Runs one case: kUnsupported (with |reason|) when the device answers UNSUPPORTED, else kRan
// (its checks report their own failures).
CaseResult RunRopeCase(Device& device, Stream& stream, const RopeCase& c, std::mt19937_64& rng,
                       std::string& reason) {
  SCOPED_TRACE(c.Describe());
  RowMatrix q(c.q_dtype, c.n_tokens, c.n_heads * c.head_dim, c.pad, c.offset);
  RowMatrix k(c.k_dtype, c.n_tokens, c.n_kv_heads * c.head_dim, c.pad, c.offset);
  q.FillRandom(rng, -2.0f, 2.0f);
  k.FillRandom(rng, -2.0f, 2.0f);
  std::uniform_int_distribution<int32_t> position(0, c.max_position);
  std::vector<int32_t> positions(static_cast<size_t>(c.n_tokens));
  for (int32_t& p : positions) p = position(rng);
  positions.front() = 0;
  if (c.n_tokens > 1) positions.back() = c.max_position;
  const std::vector<uint8_t> positions_image = I32Image(positions, 32);

  Buffer qb, kb, pb;
  if (!UploadAll(device, stream, {{&qb, &q.image}, {&kb, &k.image}, {&pb, &positions_image}})) {
    return CaseResult::kRan;
  }
  hwinfer_rope_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_ROPE;
  desc.n_tokens = c.n_tokens;
  desc.n_heads = c.n_heads;
  desc.n_kv_heads = c.n_kv_heads;
  desc.head_dim = c.head_dim;
  desc.rotary_dim = c.rotary_dim;
  desc.theta_base = c.theta_base;
  desc.mode = c.mode;
  desc.q = HeadView(q, qb, c.n_heads, c.head_dim);
  desc.k = c.has_k ? HeadView(k, kb, c.n_kv_heads, c.head_dim) : NoView();
  desc.positions = ContiguousView(pb, 32, HWINFER_DTYPE_I32, {c.n_tokens});
  if (const auto early =
          QueryAndLaunch(device, stream, AsKernelDesc(desc), "rope", c.Describe(), reason)) {
    return *early;
  }
  std::vector<uint8_t> q_after, k_after, p_after;
  if (!DownloadAll(stream, {{&q_after, &qb}, {&k_after, &kb}, {&p_after, &pb}}))
    return CaseResult::kRan;
  EXPECT_TRUE(
      BytesEqual(p_after.data(), positions_image.data(), positions_image.size(), "positions"));
  EXPECT_TRUE(q.OnlyElementsChanged(q_after, "q"));
  EXPECT_TRUE(k.OnlyElementsChanged(k_after, "k"));
  const reference::RopeMode mode =
      c.mode == HWINFER_ROPE_NEOX ? reference::RopeMode::kNeox : reference::RopeMode::kNormal;
  struct Operand {
    const RowMatrix* m;
    const std::vector<uint8_t>* after;
    int64_t n_heads;
    const char* name;
  };
  std::vector<Operand> operands = {{&q, &q_after, c.n_heads, "q"}};
  if (c.has_k) {
    operands.push_back({&k, &k_after, c.n_kv_heads, "k"});
  } else {
    EXPECT_TRUE(BytesEqual(k_after.data(), k.image.data(), k.image.size(), "k (absent)"));
  }
  for (const Operand& o : operands) {
    std::vector<float> ref = o.m->Dense(o.m->image);
    const std::vector<float> before = ref;
    reference::rope_reference(c.n_tokens, o.n_heads, c.head_dim, c.rotary_dim, c.theta_base, mode,
                              positions.data(), ref.data(), o.m->dtype == HWINFER_DTYPE_F16);
    const std::vector<float> got = o.m->Dense(*o.after);
    ExpectNmse(got, ref, MaxNmse(o.m->dtype), o.name);
    // Past rotary_dim nothing changes, bit for bit.
    size_t tail_changed = 0;
    for (size_t row = 0; row < got.size() / static_cast<size_t>(c.head_dim); ++row) {
      for (int64_t i = c.rotary_dim; i < c.head_dim; ++i) {
        const size_t at = row * static_cast<size_t>(c.head_dim) + static_cast<size_t>(i);
        if (std::memcmp(&got[at], &before[at], sizeof(float)) != 0) ++tail_changed;
      }
    }
    EXPECT_EQ(tail_changed, 0u) << o.name << ": values past rotary_dim changed";
  }
  return CaseResult::kRan;
}

void RunRopeCases(Device& device, Stream& stream, const std::vector<RopeCase>& cases) {
  RunCases(device, cases, "rope cases",
           [&](const RopeCase& c, std::mt19937_64& rng, std::string& reason) {
             return RunRopeCase(device, stream, c, rng, reason);
           });
}

struct Shape {
  int64_t n_tokens, n_heads, n_kv_heads, head_dim, rotary_dim;
};
// GQA and MQA, rotary_dim < head_dim (partial rotary, as Phi/StableLM/GPT-NeoX), and 300 tokens
// (more than one work item of the cpu backend).
const Shape kShapes[] = {{1, 1, 1, 2, 2},     {3, 4, 2, 64, 64},  {7, 8, 2, 128, 128},
                         {5, 4, 4, 64, 32},   {9, 6, 1, 80, 64},  {2, 2, 2, 96, 2},
                         {300, 4, 2, 64, 64}, {17, 3, 3, 128, 96}};

// Every shape in both modes, from |base|.
std::vector<RopeCase> ShapeCases(const RopeCase& base) {
  std::vector<RopeCase> cases;
  for (uint32_t mode : {HWINFER_ROPE_NORMAL, HWINFER_ROPE_NEOX}) {
    for (const Shape& s : kShapes) {
      RopeCase c = base;
      c.n_tokens = s.n_tokens;
      c.n_heads = s.n_heads;
      c.n_kv_heads = s.n_kv_heads;
      c.head_dim = s.head_dim;
      c.rotary_dim = s.rotary_dim;
      c.mode = mode;
      cases.push_back(c);
    }
  }
  return cases;
}

TEST_P(RopeTest, F32MatchesReference) { RunRopeCases(device(), stream(), ShapeCases(RopeCase{})); }

TEST_P(RopeTest, F16MatchesReference) {
  RopeCase base;
  base.q_dtype = base.k_dtype = HWINFER_DTYPE_F16;
  RunRopeCases(device(), stream(), ShapeCases(base));
}

TEST_P(RopeTest, KAbsentRotatesQOnly) {
  RopeCase base;
  base.has_k = false;
  std::vector<RopeCase> cases = ShapeCases(base);
  base.q_dtype = HWINFER_DTYPE_F16;
  for (const RopeCase& c : ShapeCases(base)) cases.push_back(c);
  RunRopeCases(device(), stream(), cases);
}

// Long contexts: angles up to ~1e5 radians must keep their accuracy (Llama 3's theta 500000 too).
TEST_P(RopeTest, LargePositionsMatchReference) {
  std::vector<RopeCase> cases;
  for (int32_t max_position : {32000, 131071}) {
    for (float theta : {10000.0f, 500000.0f}) {
      for (uint32_t dtype : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}) {
        RopeCase base;
        base.max_position = max_position;
        base.theta_base = theta;
        base.q_dtype = base.k_dtype = dtype;
        for (const RopeCase& c : ShapeCases(base)) {
          if (c.n_tokens <= 17) cases.push_back(c);
        }
      }
    }
  }
  RunRopeCases(device(), stream(), cases);
}

TEST_P(RopeTest, MixedDtypesPaddedRowsAndUnalignedOffsets) {
  RopeCase a;
  a.q_dtype = HWINFER_DTYPE_F16;
  a.pad = 3;
  a.offset = 68;
  RopeCase h;
  h.q_dtype = h.k_dtype = HWINFER_DTYPE_F16;
  h.pad = 1;
  h.offset = 66;
  std::vector<RopeCase> cases = ShapeCases(a);
  for (const RopeCase& c : ShapeCases(h)) cases.push_back(c);
  RunRopeCases(device(), stream(), cases);
}

// A well-formed rope (3 tokens, 4 q heads, 2 kv heads, head_dim 8) with views that exactly fill
// their buffers, mutated one way at a time.
TEST_P(RopeTest, MalformedDescriptorsAreRejected) {
  constexpr int64_t n = 3, heads = 4, kv_heads = 2, hd = 8;
  ASSERT_OK_AND_ASSIGN(Buffer q, FilledBuffer(device(), stream(), n * heads * hd * 4, kPoisonByte));
  ASSERT_OK_AND_ASSIGN(Buffer k,
                       FilledBuffer(device(), stream(), n * kv_heads * hd * 4, kPoisonByte));
  ASSERT_OK_AND_ASSIGN(Buffer positions, FilledBuffer(device(), stream(), n * 4, 0));
  hwinfer_rope_desc valid;
  std::memset(&valid, 0, sizeof(valid));
  valid.struct_size = sizeof(valid);
  valid.kind = HWINFER_KERNEL_ROPE;
  valid.n_tokens = n;
  valid.n_heads = heads;
  valid.n_kv_heads = kv_heads;
  valid.head_dim = hd;
  valid.rotary_dim = hd;
  valid.theta_base = 10000.0f;
  valid.mode = HWINFER_ROPE_NORMAL;
  valid.q = ContiguousView(q, 0, HWINFER_DTYPE_F32, {n, heads, hd});
  valid.k = ContiguousView(k, 0, HWINFER_DTYPE_F32, {n, kv_heads, hd});
  valid.positions = ContiguousView(positions, 0, HWINFER_DTYPE_I32, {n});
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;

  enum Expect { kRejectedByQuery, kUnsupportedByQuery, kRejectedAtLaunch };
  struct Variant {
    const char* what;
    Expect expect;
    void (*mutate)(hwinfer_rope_desc&);
  };
  const Variant variants[] = {
      {"rotary_dim odd", kRejectedByQuery, [](hwinfer_rope_desc& d) { d.rotary_dim = 7; }},
      {"rotary_dim > head_dim", kRejectedByQuery, [](hwinfer_rope_desc& d) { d.rotary_dim = 10; }},
      {"rotary_dim = 0", kRejectedByQuery, [](hwinfer_rope_desc& d) { d.rotary_dim = 0; }},
      {"head_dim odd", kRejectedByQuery,
       [](hwinfer_rope_desc& d) {
         d.head_dim = 7;
         d.rotary_dim = 6;
         d.q.shape[2] = d.k.shape[2] = 7;
         d.q.strides_bytes[1] = d.k.strides_bytes[1] = 28;
       }},
      {"n_tokens = 0", kRejectedByQuery,
       [](hwinfer_rope_desc& d) { d.n_tokens = d.q.shape[0] = d.k.shape[0] = 0; }},
      {"theta_base = 0", kRejectedByQuery, [](hwinfer_rope_desc& d) { d.theta_base = 0.0f; }},
      {"unknown mode", kUnsupportedByQuery, [](hwinfer_rope_desc& d) { d.mode = 7; }},
      {"q has dtype bf16", kRejectedByQuery,
       [](hwinfer_rope_desc& d) { d.q.dtype = HWINFER_DTYPE_BF16; }},
      {"q has an unknown dtype", kUnsupportedByQuery, [](hwinfer_rope_desc& d) { d.q.dtype = 99; }},
      {"positions have dtype f32", kRejectedByQuery,
       [](hwinfer_rope_desc& d) { d.positions.dtype = HWINFER_DTYPE_F32; }},
      {"k's shape disagrees with n_kv_heads", kRejectedByQuery,
       [](hwinfer_rope_desc& d) { d.n_kv_heads = 4; }},
      {"q has rank 2", kRejectedByQuery,
       [](hwinfer_rope_desc& d) {
         d.q.rank = 2;
         d.q.shape[1] = heads * hd;
         d.q.shape[2] = 0;
         d.q.strides_bytes[1] = 4;
       }},
      {"struct_size too small", kRejectedByQuery,
       [](hwinfer_rope_desc& d) { d.struct_size = sizeof(hwinfer_kernel_desc) + 8; }},
      {"q runs 4 bytes past its buffer", kRejectedAtLaunch,
       [](hwinfer_rope_desc& d) { d.q.offset_bytes = 4; }},
      {"k is q (aliasing)", kRejectedAtLaunch,
       [](hwinfer_rope_desc& d) {
         d.k = d.q;
         d.n_kv_heads = heads;
       }},
      {"positions have no buffer", kRejectedAtLaunch,
       [](hwinfer_rope_desc& d) { d.positions.buffer = nullptr; }},
  };
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.what);
    hwinfer_rope_desc desc = valid;
    variant.mutate(desc);
    ExpectRejected(device(), stream(), AsKernelDesc(desc),
                   variant.expect == kRejectedAtLaunch     ? QueryCheck::kNotChecked
                   : variant.expect == kUnsupportedByQuery ? QueryCheck::kUnsupported
                                                           : QueryCheck::kNotSupported,
                   "a malformed rope was accepted at enqueue");
  }
  EXPECT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> q_after, Download(stream(), q));
  EXPECT_TRUE(BytesAre(q_after.data(), q_after.size(), kPoisonByte, "q after rejections"));
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> k_after, Download(stream(), k));
  EXPECT_TRUE(BytesAre(k_after.data(), k_after.size(), kPoisonByte, "k after rejections"));
}

INSTANTIATE_TEST_SUITE_P(Rope, RopeTest, testing::ValuesIn(BackendParams()), BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RopeTest);

}  // namespace
}  // namespace hwinfer::conformance
