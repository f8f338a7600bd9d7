// kv_append_tests.cpp — conformance of kv_append (new keys/values into the paged KV pools) against
// the CPU scalar reference (reference/reference_attention.h), on fresh random inputs (the seed is
// in every failure message; HWINFER_CONFORMANCE_SEED=<seed> repeats it).
//
// Pins the ABI layout: pools [num_blocks, block_size, n_kv_heads, head_dim] read back and compared
// element by element with where plugin.h says each token goes (slot = block * block_size + row),
// scales [num_blocks, n_kv_heads]; rows not addressed keep their old bytes; negative slots skip;
// int8 pools requantize a block-head when a token does not fit its scale. Guard bands around every
// operand must stay untouched. Must not loosen any check per backend.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "case_runner.h"
#include "conformance_fixture.h"
#include "paged_kv_helpers.h"
#include "reference/half.h"
#include "reference/reference_attention.h"

namespace hwinfer::conformance {
namespace {

using KvAppendTest = ConformanceTest;

struct AppendCase {
  uint32_t src_dtype = HWINFER_DTYPE_F32;
  uint32_t cache_dtype = HWINFER_DTYPE_F16;
  int64_t n_kv_heads = 4, head_dim = 64, block_size = 16, num_blocks = 6;

  std::string Describe() const {
    return std::string("src ") + DtypeName(src_dtype) + " cache " + DtypeName(cache_dtype) +
           " heads " + std::to_string(n_kv_heads) + " head_dim " + std::to_string(head_dim) +
           " block " + std::to_string(block_size) + " blocks " + std::to_string(num_blocks);
  }
};

// The host image of one pool (F16 bits or int8) and its scales.
struct PoolImage {
  std::vector<uint16_t> f16;
  std::vector<int8_t> i8;
  std::vector<float> scales;
};

// A pool image with random old contents: finite f16 values, or int8 in [-127, 127] with half the
// block-heads fresh (scale 0) and the rest a random scale.
PoolImage RandomPool(const AppendCase& c, std::mt19937_64& rng) {
  const size_t elems = static_cast<size_t>(c.num_blocks * c.block_size * c.n_kv_heads * c.head_dim);
  PoolImage pool;
  if (c.cache_dtype == HWINFER_DTYPE_F16) {
    pool.f16 = ToF16Bits(RandomFloats(elems, 2.0f, rng));
    return pool;
  }
  std::uniform_int_distribution<int> q(-127, 127);
  std::uniform_real_distribution<float> scale(0.001f, 0.02f);
  pool.i8.resize(elems);
  for (int8_t& value : pool.i8) value = static_cast<int8_t>(q(rng));
  pool.scales.resize(static_cast<size_t>(c.num_blocks * c.n_kv_heads));
  for (float& value : pool.scales) value = rng() % 2 == 0 ? 0.0f : scale(rng);
  return pool;
}

std::vector<uint8_t> PoolBytes(const PoolImage& pool) {
  return pool.f16.empty() ? AsBytes(pool.i8) : AsBytes(pool.f16);
}

// Applies the reference append of |src| (already rounded to the source dtype) to |pool|.
void ReferenceAppend(const AppendCase& c, int64_t n_tokens, const std::vector<float>& src,
                     const std::vector<int32_t>& slots, PoolImage& pool) {
  const reference::PagedPoolShape shape{c.num_blocks, c.block_size, c.n_kv_heads, c.head_dim};
  if (c.cache_dtype == HWINFER_DTYPE_F16) {
    reference::kv_append_reference_f16(shape, n_tokens, src.data(), slots.data(), pool.f16.data());
  } else {
    reference::kv_append_reference_i8(shape, n_tokens, src.data(), slots.data(), pool.i8.data(),
                                      pool.scales.data());
  }
}

// Compares the device's pool with the expected image: F16 bit-exact; I8 scales within 1e-6
// relative and values within one step (a division rounded differently may flip a tie).
void ExpectPoolMatches(const std::vector<uint8_t>& cache, const std::vector<uint8_t>& scales,
                       const PoolImage& expected, const char* what) {
  if (!expected.f16.empty()) {
    const std::vector<uint8_t> want = AsBytes(expected.f16);
    EXPECT_TRUE(BytesEqual(cache.data(), want.data(), want.size(), what));
    return;
  }
  const std::vector<float> got_scales = FromBytes<float>(scales);
  size_t bad_scales = 0, bad_values = 0;
  for (size_t i = 0; i < expected.scales.size(); ++i) {
    const float want = expected.scales[i];
    if (!(std::fabs(got_scales[i] - want) <= 1e-6f * want)) ++bad_scales;
  }
  for (size_t i = 0; i < expected.i8.size(); ++i) {
    if (std::abs(static_cast<int>(static_cast<int8_t>(cache[i])) - expected.i8[i]) > 1) {
      ++bad_values;
    }
  }
  EXPECT_EQ(bad_scales, 0u) << what << ": scales differ from the reference";
  EXPECT_EQ(bad_values, 0u) << what << ": int8 values differ from the reference by more than 1";
}

hwinfer_kv_append_desc MakeDesc(const AppendCase& c, int64_t n_tokens, const GuardedOperand& k,
                                const GuardedOperand& v, const GuardedOperand& slots,
                                const GuardedOperand& k_cache, const GuardedOperand& v_cache,
                                const GuardedOperand* k_scales, const GuardedOperand* v_scales) {
  hwinfer_kv_append_desc d;
  std::memset(&d, 0, sizeof(d));
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_KV_APPEND;
  d.n_tokens = n_tokens;
  d.n_kv_heads = c.n_kv_heads;
  d.head_dim = c.head_dim;
  d.block_size = c.block_size;
  d.num_blocks = c.num_blocks;
  d.k = k.View(c.src_dtype, {n_tokens, c.n_kv_heads, c.head_dim});
  d.v = v.View(c.src_dtype, {n_tokens, c.n_kv_heads, c.head_dim});
  d.slot_mapping = slots.View(HWINFER_DTYPE_I32, {n_tokens});
  d.k_cache = k_cache.View(c.cache_dtype, {c.num_blocks, c.block_size, c.n_kv_heads, c.head_dim});
  d.v_cache = v_cache.View(c.cache_dtype, {c.num_blocks, c.block_size, c.n_kv_heads, c.head_dim});
  d.k_scales = k_scales != nullptr ? k_scales->View(HWINFER_DTYPE_F32, {c.num_blocks, c.n_kv_heads})
                                   : NoView();
  d.v_scales = v_scales != nullptr ? v_scales->View(HWINFER_DTYPE_F32, {c.num_blocks, c.n_kv_heads})
                                   : NoView();
  return d;
}

// Two appends into the same pools (the second with larger values, so int8 block-heads rescale),
// each into shuffled, never reused slots with about one token in eight skipped (slot -1).
void RunAppendCase(Device& device, Stream& stream, const AppendCase& c, std::mt19937_64& rng) {
  SCOPED_TRACE(c.Describe());
  const bool i8 = c.cache_dtype == HWINFER_DTYPE_I8;
  PoolImage k_pool = RandomPool(c, rng), v_pool = RandomPool(c, rng);
  const std::vector<float> no_scales(static_cast<size_t>(c.num_blocks * c.n_kv_heads), 0.0f);
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_cache, MakeOperand(device, stream, PoolBytes(k_pool)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_cache, MakeOperand(device, stream, PoolBytes(v_pool)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_scales,
                       MakeOperand(device, stream, AsBytes(i8 ? k_pool.scales : no_scales)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_scales,
                       MakeOperand(device, stream, AsBytes(i8 ? v_pool.scales : no_scales)));
  const std::vector<int32_t> all_slots =
      ShuffledIds(static_cast<int32_t>(c.num_blocks * c.block_size), rng);
  const int64_t per_round = static_cast<int64_t>(all_slots.size()) / 2;
  const int64_t row = c.n_kv_heads * c.head_dim;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "first append" : "second append (larger values)");
    std::vector<int32_t> slots(all_slots.begin() + round * per_round,
                               all_slots.begin() + (round + 1) * per_round);
    for (int32_t& slot : slots) {
      if (rng() % 8 == 0) slot = -1;
    }
    const float amplitude = round == 0 ? 1.0f : 4.0f;
    std::vector<float> k = RandomFloats(static_cast<size_t>(per_round * row), amplitude, rng);
    std::vector<float> v = RandomFloats(static_cast<size_t>(per_round * row), amplitude, rng);
    if (c.src_dtype == HWINFER_DTYPE_F16) {
      k = RoundedToF16(k);
      v = RoundedToF16(v);
    }
    ASSERT_OK_AND_ASSIGN(GuardedOperand k_op,
                         MakeOperand(device, stream, EncodeAs(c.src_dtype, k)));
    ASSERT_OK_AND_ASSIGN(GuardedOperand v_op,
                         MakeOperand(device, stream, EncodeAs(c.src_dtype, v)));
    ASSERT_OK_AND_ASSIGN(GuardedOperand slot_op, MakeOperand(device, stream, AsBytes(slots)));
    const hwinfer_kv_append_desc desc =
        MakeDesc(c, per_round, k_op, v_op, slot_op, k_cache, v_cache, i8 ? &k_scales : nullptr,
                 i8 ? &v_scales : nullptr);
    if (!RequireKernel(device, AsKernelDesc(desc))) return;
    ASSERT_OK(stream.Launch(AsKernelDesc(desc)));
    ASSERT_OK(stream.Synchronize());
    ReferenceAppend(c, per_round, k, slots, k_pool);
    ReferenceAppend(c, per_round, v, slots, v_pool);

    std::vector<uint8_t> k_bytes, v_bytes, ks_bytes, vs_bytes, unused;
    ASSERT_TRUE(ReadOperand(stream, k_cache, &k_bytes, "k_cache"));
    ASSERT_TRUE(ReadOperand(stream, v_cache, &v_bytes, "v_cache"));
    ASSERT_TRUE(ReadOperand(stream, k_scales, &ks_bytes, "k_scales"));
    ASSERT_TRUE(ReadOperand(stream, v_scales, &vs_bytes, "v_scales"));
    ASSERT_TRUE(ReadOperand(stream, k_op, &unused, "k (input)"));
    EXPECT_TRUE(BytesEqual(unused.data(), EncodeAs(c.src_dtype, k).data(), unused.size(), "k"));
    ExpectPoolMatches(k_bytes, ks_bytes, k_pool, "k_cache");
    ExpectPoolMatches(v_bytes, vs_bytes, v_pool, "v_cache");
    if (!i8) {
      // The layout itself, independent of the reference: token t, head h, element d of k lives at
      // element ((slot * n_kv_heads) + h) * head_dim + d of the pool.
      const std::vector<uint16_t> pool = FromBytes<uint16_t>(k_bytes);
      int64_t misplaced = 0;
      for (int64_t t = 0; t < per_round; ++t) {
        if (slots[static_cast<size_t>(t)] < 0) continue;
        for (int64_t i = 0; i < row; ++i) {
          const uint16_t want = reference::f32_to_f16(k[static_cast<size_t>(t * row + i)]);
          if (pool[static_cast<size_t>(slots[static_cast<size_t>(t)] * row + i)] != want) {
            ++misplaced;
          }
        }
      }
      EXPECT_EQ(misplaced, 0) << "k values not where plugin.h's paged layout puts them";
    }
  }
  // The scales buffer of an F16 pool is not an operand: it must not have been touched.
  if (!i8) {
    std::vector<uint8_t> ks_bytes;
    ASSERT_TRUE(ReadOperand(stream, k_scales, &ks_bytes, "k_scales (unused)"));
    EXPECT_TRUE(
        BytesEqual(ks_bytes.data(), AsBytes(no_scales).data(), ks_bytes.size(), "unused k_scales"));
  }
}

TEST_P(KvAppendTest, MatchesReferenceLayoutInShuffledSlots) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed << " (HWINFER_CONFORMANCE_SEED=" << seed
                                  << " repeats these inputs)");
  std::mt19937_64 rng(seed);
  for (uint32_t cache : {HWINFER_DTYPE_F16, HWINFER_DTYPE_I8}) {
    for (uint32_t src : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}) {
      AppendCase c;
      c.src_dtype = src;
      c.cache_dtype = cache;
      RunAppendCase(device(), stream(), c, rng);
      c.n_kv_heads = 1;
      c.head_dim = 40;
      c.block_size = 5;
      c.num_blocks = 9;
      RunAppendCase(device(), stream(), c, rng);
      if (HasFatalFailure() || IsSkipped()) return;
    }
  }
}

