// attention_prefill_tests.cpp — conformance of attention_prefill against the CPU scalar reference
// (reference/reference_attention.h: straightforward double-precision softmax), on fresh random
// inputs (the seed is in every failure message; HWINFER_CONFORMANCE_SEED=<seed> repeats it).
//
// Covers causal and full attention, F32 and F16 operands, GQA ratios 1, 4 and 8, several packed
// sequences of lengths 1 .. 100 (partial query and key tiles), the optional paged prefix (chunked
// prefill: F16 and I8 pools, shuffled block ids, contexts 0, 1, 16, 17 and 100, partial last
// blocks), outputs poisoned with NaN first and guard bands around every operand; malformed
// query_start / block ids reported by the next synchronize; malformed descriptors rejected.
//
// Tolerances (NMSE over the outputs): F32 1e-10, F16 1e-5. Must not loosen any check per backend.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "case_runner.h"
#include "conformance_fixture.h"
#include "paged_kv_helpers.h"

namespace hwinfer::conformance {
namespace {

using AttentionPrefillTest = ConformanceTest;

struct PrefillCase {
  std::vector<int32_t> new_tokens;   // per sequence
  std::vector<int32_t> prefix_lens;  // per sequence; empty = no cached prefix
  int64_t n_heads = 8, n_kv_heads = 8, head_dim = 64, block_size = 16;

