// attention_decode_tests.cpp — conformance of attention_decode_paged against the CPU scalar
// reference (reference/reference_attention.h: plain softmax in double over the gathered keys), on
// fresh random inputs (the seed is in every failure message; HWINFER_CONFORMANCE_SEED=<seed>
// repeats it).
//
// Covers q/out F32 and F16, F16 and I8 pools, GQA ratios 1, 4 and 8, block tables with shuffled
// ids (entries past a sequence's length are INT32_MAX and must be ignored), partial last blocks,
// contexts 1, 7, 16, 17, 100, 1000 and 4096, outputs poisoned with NaN first and guard bands
// around every operand; int8 KV against the f16 KV result within a stated bound; block ids and
// context lengths out of range reported by the next synchronize; malformed descriptors rejected.
//
// Tolerances (NMSE = sum (x - ref)^2 / sum ref^2 over the outputs): F32 out 1e-10, F16 out 1e-5
// (both against the reference on the same pool); I8 pool vs F16 pool of the same values 1e-3.
// Must not loosen any check per backend.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "case_runner.h"
#include "conformance_fixture.h"
#include "paged_kv_helpers.h"

namespace hwinfer::conformance {
namespace {

using AttentionDecodeTest = ConformanceTest;

struct DecodeCase {
  std::vector<int32_t> context_lens;
  int64_t n_heads = 8, n_kv_heads = 8, head_dim = 64, block_size = 16;

