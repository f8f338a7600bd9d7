// rope_kv_append_tests.cpp — conformance of rope_kv_append (ABI 1.1: RoPE on q and k in place fused
// with the KV append of the rotated k and of v) on fresh random inputs (the seed is in every
// failure message; HWINFER_CONFORMANCE_SEED=<seed> repeats it).
//
// plugin.h defines the fused kernel as "the same result as ROPE followed by KV_APPEND", so every
// case runs twice on the backend under test, on identical operands: the fused kernel, and its two
// halves (hwinfer_split_rope_kv_append) as the separate rope and kv_append kernels. The two must
// agree bit for bit (q, k, both pools, both scales). The fused result is also held to the CPU
// scalar reference of the two kernels: q and k within rope_tests' NMSE of reference::rope_reference
// (bit-exact past rotary_dim), and the pools equal to reference::kv_append_reference_* applied to
// the rotated k the device produced and to v (F16 bit-exact; I8 scales within 1e-6 relative and
// values within one step, kv_append_tests' rule). Cases: F32 and F16 activations; F16 and I8
// pools (I8 block-heads that already hold rows, with scales small enough that the rotated tokens
// force their growth); NORMAL and NEOX; partial rotary_dim; GQA; negative and duplicate slots.
// Malformed descriptors (a bad rope half, a bad append half, k absent) are refused with the status
// the unfused kernel of the bad half gives. Guard bands around every operand must stay untouched.
// Backends without the slot skip with the reason. Must not loosen any check per backend.
//
//   q: [n_tokens, n_heads, head_dim], k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16
//   positions, slot_mapping: [n_tokens] I32
//   k_cache, v_cache: [num_blocks, block_size, n_kv_heads, head_dim] F16 | I8;
//   k_scales, v_scales: [num_blocks, n_kv_heads] F32 (I8 only)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "case_runner.h"
#include "conformance_fixture.h"
#include "hwinfer/plugin_support.h"
#include "hwinfer/tensor_view.h"
#include "paged_kv_helpers.h"
#include "reference/reference_attention.h"
#include "reference/reference_ops.h"
#include "row_matrix.h"

namespace hwinfer::conformance {
namespace {

using RopeKvAppendTest = ConformanceTest;

struct FusedCase {
  int64_t n_tokens = 5, n_heads = 4, n_kv_heads = 2, head_dim = 64, rotary_dim = 64;
  int64_t block_size = 4, num_blocks = 8;
  uint32_t mode = HWINFER_ROPE_NORMAL;
  uint32_t act_dtype = HWINFER_DTYPE_F32;    // q, k, v
  uint32_t cache_dtype = HWINFER_DTYPE_F16;  // both pools
  bool negative_slots = false;               // about one token in four skipped (slot -1)
  bool duplicate_slots = false;              // some tokens reuse an earlier token's slot