  std::string Describe() const {
    auto list = [](const std::vector<int32_t>& values) {
      std::string text;
      for (int32_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
      return "{" + text + "}";
    };
    return "new tokens " + list(new_tokens) + " prefix " + list(prefix_lens) + " heads " +
           std::to_string(n_heads) + "/" + std::to_string(n_kv_heads) + " head_dim " +
           std::to_string(head_dim);
  }
};

const PrefillCase kCases[] = {
    {{1, 7, 33, 100}, {}, 8, 8, 64, 16},               // GQA 1, partial query and key tiles
    {{70, 5}, {}, 16, 4, 64, 16},                      // GQA 4
    {{64}, {}, 8, 1, 40, 16},                          // GQA 8, odd head_dim
    {{5, 1, 40, 20}, {0, 16, 17, 100}, 8, 2, 64, 16},  // chunked prefill
    {{9, 3}, {1, 23}, 8, 8, 32, 5},                    // odd block size
};

struct PrefillOperands {
  GuardedOperand q, k, v, out, query_start;
};

std::vector<int32_t> QueryStart(const PrefillCase& c) {
  std::vector<int32_t> starts(1, 0);
  for (int32_t n : c.new_tokens) starts.push_back(starts.back() + n);
  return starts;
}

hwinfer_attention_prefill_desc MakeDesc(const PrefillCase& c, uint32_t dtype, bool causal,
                                        const PrefillOperands& ops, const PagedKvHost* host,
                                        const PagedKvDevice* kv) {
  const auto n_seqs = static_cast<int64_t>(c.new_tokens.size());
  const int64_t n_tokens = QueryStart(c).back();
  hwinfer_attention_prefill_desc d;
  std::memset(&d, 0, sizeof(d));
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_ATTENTION_PREFILL;
  d.n_tokens = n_tokens;
  d.n_seqs = n_seqs;
  d.n_heads = c.n_heads;
  d.n_kv_heads = c.n_kv_heads;
  d.head_dim = c.head_dim;
  d.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  d.causal = causal ? 1 : 0;
  d.q = ops.q.View(dtype, {n_tokens, c.n_heads, c.head_dim});
  d.k = ops.k.View(dtype, {n_tokens, c.n_kv_heads, c.head_dim});
  d.v = ops.v.View(dtype, {n_tokens, c.n_kv_heads, c.head_dim});
  d.out = ops.out.View(dtype, {n_tokens, c.n_heads, c.head_dim});
  d.query_start = ops.query_start.View(HWINFER_DTYPE_I32, {n_seqs + 1});
  d.k_cache = d.v_cache = d.k_scales = d.v_scales = d.block_tables = d.context_lens = NoView();
  if (kv != nullptr) {
    d.block_size = c.block_size;
    d.k_cache = kv->KCache(host->shape);
    d.v_cache = kv->VCache(host->shape);
    d.k_scales = kv->KScales(host->shape);
    d.v_scales = kv->VScales(host->shape);
    d.block_tables = kv->block_tables.View(HWINFER_DTYPE_I32, {n_seqs, host->max_blocks_per_seq});
    d.context_lens = kv->context_lens.View(HWINFER_DTYPE_I32, {n_seqs});
  }
  return d;
}

void RunCase(Device& device, Stream& stream, const PrefillCase& c, std::mt19937_64& rng,
             bool* skipped) {
  SCOPED_TRACE(c.Describe());
  const std::vector<int32_t> starts = QueryStart(c);
  const int64_t n_tokens = starts.back();
  const auto q_elems = static_cast<size_t>(n_tokens * c.n_heads * c.head_dim);
  const auto kv_elems = static_cast<size_t>(n_tokens * c.n_kv_heads * c.head_dim);
  const std::vector<float> q_raw = RandomFloats(q_elems, 2.0f, rng);
  const std::vector<float> k_raw = RandomFloats(kv_elems, 1.0f, rng);
  const std::vector<float> v_raw = RandomFloats(kv_elems, 1.0f, rng);
  const bool with_prefix = !c.prefix_lens.empty();
  PagedKvHost host;
  if (with_prefix) host = RandomPagedKv(c.prefix_lens, c.block_size, c.n_kv_heads, c.head_dim, rng);
  for (uint32_t pool_dtype : {HWINFER_DTYPE_F16, HWINFER_DTYPE_I8}) {
    if (!with_prefix && pool_dtype == HWINFER_DTYPE_I8) continue;
    const PagedKvHost::Encoded k_pool =
        with_prefix ? host.Encode(pool_dtype, host.k_raw) : PagedKvHost::Encoded{};
    const PagedKvHost::Encoded v_pool =
        with_prefix ? host.Encode(pool_dtype, host.v_raw) : PagedKvHost::Encoded{};
    for (uint32_t dtype : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}) {
      for (bool causal : {true, false}) {
        SCOPED_TRACE(std::string(DtypeName(dtype)) + (causal ? " causal" : " full") +
                     (with_prefix ? std::string(", pool ") + DtypeName(pool_dtype) : ""));
        const bool half = dtype == HWINFER_DTYPE_F16;
        const std::vector<float> q = half ? RoundedToF16(q_raw) : q_raw;
        const std::vector<float> k = half ? RoundedToF16(k_raw) : k_raw;
        const std::vector<float> v = half ? RoundedToF16(v_raw) : v_raw;
        PrefillOperands ops;
        ASSERT_OK_AND_ASSIGN(ops.q, MakeOperand(device, stream, EncodeAs(dtype, q)));
        ASSERT_OK_AND_ASSIGN(ops.k, MakeOperand(device, stream, EncodeAs(dtype, k)));
        ASSERT_OK_AND_ASSIGN(ops.v, MakeOperand(device, stream, EncodeAs(dtype, v)));
        ASSERT_OK_AND_ASSIGN(
            ops.out,
            MakeOperand(device, stream, std::vector<uint8_t>(q_elems * (half ? 2 : 4), 0xFF)));
        ASSERT_OK_AND_ASSIGN(ops.query_start, MakeOperand(device, stream, AsBytes(starts)));
        PagedKvDevice kv;
        if (with_prefix) {
          ASSERT_OK_AND_ASSIGN(kv, UploadPagedKv(device, stream, host, k_pool, v_pool));
        }
        const hwinfer_attention_prefill_desc desc = MakeDesc(
            c, dtype, causal, ops, with_prefix ? &host : nullptr, with_prefix ? &kv : nullptr);
        if (!RequireKernel(device, AsKernelDesc(desc))) {
          *skipped = true;
          return;
        }
        ASSERT_OK(stream.Launch(AsKernelDesc(desc)));
        ASSERT_OK(stream.Synchronize());
        std::vector<uint8_t> bytes, unused;
        ASSERT_TRUE(ReadOperand(stream, ops.out, &bytes, "out"));
        ASSERT_TRUE(ReadOperand(stream, ops.k, &unused, "k"));
        ASSERT_TRUE(ReadOperand(stream, ops.query_start, &unused, "query_start"));
        if (with_prefix) {
          ASSERT_TRUE(ReadOperand(stream, kv.v_cache, &unused, "v_cache"));
        }
        const std::vector<float> got = DecodeFrom(dtype, bytes);

        std::vector<double> want(q_elems);
        const reference::PagedPool k_ref = k_pool.Pool(host.shape), v_ref = v_pool.Pool(host.shape);
        reference::attention_prefill_reference(
            n_tokens, static_cast<int64_t>(c.new_tokens.size()), c.n_heads, c.n_kv_heads,
            c.head_dim, q.data(), k.data(), v.data(), starts.data(), causal,
            1.0f / std::sqrt(static_cast<float>(c.head_dim)), with_prefix ? &k_ref : nullptr,
            with_prefix ? &v_ref : nullptr, host.block_tables.data(), host.max_blocks_per_seq,
            host.context_lens.data(), want.data());
        size_t non_finite = 0;
        for (float value : got) non_finite += std::isfinite(value) ? 0 : 1;
        EXPECT_EQ(non_finite, 0u) << "outputs left unwritten (NaN poison) or not finite";
        const double tolerance = half ? 1e-5 : 1e-10;
        const double nmse = Nmse(got, want);
        EXPECT_LE(nmse, tolerance) << "NMSE " << nmse << " > " << tolerance;
      }
    }
  }
}

TEST_P(AttentionPrefillTest, MatchesReferenceCausalFullGqaAndPrefix) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed << " (HWINFER_CONFORMANCE_SEED=" << seed
                                  << " repeats these inputs)");
  std::mt19937_64 rng(seed);
  for (const PrefillCase& c : kCases) {
    bool skipped = false;
    RunCase(device(), stream(), c, rng, &skipped);
    if (skipped || HasFatalFailure()) return;
  }
}