// One int8 block-head, three tokens in one launch: a fresh block (scale 0) takes the first
// token's scale; a token with 4x the absmax rescales the block (the first row requantized); a
// smaller token keeps the scale. The other block (scale 0.5) must not change.
TEST_P(KvAppendTest, Int8BlockRescalesWhenATokenDoesNotFit) {
  AppendCase c;
  c.cache_dtype = HWINFER_DTYPE_I8;
  c.n_kv_heads = 1;
  c.head_dim = 8;
  c.block_size = 4;
  c.num_blocks = 2;
  const std::vector<float> x = {1.0f, -0.5f, 0.25f, 0.75f, -1.0f, 0.1f,  0.0f,  0.3f,     // slot 0
                                4.0f, -2.0f, 0.5f,  3.0f,  -1.5f, 0.2f,  -4.0f, 1.0f,     // slot 2
                                2.0f, -2.0f, 1.0f,  0.0f,  0.5f,  -0.1f, 1.5f,  -0.75f};  // slot 3
  const std::vector<int32_t> slots = {0, 2, 3};
  std::vector<int8_t> pool(2 * 4 * 8, 0);
  for (size_t i = 32; i < pool.size(); ++i) pool[i] = static_cast<int8_t>(i % 50);
  const std::vector<float> scales = {0.0f, 0.5f};
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_op, MakeOperand(device(), stream(), AsBytes(x)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_op, MakeOperand(device(), stream(), AsBytes(x)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand slot_op, MakeOperand(device(), stream(), AsBytes(slots)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_cache, MakeOperand(device(), stream(), AsBytes(pool)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_cache, MakeOperand(device(), stream(), AsBytes(pool)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_scales, MakeOperand(device(), stream(), AsBytes(scales)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_scales, MakeOperand(device(), stream(), AsBytes(scales)));
  const hwinfer_kv_append_desc desc =
      MakeDesc(c, 3, k_op, v_op, slot_op, k_cache, v_cache, &k_scales, &v_scales);
  if (!RequireKernel(device(), AsKernelDesc(desc))) return;
  ASSERT_OK(stream().Launch(AsKernelDesc(desc)));
  ASSERT_OK(stream().Synchronize());

  const float s_first = 1.0f / 127.0f, s_final = 4.0f / 127.0f;
  auto quantize = [](float value, float scale) {
    return static_cast<int>(std::clamp(std::nearbyint(value / scale), -127.0f, 127.0f));
  };
  for (const GuardedOperand* cache : {&k_cache, &v_cache}) {
    const bool is_k = cache == &k_cache;
    SCOPED_TRACE(is_k ? "k" : "v");
    std::vector<uint8_t> cache_bytes, scale_bytes;
    ASSERT_TRUE(ReadOperand(stream(), *cache, &cache_bytes, "cache"));
    ASSERT_TRUE(ReadOperand(stream(), is_k ? k_scales : v_scales, &scale_bytes, "scales"));
    const std::vector<int8_t> q = FromBytes<int8_t>(cache_bytes);
    const std::vector<float> got_scales = FromBytes<float>(scale_bytes);
    EXPECT_NEAR(got_scales[0], s_final, 1e-6f * s_final) << "block 0 scale = absmax / 127";
    EXPECT_EQ(got_scales[1], 0.5f) << "block 1 was not appended to";
    for (int d = 0; d < 8; ++d) {
      SCOPED_TRACE(testing::Message() << "element " << d);
      const int first = quantize(x[static_cast<size_t>(d)], s_first);
      const int requantized = quantize(static_cast<float>(first) * s_first, s_final);
      EXPECT_LE(std::abs(q[static_cast<size_t>(d)] - requantized), 1) << "row 0 requantized";
      EXPECT_LE(std::fabs(q[static_cast<size_t>(d)] * s_final - x[static_cast<size_t>(d)]),
                s_first / 2 + s_final * 1.5f)
          << "row 0 still holds its token";
      EXPECT_EQ(q[static_cast<size_t>(8 + d)], 0) << "row 1 (never written, was 0) stays 0";
      EXPECT_LE(std::abs(q[static_cast<size_t>(16 + d)] -
                         quantize(x[static_cast<size_t>(8 + d)], s_final)),
                1);
      EXPECT_LE(std::abs(q[static_cast<size_t>(24 + d)] -
                         quantize(x[static_cast<size_t>(16 + d)], s_final)),
                1);
    }
    EXPECT_TRUE(BytesEqual(cache_bytes.data() + 32, AsBytes(pool).data() + 32, 32, "block 1"));
  }
}

// A slot past the pool is an error from the next synchronize and never a write outside it; slots
// that are all negative write nothing.
TEST_P(KvAppendTest, SlotOutsideThePoolIsAnErrorNotAWrite) {
  AppendCase c;
  c.n_kv_heads = 2;
  c.head_dim = 16;
  c.block_size = 4;
  c.num_blocks = 3;
  std::mt19937_64 rng(TestSeed());
  const std::vector<float> x = RandomFloats(2 * 2 * 16, 1.0f, rng);
  const std::vector<uint16_t> pool = ToF16Bits(RandomFloats(3 * 4 * 2 * 16, 1.0f, rng));
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_op, MakeOperand(device(), stream(), AsBytes(x)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_op, MakeOperand(device(), stream(), AsBytes(x)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_cache, MakeOperand(device(), stream(), AsBytes(pool)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_cache, MakeOperand(device(), stream(), AsBytes(pool)));
  for (const std::vector<int32_t>& slots :
       {std::vector<int32_t>{1, 12}, std::vector<int32_t>{INT32_MAX, 0},
        std::vector<int32_t>{-1, INT32_MIN}}) {
    const bool valid = slots[0] < 0;
    SCOPED_TRACE(testing::Message() << "slots " << slots[0] << ", " << slots[1]);
    ASSERT_OK_AND_ASSIGN(GuardedOperand slot_op, MakeOperand(device(), stream(), AsBytes(slots)));
    const hwinfer_kv_append_desc desc =
        MakeDesc(c, 2, k_op, v_op, slot_op, k_cache, v_cache, nullptr, nullptr);
    if (!RequireKernel(device(), AsKernelDesc(desc))) return;
    const Status launched = stream().Launch(AsKernelDesc(desc));
    const Status synced = stream().Synchronize();
    if (valid) {
      EXPECT_OK(launched);
      EXPECT_OK(synced);
    } else {
      EXPECT_FALSE(launched.ok() && synced.ok()) << "an out-of-range slot was accepted";
    }
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(ReadOperand(stream(), k_cache, &bytes, "k_cache"));
    if (valid) {
      EXPECT_TRUE(BytesEqual(bytes.data(), AsBytes(pool).data(), bytes.size(), "k_cache"));
    }
    ASSERT_TRUE(ReadOperand(stream(), v_cache, &bytes, "v_cache"));
  }
}

// A valid 2-token append into an I8 pool, mutated one way at a time.
TEST_P(KvAppendTest, MalformedDescriptorsAreRejected) {
  AppendCase c;
  c.cache_dtype = HWINFER_DTYPE_I8;
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 4;
  c.num_blocks = 2;
  const std::vector<float> x(2 * 2 * 8, 0.5f);
  const std::vector<int32_t> slots = {0, 1};
  const std::vector<int8_t> pool(2 * 4 * 2 * 8, 0);
  const std::vector<float> scales(4, 0.0f);
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_op, MakeOperand(device(), stream(), AsBytes(x)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_op, MakeOperand(device(), stream(), AsBytes(x)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand slot_op, MakeOperand(device(), stream(), AsBytes(slots)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_cache, MakeOperand(device(), stream(), AsBytes(pool)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_cache, MakeOperand(device(), stream(), AsBytes(pool)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand k_scales, MakeOperand(device(), stream(), AsBytes(scales)));
  ASSERT_OK_AND_ASSIGN(GuardedOperand v_scales, MakeOperand(device(), stream(), AsBytes(scales)));
  const hwinfer_kv_append_desc valid =
      MakeDesc(c, 2, k_op, v_op, slot_op, k_cache, v_cache, &k_scales, &v_scales);
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;

  struct Variant {
    const char* what;
    bool shape_or_dtype;  // kernel_query must not answer SUPPORTED either
    void (*mutate)(hwinfer_kv_append_desc&);
  };
  const Variant variants[] = {
      {"head_dim disagrees with k", true, [](hwinfer_kv_append_desc& d) { d.head_dim = 4; }},
      {"num_blocks = 0", true,
       [](hwinfer_kv_append_desc& d) {
         d.num_blocks = 0;
         d.k_cache.shape[0] = d.v_cache.shape[0] = d.k_scales.shape[0] = d.v_scales.shape[0] = 0;
       }},
      {"k has dtype I32", true, [](hwinfer_kv_append_desc& d) { d.k.dtype = HWINFER_DTYPE_I32; }},
      {"k_cache has dtype F32", true,
       [](hwinfer_kv_append_desc& d) { d.k_cache.dtype = HWINFER_DTYPE_F32; }},
      {"slot_mapping has rank 2", true,
       [](hwinfer_kv_append_desc& d) {
         d.slot_mapping.rank = 2;
         d.slot_mapping.shape[1] = 1;
         d.slot_mapping.strides_bytes[1] = 4;
       }},
      {"v_scales has the wrong shape", true,
       [](hwinfer_kv_append_desc& d) { d.v_scales.shape[1] = 3; }},
      {"I8 pool without scales", false,
       [](hwinfer_kv_append_desc& d) { d.k_scales.buffer = nullptr; }},
      {"v_cache is k_cache", false, [](hwinfer_kv_append_desc& d) { d.v_cache = d.k_cache; }},
      {"k_cache runs past its buffer", false,
       [](hwinfer_kv_append_desc& d) { d.k_cache.offset_bytes += kGuardBandBytes + 1; }},
  };
  ExpectVariantsRejected(device(), stream(), valid, variants,
                         "a malformed kv_append was accepted at enqueue");
  EXPECT_OK(stream().Synchronize());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadOperand(stream(), k_cache, &bytes, "k_cache"));
  EXPECT_TRUE(BytesEqual(bytes.data(), AsBytes(pool).data(), bytes.size(), "k_cache"));
}

INSTANTIATE_TEST_SUITE_P(KvAppend, KvAppendTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KvAppendTest);

}  // namespace
}  // namespace hwinfer::conformance