  std::string Describe() const {
    return fmt::format(
        "n_tokens={} n_heads={} n_kv_heads={} head_dim={} rotary_dim={} mode={} act={} cache={} "
        "block_size={} num_blocks={}{}{}",
        n_tokens, n_heads, n_kv_heads, head_dim, rotary_dim,
        mode == HWINFER_ROPE_NEOX ? "neox" : "normal", DtypeName(act_dtype), DtypeName(cache_dtype),
        block_size, num_blocks, negative_slots ? " negative-slots" : "",
        duplicate_slots ? " duplicate-slots" : "");
  }
};

// The host images of one case (inputs and old pool contents).
struct HostImages {
  std::vector<float> q, k, v;  // values the activation dtype holds exactly
  std::vector<int32_t> positions, slots;
  std::vector<uint8_t> k_cache, v_cache;  // F16 bits or int8
  std::vector<float> k_scales, v_scales;  // [num_blocks, n_kv_heads]; zeros for F16 pools
};

// Old pool contents: finite F16 values, or int8 rows with per-(block, head) scales where about
// half the block-heads are fresh (scale 0) and the rest hold rows at a scale in [0.001, 0.008]
// (absmax 0.13 .. 1.0), below the rotated tokens' (~2.8), so appending to them grows the scale
// and requantizes rows that are already there.
void RandomPool(const FusedCase& c, std::mt19937_64& rng, std::vector<uint8_t>* cache,
                std::vector<float>* scales) {
  const size_t elems = static_cast<size_t>(c.num_blocks * c.block_size * c.n_kv_heads * c.head_dim);
  scales->assign(static_cast<size_t>(c.num_blocks * c.n_kv_heads), 0.0f);
  if (c.cache_dtype == HWINFER_DTYPE_F16) {
    *cache = AsBytes(ToF16Bits(RandomFloats(elems, 2.0f, rng)));
    return;
  }
  std::uniform_int_distribution<int> q(-127, 127);
  std::uniform_real_distribution<float> scale(0.001f, 0.008f);
  std::vector<int8_t> values(elems);
  for (int8_t& value : values) value = static_cast<int8_t>(q(rng));
  *cache = AsBytes(values);
  for (float& value : *scales) value = rng() % 2 == 0 ? 0.0f : scale(rng);
}

HostImages RandomImages(const FusedCase& c, std::mt19937_64& rng) {
  HostImages h;
  const auto q_elems = static_cast<size_t>(c.n_tokens * c.n_heads * c.head_dim);
  const auto kv_elems = static_cast<size_t>(c.n_tokens * c.n_kv_heads * c.head_dim);
  h.q = RandomFloats(q_elems, 2.0f, rng);
  h.k = RandomFloats(kv_elems, 2.0f, rng);
  h.v = RandomFloats(kv_elems, 2.0f, rng);
  if (c.act_dtype == HWINFER_DTYPE_F16) {
    h.q = RoundedToF16(h.q);
    h.k = RoundedToF16(h.k);
    h.v = RoundedToF16(h.v);
  }
  std::uniform_int_distribution<int32_t> position(0, 4096);
  h.positions.resize(static_cast<size_t>(c.n_tokens));
  for (int32_t& p : h.positions) p = position(rng);
  h.positions.front() = 0;
  // Distinct shuffled slots, then the requested skips and repeats (a repeat names the slot of an
  // earlier token, so the later token must win; in an I8 pool its block-head may rescale again).
  const std::vector<int32_t> ids =
      ShuffledIds(static_cast<int32_t>(c.num_blocks * c.block_size), rng);
  h.slots.assign(ids.begin(), ids.begin() + c.n_tokens);
  for (size_t t = 1; t < h.slots.size(); ++t) {
    if (c.duplicate_slots && t % 3 == 2) h.slots[t] = h.slots[t - 2];
    if (c.negative_slots && t % 4 == 1) h.slots[t] = -1;
  }
  RandomPool(c, rng, &h.k_cache, &h.k_scales);
  RandomPool(c, rng, &h.v_cache, &h.v_scales);
  if (c.cache_dtype == HWINFER_DTYPE_I8) {
    // Token 0's block holds rows in every head at a small scale: its append must grow them.
    const int64_t block = h.slots.front() / c.block_size;
    for (int64_t head = 0; head < c.n_kv_heads; ++head) {
      const auto at = static_cast<size_t>(block * c.n_kv_heads + head);
      h.k_scales[at] = h.v_scales[at] = 0.004f;
    }
  }
  return h;
}

// One set of device operands for a case.
struct DeviceOperands {
  GuardedOperand q, k, v, positions, slots, k_cache, v_cache, k_scales, v_scales;
};

StatusOr<DeviceOperands> UploadOperands(Device& device, Stream& stream, const FusedCase& c,
                                        const HostImages& h) {
  DeviceOperands d;
  const std::pair<GuardedOperand*, std::vector<uint8_t>> images[] = {
      {&d.q, EncodeAs(c.act_dtype, h.q)},
      {&d.k, EncodeAs(c.act_dtype, h.k)},
      {&d.v, EncodeAs(c.act_dtype, h.v)},
      {&d.positions, AsBytes(h.positions)},
      {&d.slots, AsBytes(h.slots)},
      {&d.k_cache, h.k_cache},
      {&d.v_cache, h.v_cache},
      {&d.k_scales, AsBytes(h.k_scales)},
      {&d.v_scales, AsBytes(h.v_scales)},
  };
  for (const auto& [operand, image] : images) {
    StatusOr<GuardedOperand> made = MakeOperand(device, stream, image);
    if (!made.ok()) return made.status();
    *operand = std::move(made).value();
  }
  return d;
}

hwinfer_rope_kv_append_desc MakeDesc(const FusedCase& c, const DeviceOperands& o) {
  hwinfer_rope_kv_append_desc d;
  std::memset(&d, 0, sizeof(d));
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_ROPE_KV_APPEND;
  d.n_tokens = c.n_tokens;
  d.n_heads = c.n_heads;
  d.n_kv_heads = c.n_kv_heads;
  d.head_dim = c.head_dim;
  d.rotary_dim = c.rotary_dim;
  d.block_size = c.block_size;
  d.num_blocks = c.num_blocks;
  d.theta_base = 10000.0f;
  d.mode = c.mode;
  d.q = o.q.View(c.act_dtype, {c.n_tokens, c.n_heads, c.head_dim});
  d.k = o.k.View(c.act_dtype, {c.n_tokens, c.n_kv_heads, c.head_dim});
  d.v = o.v.View(c.act_dtype, {c.n_tokens, c.n_kv_heads, c.head_dim});
  d.positions = o.positions.View(HWINFER_DTYPE_I32, {c.n_tokens});
  d.slot_mapping = o.slots.View(HWINFER_DTYPE_I32, {c.n_tokens});
  d.k_cache = o.k_cache.View(c.cache_dtype, {c.num_blocks, c.block_size, c.n_kv_heads, c.head_dim});
  d.v_cache = o.v_cache.View(c.cache_dtype, {c.num_blocks, c.block_size, c.n_kv_heads, c.head_dim});
  const bool i8 = c.cache_dtype == HWINFER_DTYPE_I8;
  d.k_scales = i8 ? o.k_scales.View(HWINFER_DTYPE_F32, {c.num_blocks, c.n_kv_heads}) : NoView();
  d.v_scales = i8 ? o.v_scales.View(HWINFER_DTYPE_F32, {c.num_blocks, c.n_kv_heads}) : NoView();
  return d;
}

// Everything a run leaves in the operands, read back (guard bands checked).
struct Results {
  std::vector<uint8_t> q, k, v, positions, slots, k_cache, v_cache, k_scales, v_scales;
};

bool ReadResults(Stream& stream, const DeviceOperands& o, Results* r, const std::string& run) {
  const std::pair<const GuardedOperand*, std::vector<uint8_t>*> reads[] = {
      {&o.q, &r->q},
      {&o.k, &r->k},
      {&o.v, &r->v},
      {&o.positions, &r->positions},
      {&o.slots, &r->slots},
      {&o.k_cache, &r->k_cache},
      {&o.v_cache, &r->v_cache},
      {&o.k_scales, &r->k_scales},
      {&o.v_scales, &r->v_scales},
  };
  const char* names[] = {"q",       "k",       "v",        "positions", "slot_mapping",
                         "k_cache", "v_cache", "k_scales", "v_scales"};
  for (size_t i = 0; i < std::size(reads); ++i) {
    const testing::AssertionResult read =
        ReadOperand(stream, *reads[i].first, reads[i].second, run + " " + names[i]);
    EXPECT_TRUE(read);
    if (!read) return false;
  }
  return true;
}

// Launches |desc|'s two halves as the unfused rope then kv_append and synchronizes.
Status LaunchUnfused(Stream& stream, const hwinfer_rope_kv_append_desc& desc) {
  hwinfer_rope_desc rope;
  hwinfer_kv_append_desc append;
  hwinfer_split_rope_kv_append(&desc, &rope, &append);
  Status status = stream.Launch(AsKernelDesc(rope));
  if (status.ok()) status = stream.Launch(AsKernelDesc(append));
  if (status.ok()) status = stream.Synchronize();
  return status;
}

// The fused result against the CPU reference: q and k rotated (reference::rope_reference, NMSE;
// past rotary_dim unchanged bit for bit), the pools as the reference append of the rotated k the
// device produced and of v (F16 bit-exact; I8 scales 1e-6 relative, values within one step).
void ExpectMatchesReference(const FusedCase& c, const HostImages& h, const Results& got) {
  const reference::RopeMode mode =
      c.mode == HWINFER_ROPE_NEOX ? reference::RopeMode::kNeox : reference::RopeMode::kNormal;
  const bool f16 = c.act_dtype == HWINFER_DTYPE_F16;
  struct Rotated {
    const std::vector<float>* before;
    const std::vector<uint8_t>* after;
    int64_t n_heads;
    const char* name;
  };
  for (const Rotated& r :
       {Rotated{&h.q, &got.q, c.n_heads, "q"}, Rotated{&h.k, &got.k, c.n_kv_heads, "k"}}) {
    std::vector<float> ref = *r.before;
    reference::rope_reference(c.n_tokens, r.n_heads, c.head_dim, c.rotary_dim, 10000.0, mode,
                              h.positions.data(), ref.data(), f16);
    const std::vector<float> after = DecodeFrom(c.act_dtype, *r.after);
    ExpectNmse(after, ref, MaxNmse(c.act_dtype), r.name);
    size_t tail_changed = 0;
    for (size_t at = 0; at < after.size(); ++at) {
      if (static_cast<int64_t>(at % static_cast<size_t>(c.head_dim)) < c.rotary_dim) continue;
      if (std::memcmp(&after[at], &(*r.before)[at], sizeof(float)) != 0) ++tail_changed;
    }
    EXPECT_EQ(tail_changed, 0u) << r.name << ": values past rotary_dim changed";
  }
  const reference::PagedPoolShape shape{c.num_blocks, c.block_size, c.n_kv_heads, c.head_dim};
  const std::vector<float> rotated_k = DecodeFrom(c.act_dtype, got.k);
  struct Side {
    const std::vector<float>* src;
    const std::vector<uint8_t>* old_cache;
    const std::vector<float>* old_scales;
    const std::vector<uint8_t>* cache;
    const std::vector<uint8_t>* scales;
    const char* name;
  };
  for (const Side& s :
       {Side{&rotated_k, &h.k_cache, &h.k_scales, &got.k_cache, &got.k_scales,
             "k_cache (the rotated k)"},
        Side{&h.v, &h.v_cache, &h.v_scales, &got.v_cache, &got.v_scales, "v_cache"}}) {
    if (c.cache_dtype == HWINFER_DTYPE_F16) {
      std::vector<uint16_t> want = FromBytes<uint16_t>(*s.old_cache);
      reference::kv_append_reference_f16(shape, c.n_tokens, s.src->data(), h.slots.data(),
                                         want.data());
      EXPECT_TRUE(BytesEqual(s.cache->data(), AsBytes(want).data(), s.cache->size(), s.name));
      EXPECT_TRUE(BytesEqual(s.scales->data(), AsBytes(*s.old_scales).data(), s.scales->size(),
                             std::string(s.name) + " scales (unused with an F16 pool)"));
      continue;
    }
    std::vector<int8_t> want = FromBytes<int8_t>(*s.old_cache);
    std::vector<float> want_scales = *s.old_scales;
    reference::kv_append_reference_i8(shape, c.n_tokens, s.src->data(), h.slots.data(), want.data(),
                                      want_scales.data());
    const std::vector<float> got_scales = FromBytes<float>(*s.scales);
    size_t bad_scales = 0, bad_values = 0, grown = 0;
    for (size_t i = 0; i < want_scales.size(); ++i) {
      if (!(std::fabs(got_scales[i] - want_scales[i]) <= 1e-6f * want_scales[i])) ++bad_scales;
      if ((*s.old_scales)[i] != 0.0f && want_scales[i] > (*s.old_scales)[i]) ++grown;
    }
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::abs(static_cast<int>(static_cast<int8_t>((*s.cache)[i])) - want[i]) > 1) {
        ++bad_values;
      }
    }
    EXPECT_EQ(bad_scales, 0u) << s.name << ": scales differ from the reference";
    EXPECT_EQ(bad_values, 0u) << s.name << ": int8 values differ from the reference by more than 1";
    // The case is built so that some block-head that already held rows had to grow its scale.
    EXPECT_GT(grown, 0u) << s.name << ": no block-head with rows grew its scale (test inputs)";
  }
}