// query_start that does not rise from 0 to n_tokens, and a prefix block id out of range, are
// errors from the next synchronize; guard bands stay intact.
TEST_P(AttentionPrefillTest, BadQueryStartAndBlockIdsAreErrors) {
  std::mt19937_64 rng(TestSeed());
  const PrefillCase c{{4, 6}, {20, 3}, 4, 2, 16, 8};
  const std::vector<float> q = RandomFloats(10 * 4 * 16, 1.0f, rng);
  const std::vector<float> kv_values = RandomFloats(10 * 2 * 16, 1.0f, rng);
  const PagedKvHost base =
      RandomPagedKv(c.prefix_lens, c.block_size, c.n_kv_heads, c.head_dim, rng);
  struct Variant {
    const char* what;
    std::vector<int32_t> starts;
    int32_t block_id;  // written into block_tables[0][0]; -2 leaves it
  };
  const Variant variants[] = {
      {"query_start[0] = 1", {1, 4, 10}, -2},
      {"query_start falls", {0, 6, 4}, -2},
      {"query_start ends short of n_tokens", {0, 4, 9}, -2},
      {"query_start ends past n_tokens", {0, 4, 11}, -2},
      {"block id = num_blocks", {0, 4, 10}, static_cast<int32_t>(base.shape.num_blocks)},
      {"block id = -1", {0, 4, 10}, -1},
  };
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.what);
    PagedKvHost host = base;
    if (variant.block_id != -2) host.block_tables[0] = variant.block_id;
    const PagedKvHost::Encoded k = host.Encode(HWINFER_DTYPE_F16, host.k_raw);
    const PagedKvHost::Encoded v = host.Encode(HWINFER_DTYPE_F16, host.v_raw);
    ASSERT_OK_AND_ASSIGN(PagedKvDevice kv, UploadPagedKv(device(), stream(), host, k, v));
    PrefillOperands ops;
    ASSERT_OK_AND_ASSIGN(ops.q, MakeOperand(device(), stream(), AsBytes(q)));
    ASSERT_OK_AND_ASSIGN(ops.k, MakeOperand(device(), stream(), AsBytes(kv_values)));
    ASSERT_OK_AND_ASSIGN(ops.v, MakeOperand(device(), stream(), AsBytes(kv_values)));
    ASSERT_OK_AND_ASSIGN(ops.out,
                         MakeOperand(device(), stream(), std::vector<uint8_t>(q.size() * 4)));
    ASSERT_OK_AND_ASSIGN(ops.query_start, MakeOperand(device(), stream(), AsBytes(variant.starts)));
    const hwinfer_attention_prefill_desc desc =
        MakeDesc(c, HWINFER_DTYPE_F32, true, ops, &host, &kv);
    if (!RequireKernel(device(), AsKernelDesc(desc))) return;
    const Status launched = stream().Launch(AsKernelDesc(desc));
    const Status synced = stream().Synchronize();
    EXPECT_FALSE(launched.ok() && synced.ok()) << "the bad input was accepted";
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(ReadOperand(stream(), ops.out, &bytes, "out"));
  }
  EXPECT_OK(stream().Synchronize());
}