  std::string Describe() const {
    std::string lens;
    for (int32_t len : context_lens) lens += (lens.empty() ? "" : ",") + std::to_string(len);
    return "contexts {" + lens + "} heads " + std::to_string(n_heads) + "/" +
           std::to_string(n_kv_heads) + " head_dim " + std::to_string(head_dim) + " block " +
           std::to_string(block_size);
  }
};

const DecodeCase kCases[] = {
    {{1, 7, 16, 17, 100}, 8, 8, 64, 16},  // GQA 1, partial and exact blocks
    {{1000, 17, 1}, 16, 4, 64, 16},       // GQA 4
    {{4096}, 8, 1, 64, 16},               // GQA 8 (MQA), batch 1, long: split over the length
    {{7, 100, 33}, 8, 2, 40, 5},          // odd head_dim and block size
    {{9, 50, 203}, 12, 4, 36, 3},         // head_dim not a multiple of 8, GQA 3
};

hwinfer_attention_decode_paged_desc MakeDesc(const DecodeCase& c, const PagedKvHost& host,
                                             const PagedKvDevice& kv, uint32_t q_dtype,
                                             const GuardedOperand& q, const GuardedOperand& out) {
  const auto n_seqs = static_cast<int64_t>(c.context_lens.size());
  hwinfer_attention_decode_paged_desc d;
  std::memset(&d, 0, sizeof(d));
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_ATTENTION_DECODE_PAGED;
  d.n_seqs = n_seqs;
  d.n_heads = c.n_heads;
  d.n_kv_heads = c.n_kv_heads;
  d.head_dim = c.head_dim;
  d.block_size = c.block_size;
  d.max_blocks_per_seq = host.max_blocks_per_seq;
  d.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  d.q = q.View(q_dtype, {n_seqs, c.n_heads, c.head_dim});
  d.out = out.View(q_dtype, {n_seqs, c.n_heads, c.head_dim});
  d.k_cache = kv.KCache(host.shape);
  d.v_cache = kv.VCache(host.shape);
  d.k_scales = kv.KScales(host.shape);
  d.v_scales = kv.VScales(host.shape);
  d.block_tables = host.block_tables.empty()
                       ? NoView()
                       : kv.block_tables.View(HWINFER_DTYPE_I32, {n_seqs, host.max_blocks_per_seq});
  d.context_lens = kv.context_lens.View(HWINFER_DTYPE_I32, {n_seqs});
  return d;
}

// Launches one decode and returns its output (empty when the case did not run).
std::vector<float> RunDecode(Device& device, Stream& stream, const DecodeCase& c,
                             const PagedKvHost& host, const PagedKvHost::Encoded& k,
                             const PagedKvHost::Encoded& v, uint32_t q_dtype,
                             const std::vector<float>& q_values, bool* skipped) {
  std::vector<float> result;
  auto kv = UploadPagedKv(device, stream, host, k, v);
  EXPECT_TRUE(kv.ok()) << kv.status().ToString();
  if (!kv.ok()) return result;
  auto q = MakeOperand(device, stream, EncodeAs(q_dtype, q_values));
  const size_t out_bytes = q_values.size() * (q_dtype == HWINFER_DTYPE_F16 ? 2 : 4);
  auto out = MakeOperand(device, stream, std::vector<uint8_t>(out_bytes, 0xFF));  // NaN
  EXPECT_TRUE(q.ok() && out.ok());
  if (!q.ok() || !out.ok()) return result;
  const hwinfer_attention_decode_paged_desc desc = MakeDesc(c, host, *kv, q_dtype, *q, *out);
  if (!RequireKernel(device, AsKernelDesc(desc))) {
    *skipped = true;
    return result;
  }
  EXPECT_OK(stream.Launch(AsKernelDesc(desc)));
  EXPECT_OK(stream.Synchronize());
  std::vector<uint8_t> bytes, unused;
  EXPECT_TRUE(ReadOperand(stream, *out, &bytes, "out"));
  EXPECT_TRUE(ReadOperand(stream, kv->k_cache, &unused, "k_cache"));
  EXPECT_TRUE(ReadOperand(stream, kv->v_scales, &unused, "v_scales"));
  EXPECT_TRUE(ReadOperand(stream, kv->block_tables, &unused, "block_tables"));
  EXPECT_TRUE(ReadOperand(stream, *q, &unused, "q"));
  if (bytes.size() != out_bytes) return result;
  result = DecodeFrom(q_dtype, bytes);
  return result;
}

std::vector<double> Reference(const DecodeCase& c, const PagedKvHost& host,
                              const PagedKvHost::Encoded& k, const PagedKvHost::Encoded& v,
                              const std::vector<float>& q) {
  std::vector<double> out(q.size());
  reference::attention_decode_paged_reference(
      k.Pool(host.shape), v.Pool(host.shape), static_cast<int64_t>(c.context_lens.size()),
      c.n_heads, q.data(), host.block_tables.data(), host.max_blocks_per_seq,
      host.context_lens.data(), 1.0f / std::sqrt(static_cast<float>(c.head_dim)), out.data());
  return out;
}

void ExpectClose(const std::vector<float>& got, const std::vector<double>& want, double tolerance,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size());
  size_t non_finite = 0;
  for (float value : got) non_finite += std::isfinite(value) ? 0 : 1;
  EXPECT_EQ(non_finite, 0u) << what << ": outputs left unwritten (NaN poison) or not finite";
  const double nmse = Nmse(got, want);
  EXPECT_LE(nmse, tolerance) << what << ": NMSE " << nmse << " > " << tolerance;
}

TEST_P(AttentionDecodeTest, MatchesReferenceAcrossDtypesGqaAndContexts) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed << " (HWINFER_CONFORMANCE_SEED=" << seed
                                  << " repeats these inputs)");
  std::mt19937_64 rng(seed);
  for (const DecodeCase& c : kCases) {
    SCOPED_TRACE(c.Describe());
    const PagedKvHost host =
        RandomPagedKv(c.context_lens, c.block_size, c.n_kv_heads, c.head_dim, rng);
    const size_t q_elems = c.context_lens.size() * static_cast<size_t>(c.n_heads * c.head_dim);
    const std::vector<float> q_raw = RandomFloats(q_elems, 2.0f, rng);
    std::vector<float> f16_out;  // F32 q, F16 pool: the baseline for the I8 bound
    std::vector<double> f16_reference;
    for (uint32_t cache : {HWINFER_DTYPE_F16, HWINFER_DTYPE_I8}) {
      const PagedKvHost::Encoded k = host.Encode(cache, host.k_raw);
      const PagedKvHost::Encoded v = host.Encode(cache, host.v_raw);
      for (uint32_t q_dtype : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}) {
        SCOPED_TRACE(std::string("q ") + DtypeName(q_dtype) + ", pool " + DtypeName(cache));
        const std::vector<float> q = q_dtype == HWINFER_DTYPE_F16 ? RoundedToF16(q_raw) : q_raw;
        bool skipped = false;
        const std::vector<float> got =
            RunDecode(device(), stream(), c, host, k, v, q_dtype, q, &skipped);
        if (skipped) return;
        if (got.empty()) continue;
        const std::vector<double> want = Reference(c, host, k, v, q);
        ExpectClose(got, want, q_dtype == HWINFER_DTYPE_F16 ? 1e-5 : 1e-10, "vs reference");
        if (q_dtype != HWINFER_DTYPE_F32) continue;
        if (cache == HWINFER_DTYPE_F16) {
          f16_out = got;
          f16_reference = want;
        } else if (!f16_reference.empty()) {
          ExpectClose(got, f16_reference, 1e-3, "I8 pool vs the F16 pool's reference");
        }
      }
    }
  }
}