// One case: kUnsupported (with |reason|) when the device answers UNSUPPORTED, else kRan.
CaseResult RunFusedCase(Device& device, Stream& stream, const FusedCase& c, std::mt19937_64& rng,
                        std::string& reason) {
  SCOPED_TRACE(c.Describe());
  const HostImages h = RandomImages(c, rng);
  StatusOr<DeviceOperands> fused_ops = UploadOperands(device, stream, c, h);
  StatusOr<DeviceOperands> unfused_ops = UploadOperands(device, stream, c, h);
  if (!fused_ops.ok() || !unfused_ops.ok()) {
    ADD_FAILURE() << "setting up the operands: "
                  << (fused_ops.ok() ? unfused_ops.status() : fused_ops.status()).ToString();
    return CaseResult::kStop;
  }
  const hwinfer_rope_kv_append_desc fused = MakeDesc(c, *fused_ops);
  if (const auto early = QueryAndLaunch(device, stream, AsKernelDesc(fused), "rope_kv_append",
                                        c.Describe(), reason)) {
    return *early;
  }
  const Status unfused = LaunchUnfused(stream, MakeDesc(c, *unfused_ops));
  if (!unfused.ok()) {
    ADD_FAILURE() << "the unfused rope + kv_append failed: " << unfused.ToString();
    return CaseResult::kRan;
  }
  Results got, want;
  if (!ReadResults(stream, *fused_ops, &got, "fused") ||
      !ReadResults(stream, *unfused_ops, &want, "unfused")) {
    return CaseResult::kRan;
  }
  // Inputs that are not outputs stay as they were.
  EXPECT_TRUE(BytesEqual(got.v.data(), EncodeAs(c.act_dtype, h.v).data(), got.v.size(), "v"));
  EXPECT_TRUE(BytesEqual(got.positions.data(), AsBytes(h.positions).data(), got.positions.size(),
                         "positions"));
  EXPECT_TRUE(
      BytesEqual(got.slots.data(), AsBytes(h.slots).data(), got.slots.size(), "slot_mapping"));
  // Fused == rope then kv_append on this backend, bit for bit.
  const std::pair<const std::vector<uint8_t>*, const std::vector<uint8_t>*> same[] = {
      {&got.q, &want.q},
      {&got.k, &want.k},
      {&got.k_cache, &want.k_cache},
      {&got.v_cache, &want.v_cache},
      {&got.k_scales, &want.k_scales},
      {&got.v_scales, &want.v_scales},
  };
  const char* names[] = {"q", "k", "k_cache", "v_cache", "k_scales", "v_scales"};
  for (size_t i = 0; i < std::size(same); ++i) {
    EXPECT_TRUE(BytesEqual(same[i].first->data(), same[i].second->data(), same[i].first->size(),
                           std::string(names[i]) + " (fused vs rope then kv_append)"));
  }
  ExpectMatchesReference(c, h, got);
  return CaseResult::kRan;
}