// A valid prefill with an I8 prefix, mutated one way at a time.
TEST_P(AttentionPrefillTest, MalformedDescriptorsAreRejected) {
  std::mt19937_64 rng(TestSeed());
  const PrefillCase c{{4, 6}, {20, 3}, 4, 2, 16, 8};
  const PagedKvHost host =
      RandomPagedKv(c.prefix_lens, c.block_size, c.n_kv_heads, c.head_dim, rng);
  const PagedKvHost::Encoded k = host.Encode(HWINFER_DTYPE_I8, host.k_raw);
  const PagedKvHost::Encoded v = host.Encode(HWINFER_DTYPE_I8, host.v_raw);
  ASSERT_OK_AND_ASSIGN(PagedKvDevice kv, UploadPagedKv(device(), stream(), host, k, v));
  const std::vector<float> q = RandomFloats(10 * 4 * 16, 1.0f, rng);
  const std::vector<float> kv_values = RandomFloats(10 * 2 * 16, 1.0f, rng);
  const std::vector<uint8_t> poison(q.size() * 4, kPoisonByte);
  PrefillOperands ops;
  ASSERT_OK_AND_ASSIGN(ops.q, MakeOperand(device(), stream(), AsBytes(q)));
  ASSERT_OK_AND_ASSIGN(ops.k, MakeOperand(device(), stream(), AsBytes(kv_values)));
  ASSERT_OK_AND_ASSIGN(ops.v, MakeOperand(device(), stream(), AsBytes(kv_values)));
  ASSERT_OK_AND_ASSIGN(ops.out, MakeOperand(device(), stream(), poison));
  ASSERT_OK_AND_ASSIGN(ops.query_start, MakeOperand(device(), stream(), AsBytes(QueryStart(c))));
  const hwinfer_attention_prefill_desc valid =
      MakeDesc(c, HWINFER_DTYPE_F32, true, ops, &host, &kv);
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;
  using Desc = hwinfer_attention_prefill_desc;
  struct Variant {
    const char* what;
    bool shape_or_dtype;
    void (*mutate)(Desc&);
  };
  const Variant variants[] = {
      {"causal = 2", true, [](Desc& d) { d.causal = 2; }},
      {"n_heads not a multiple of n_kv_heads", true,
       [](Desc& d) {
         d.n_heads = 3;
         d.q.shape[1] = d.out.shape[1] = 3;
       }},
      {"out has dtype F16 while q is F32", true, [](Desc& d) { d.out.dtype = HWINFER_DTYPE_F16; }},
      {"k has dtype I32", true, [](Desc& d) { d.k.dtype = HWINFER_DTYPE_I32; }},
      {"query_start has n_seqs entries", true, [](Desc& d) { d.query_start.shape[0] = 2; }},
      {"v disagrees with n_tokens", true, [](Desc& d) { d.v.shape[0] = 9; }},
      {"k_cache has another head_dim", true, [](Desc& d) { d.k_cache.shape[3] = 8; }},
      {"block_tables has rank 1", true, [](Desc& d) { d.block_tables.rank = 1; }},
      {"block_size = 0 with a prefix", true, [](Desc& d) { d.block_size = 0; }},
      {"I8 prefix without v_scales", false, [](Desc& d) { d.v_scales.buffer = nullptr; }},
      {"out runs past its buffer", false,
       [](Desc& d) { d.out.offset_bytes += kGuardBandBytes + 4; }},
  };
  ExpectVariantsRejected(device(), stream(), valid, variants,
                         "a malformed attention_prefill was accepted at enqueue");
  EXPECT_OK(stream().Synchronize());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadOperand(stream(), ops.out, &bytes, "out"));
  EXPECT_TRUE(BytesEqual(bytes.data(), poison.data(), bytes.size(), "out after rejected launches"));
}

INSTANTIATE_TEST_SUITE_P(AttentionPrefill, AttentionPrefillTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionPrefillTest);

}  // namespace
}  // namespace hwinfer::conformance