// A used block id outside [0, num_blocks) and a context longer than the table are errors from the
// next synchronize, never reads outside the pools; the guard bands stay intact.
TEST_P(AttentionDecodeTest, BadBlockIdsAndContextLengthsAreErrors) {
  std::mt19937_64 rng(TestSeed());
  const DecodeCase c{{20, 5}, 4, 2, 16, 8};
  PagedKvHost base = RandomPagedKv(c.context_lens, c.block_size, c.n_kv_heads, c.head_dim, rng);
  const std::vector<float> q = RandomFloats(2 * 4 * 16, 1.0f, rng);
  struct Variant {
    const char* what;
    void (*mutate)(PagedKvHost&);
  };
  const Variant variants[] = {
      {"block id = num_blocks",
       [](PagedKvHost& h) { h.block_tables[1] = static_cast<int32_t>(h.shape.num_blocks); }},
      {"block id = -1", [](PagedKvHost& h) { h.block_tables[0] = -1; }},
      {"block id = INT32_MIN in the last used block",
       [](PagedKvHost& h) {
         h.block_tables[static_cast<size_t>(h.max_blocks_per_seq)] = INT32_MIN;
       }},
      {"context longer than the table",
       [](PagedKvHost& h) {
         h.context_lens[1] = static_cast<int32_t>(h.max_blocks_per_seq * h.shape.block_size + 1);
       }},
      {"context 0", [](PagedKvHost& h) { h.context_lens[0] = 0; }},
  };
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.what);
    PagedKvHost host = base;
    variant.mutate(host);
    const PagedKvHost::Encoded k = host.Encode(HWINFER_DTYPE_F16, host.k_raw);
    const PagedKvHost::Encoded v = host.Encode(HWINFER_DTYPE_F16, host.v_raw);
    ASSERT_OK_AND_ASSIGN(PagedKvDevice kv, UploadPagedKv(device(), stream(), host, k, v));
    ASSERT_OK_AND_ASSIGN(GuardedOperand q_op, MakeOperand(device(), stream(), AsBytes(q)));
    ASSERT_OK_AND_ASSIGN(GuardedOperand out,
                         MakeOperand(device(), stream(), std::vector<uint8_t>(q.size() * 4, 0)));
    const hwinfer_attention_decode_paged_desc desc =
        MakeDesc(c, host, kv, HWINFER_DTYPE_F32, q_op, out);
    if (!RequireKernel(device(), AsKernelDesc(desc))) return;
    const Status launched = stream().Launch(AsKernelDesc(desc));
    const Status synced = stream().Synchronize();
    EXPECT_FALSE(launched.ok() && synced.ok()) << "the bad table was accepted";
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(ReadOperand(stream(), out, &bytes, "out"));
  }
  EXPECT_OK(stream().Synchronize());
}

// A valid decode, mutated one way at a time.
TEST_P(AttentionDecodeTest, MalformedDescriptorsAreRejected) {
  std::mt19937_64 rng(TestSeed());
  const DecodeCase c{{20, 5}, 4, 2, 16, 8};
  const PagedKvHost host =
      RandomPagedKv(c.context_lens, c.block_size, c.n_kv_heads, c.head_dim, rng);
  const PagedKvHost::Encoded k = host.Encode(HWINFER_DTYPE_I8, host.k_raw);
  const PagedKvHost::Encoded v = host.Encode(HWINFER_DTYPE_I8, host.v_raw);
  ASSERT_OK_AND_ASSIGN(PagedKvDevice kv, UploadPagedKv(device(), stream(), host, k, v));
  const std::vector<float> q = RandomFloats(2 * 4 * 16, 1.0f, rng);
  ASSERT_OK_AND_ASSIGN(GuardedOperand q_op, MakeOperand(device(), stream(), AsBytes(q)));
  const std::vector<uint8_t> poison(q.size() * 4, kPoisonByte);
  ASSERT_OK_AND_ASSIGN(GuardedOperand out, MakeOperand(device(), stream(), poison));
  const hwinfer_attention_decode_paged_desc valid =
      MakeDesc(c, host, kv, HWINFER_DTYPE_F32, q_op, out);
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;
  using Desc = hwinfer_attention_decode_paged_desc;
  struct Variant {
    const char* what;
    bool shape_or_dtype;
    void (*mutate)(Desc&);
  };
  const Variant variants[] = {
      {"n_heads not a multiple of n_kv_heads", true,
       [](Desc& d) {
         d.n_heads = 3;
         d.q.shape[1] = d.out.shape[1] = 3;
       }},
      {"out has dtype F16 while q is F32", true, [](Desc& d) { d.out.dtype = HWINFER_DTYPE_F16; }},
      {"q has dtype I8", true, [](Desc& d) { d.q.dtype = HWINFER_DTYPE_I8; }},
      {"k_cache has rank 3", true, [](Desc& d) { d.k_cache.rank = 3; }},
      {"v_cache has another head_dim", true, [](Desc& d) { d.v_cache.shape[3] = 8; }},
      {"block_tables disagrees with max_blocks_per_seq", true,
       [](Desc& d) { d.max_blocks_per_seq += 1; }},
      {"context_lens has dtype F32", true,
       [](Desc& d) { d.context_lens.dtype = HWINFER_DTYPE_F32; }},
      {"block_size = 0", true, [](Desc& d) { d.block_size = 0; }},
      {"I8 pool without k_scales", false, [](Desc& d) { d.k_scales.buffer = nullptr; }},
      {"out runs past its buffer", false,
       [](Desc& d) { d.out.offset_bytes += kGuardBandBytes + 4; }},
  };
  ExpectVariantsRejected(device(), stream(), valid, variants,
                         "a malformed attention_decode_paged was accepted at enqueue");
  EXPECT_OK(stream().Synchronize());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadOperand(stream(), out, &bytes, "out"));
  EXPECT_TRUE(BytesEqual(bytes.data(), poison.data(), bytes.size(), "out after rejected launches"));
}

INSTANTIATE_TEST_SUITE_P(AttentionDecode, AttentionDecodeTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionDecodeTest);

}  // namespace
}  // namespace hwinfer::conformance