void RunFusedCases(Device& device, Stream& stream, const std::vector<FusedCase>& cases) {
  RunCases(device, cases, "rope_kv_append cases",
           [&](const FusedCase& c, std::mt19937_64& rng, std::string& reason) {
             return RunFusedCase(device, stream, c, rng, reason);
           });
}

struct Shape {
  int64_t n_tokens, n_heads, n_kv_heads, head_dim, rotary_dim, block_size, num_blocks;
};
// Decode-sized and prefill-sized batches; GQA and MQA; partial rotary_dim; more tokens than the
// GPU kernels stage at once (130 > 128).
const Shape kShapes[] = {{1, 4, 4, 64, 64, 16, 4},    {5, 4, 2, 64, 64, 4, 8},
                         {7, 8, 2, 128, 96, 8, 4},    {9, 6, 1, 80, 32, 5, 9},
                         {130, 4, 2, 32, 32, 16, 12}, {3, 2, 2, 16, 2, 2, 6}};

// Every shape in both modes, from |base|.
std::vector<FusedCase> ShapeCases(const FusedCase& base) {
  std::vector<FusedCase> cases;
  for (uint32_t mode : {HWINFER_ROPE_NORMAL, HWINFER_ROPE_NEOX}) {
    for (const Shape& s : kShapes) {
      FusedCase c = base;
      c.n_tokens = s.n_tokens;
      c.n_heads = s.n_heads;
      c.n_kv_heads = s.n_kv_heads;
      c.head_dim = s.head_dim;
      c.rotary_dim = s.rotary_dim;
      c.block_size = s.block_size;
      c.num_blocks = s.num_blocks;
      c.mode = mode;
      cases.push_back(c);
    }
  }
  return cases;
}

TEST_P(RopeKvAppendTest, F32IntoF16PoolsMatchesRopeThenKvAppend) {
  RunFusedCases(device(), stream(), ShapeCases(FusedCase{}));
}

TEST_P(RopeKvAppendTest, F16IntoF16PoolsMatchesRopeThenKvAppend) {
  FusedCase base;
  base.act_dtype = HWINFER_DTYPE_F16;
  RunFusedCases(device(), stream(), ShapeCases(base));
}

// Every token of an I8 case lands in a block whose scale is 0 or below the rotated token's
// absmax / 127, so block-heads that already hold rows grow and are requantized.
TEST_P(RopeKvAppendTest, IntoInt8PoolsGrowsScalesAsRopeThenKvAppend) {
  std::vector<FusedCase> cases;
  for (uint32_t act : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}) {
    FusedCase base;
    base.act_dtype = act;
    base.cache_dtype = HWINFER_DTYPE_I8;
    for (const FusedCase& c : ShapeCases(base)) cases.push_back(c);
  }
  RunFusedCases(device(), stream(), cases);
}

// Negative slots skip their token (which is still rotated); a slot named twice holds the later
// token (and in an I8 pool may rescale its block-head twice).
TEST_P(RopeKvAppendTest, NegativeAndDuplicateSlotsAsRopeThenKvAppend) {
  std::vector<FusedCase> cases;
  for (uint32_t cache : {HWINFER_DTYPE_F16, HWINFER_DTYPE_I8}) {
    for (uint32_t act : {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}) {
      FusedCase base;
      base.act_dtype = act;
      base.cache_dtype = cache;
      base.negative_slots = true;
      base.duplicate_slots = true;
      for (const FusedCase& c : ShapeCases(base)) {
        if (c.n_tokens >= 3) cases.push_back(c);
      }
    }
  }
  RunFusedCases(device(), stream(), cases);
}

// A slot past the pool: the unfused pair rotates q and k and then fails in kv_append, so the
// fused kernel must report an error too (at enqueue or from the next synchronize) and never
// write outside the pools (guard bands).
TEST_P(RopeKvAppendTest, SlotOutsideThePoolIsAnError) {
  FusedCase c;
  c.n_tokens = 2;
  c.head_dim = 16;
  c.rotary_dim = 16;
  c.num_blocks = 3;
  std::mt19937_64 rng(TestSeed());
  HostImages h = RandomImages(c, rng);
  h.slots = {1, static_cast<int32_t>(c.num_blocks * c.block_size)};
  ASSERT_OK_AND_ASSIGN(DeviceOperands ops, UploadOperands(device(), stream(), c, h));
  const hwinfer_rope_kv_append_desc desc = MakeDesc(c, ops);
  if (!RequireKernel(device(), AsKernelDesc(desc))) return;
  const Status launched = stream().Launch(AsKernelDesc(desc));
  const Status synced = stream().Synchronize();
  EXPECT_FALSE(launched.ok() && synced.ok()) << "an out-of-range slot was accepted";
  Results got;
  ASSERT_TRUE(ReadResults(stream(), ops, &got, "after the bad slot"));
}

// A valid fused descriptor (3 tokens, 4 q heads, 2 KV heads, head_dim 8, I8 pools of 2 blocks of
// 4), mutated one way at a time in its rope half, its append half, or by leaving k out. Each must
// be refused (kernel_query not SUPPORTED for shape and dtype flaws) with the status the unfused
// kernel of the bad half gives that same half, and nothing may be written.
TEST_P(RopeKvAppendTest, MalformedDescriptorsAreRejectedAsTheUnfusedHalves) {
  FusedCase c;
  c.n_tokens = 3;
  c.head_dim = 8;
  c.rotary_dim = 8;
  c.block_size = 4;
  c.num_blocks = 2;
  c.cache_dtype = HWINFER_DTYPE_I8;
  std::mt19937_64 rng(TestSeed());
  const HostImages h = RandomImages(c, rng);
  ASSERT_OK_AND_ASSIGN(DeviceOperands ops, UploadOperands(device(), stream(), c, h));
  const hwinfer_rope_kv_append_desc valid = MakeDesc(c, ops);
  if (!RequireKernel(device(), AsKernelDesc(valid))) return;

  enum Half { kRopeHalf, kAppendHalf, kBoth };
  struct Variant {
    const char* what;
    Half half;            // the half the unfused kernel of which must refuse it the same way
    bool shape_or_dtype;  // kernel_query must not answer SUPPORTED either
    void (*mutate)(hwinfer_rope_kv_append_desc&);
  };
  const Variant variants[] = {
      {"rope: rotary_dim odd", kRopeHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.rotary_dim = 7; }},
      {"rope: rotary_dim > head_dim", kRopeHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.rotary_dim = 10; }},
      {"rope: theta_base = 0", kRopeHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.theta_base = 0.0f; }},
      {"rope: unknown mode", kRopeHalf, true, [](hwinfer_rope_kv_append_desc& d) { d.mode = 7; }},
      {"rope: positions have dtype f32", kRopeHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.positions.dtype = HWINFER_DTYPE_F32; }},
      {"rope: q has dtype bf16", kRopeHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.q.dtype = HWINFER_DTYPE_BF16; }},
      {"rope: q runs past its buffer", kRopeHalf, false,
       [](hwinfer_rope_kv_append_desc& d) { d.q.offset_bytes += kGuardBandBytes + 4; }},
      {"append: slot_mapping has dtype f32", kAppendHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.slot_mapping.dtype = HWINFER_DTYPE_F32; }},
      {"append: block_size disagrees with the pools", kAppendHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.block_size = 2; }},
      {"append: v_scales have the wrong shape", kAppendHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.v_scales.shape[1] = 3; }},
      {"append: I8 pool without scales", kAppendHalf, false,
       [](hwinfer_rope_kv_append_desc& d) { d.k_scales.buffer = nullptr; }},
      {"append: v_cache is k_cache", kAppendHalf, false,
       [](hwinfer_rope_kv_append_desc& d) { d.v_cache = d.k_cache; }},
      {"append: v absent", kAppendHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.v = NoView(); }},
      {"k absent (it is appended)", kAppendHalf, true,
       [](hwinfer_rope_kv_append_desc& d) { d.k = NoView(); }},
      {"struct_size too small", kBoth, true,
       [](hwinfer_rope_kv_append_desc& d) { d.struct_size = sizeof(hwinfer_kernel_desc) + 8; }},
  };
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.what);
    hwinfer_rope_kv_append_desc desc = valid;
    variant.mutate(desc);
    if (variant.shape_or_dtype) {
      auto support = device().QueryKernel(AsKernelDesc(desc));
      EXPECT_FALSE(support.ok() && support->supported)
          << "kernel_query answered SUPPORTED for a malformed descriptor";
    }
    const Status fused = stream().Launch(AsKernelDesc(desc));
    EXPECT_FALSE(fused.ok()) << "a malformed rope_kv_append was accepted at enqueue";
    if (fused.ok()) {
      ADD_FAILURE() << "... and the next synchronize returned "
                    << stream().Synchronize().ToString();
      continue;
    }
    if (variant.half == kBoth) continue;  // no unfused descriptor carries this flaw
    // The bad half alone, as the unfused kernel: refused at enqueue (so it writes nothing), with
    // the same status code.
    hwinfer_rope_desc rope;
    hwinfer_kv_append_desc append;
    hwinfer_split_rope_kv_append(&desc, &rope, &append);
    const Status unfused = variant.half == kRopeHalf ? stream().Launch(AsKernelDesc(rope))
                                                     : stream().Launch(AsKernelDesc(append));
    EXPECT_FALSE(unfused.ok()) << "the unfused "
                               << (variant.half == kRopeHalf ? "rope" : "kv_append")
                               << " accepted this half (the test's variant is wrong)";
    if (unfused.ok()) {
      (void)stream().Synchronize();
      continue;
    }
    EXPECT_EQ(fused.code(), unfused.code())
        << "fused: " << fused.ToString() << "; unfused: " << unfused.ToString();
  }
  EXPECT_OK(stream().Synchronize());
  Results got;
  ASSERT_TRUE(ReadResults(stream(), ops, &got, "after the rejections"));
  EXPECT_TRUE(BytesEqual(got.q.data(), EncodeAs(c.act_dtype, h.q).data(), got.q.size(), "q"));
  EXPECT_TRUE(BytesEqual(got.k.data(), EncodeAs(c.act_dtype, h.k).data(), got.k.size(), "k"));
  EXPECT_TRUE(BytesEqual(got.k_cache.data(), h.k_cache.data(), got.k_cache.size(), "k_cache"));
  EXPECT_TRUE(BytesEqual(got.v_cache.data(), h.v_cache.data(), got.v_cache.size(), "v_cache"));
  EXPECT_TRUE(
      BytesEqual(got.k_scales.data(), AsBytes(h.k_scales).data(), got.k_scales.size(), "k_scales"));
}

INSTANTIATE_TEST_SUITE_P(RopeKvAppend, RopeKvAppendTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RopeKvAppendTest);

}  // namespace
}  // namespace hwinfer::conformance
