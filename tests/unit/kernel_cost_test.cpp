// kernel_cost_test.cpp — pins CountKernelCost (hwinfer/kernel_cost.h) to hand-computed bytes and
// FLOPs for every kernel kind: dtype sizes (quantized by block bytes), the beta read of gemm, the
// context lengths of attention from the reader and the upper bound when it has none, causal pair
// counts with and without a cached prefix. Only descriptors are built; no device is involved.
#include "hwinfer/kernel_cost.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "hwinfer/kit/kernel_samples.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

// A view with only what the counter reads: dtype, rank, shape (and a fake buffer when |given|:
// the counter never dereferences buffers, it only tells given operands from absent ones).
hwinfer_tensor_view View(uint32_t dtype, std::vector<int64_t> shape, bool given = true) {
  hwinfer_tensor_view view{};
  view.struct_size = sizeof(view);
  view.dtype = dtype;
  view.rank = static_cast<uint32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) view.shape[i] = shape[i];
  static hwinfer_buffer* const kFakeBuffer = reinterpret_cast<hwinfer_buffer*>(uintptr_t{0x1000});
  view.buffer = given ? kFakeBuffer : nullptr;
  return view;
}

// An IntArrayReader answering for chosen views, keyed by the view's address inside the
// descriptor; any other view has no values.
class FakeInts {
 public:
  void Set(const hwinfer_tensor_view* view, std::vector<int32_t> values) {
    values_[view] = std::move(values);
  }
  IntArrayReader Reader() const {
    return [this](const hwinfer_tensor_view& view, std::vector<int32_t>* out) {
      auto it = values_.find(&view);
      if (it == values_.end()) return false;
      *out = it->second;
      return true;
    };
  }

 private:
  std::map<const hwinfer_tensor_view*, std::vector<int32_t>> values_;
};

const IntArrayReader kNoInts = [](const hwinfer_tensor_view&, std::vector<int32_t>*) {
  return false;
};

template <typename Desc>
KernelCost Count(const Desc& desc, const IntArrayReader& reader = kNoInts) {
  return CountKernelCost(reinterpret_cast<const hwinfer_kernel_desc&>(desc), reader);
}

hwinfer_gemm_desc Gemm(int64_t m, int64_t n, int64_t k, uint32_t a, uint32_t b, uint32_t c) {
  hwinfer_gemm_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_GEMM;
  d.m = m;
  d.n = n;
  d.k = k;
  d.b_transposed = 1;
  d.alpha = 1;
  d.a = View(a, {m, k});
  d.b = View(b, {n, k});
  d.c = View(c, {m, n});
  return d;
}

TEST(KernelCost, GemvF16CountsWeightsOnceAndTwoFlopsPerMultiplyAdd) {
  // [1,4096] x [4096,4096] f16: a 8192 B + b 33554432 B read, c 8192 B written.
  const KernelCost cost =
      Count(Gemm(1, 4096, 4096, HWINFER_DTYPE_F16, HWINFER_DTYPE_F16, HWINFER_DTYPE_F16));
  EXPECT_DOUBLE_EQ(cost.flops, 33554432.0);
  EXPECT_DOUBLE_EQ(cost.bytes_read, 33562624.0);
  EXPECT_DOUBLE_EQ(cost.bytes_written, 8192.0);
  EXPECT_DOUBLE_EQ(cost.bytes(), 33570816.0);
  EXPECT_EQ(cost.compute_dtype, HWINFER_DTYPE_F16);
  EXPECT_FALSE(cost.upper_bound);
}

TEST(KernelCost, GemmReadsCWhenBetaIsNonZeroAndPicksTheNarrowerDtype) {
  hwinfer_gemm_desc d = Gemm(2, 3, 5, HWINFER_DTYPE_F32, HWINFER_DTYPE_BF16, HWINFER_DTYPE_F32);
  d.beta = 1.0f;
  const KernelCost cost = Count(d);
  EXPECT_DOUBLE_EQ(cost.flops, 60.0);
  EXPECT_DOUBLE_EQ(cost.bytes_read, 2 * 5 * 4 + 3 * 5 * 2 + 2 * 3 * 4);  // a + b + c read
  EXPECT_DOUBLE_EQ(cost.bytes_written, 24.0);
  EXPECT_EQ(cost.compute_dtype, HWINFER_DTYPE_BF16);
  EXPECT_EQ(
      Count(Gemm(2, 3, 5, HWINFER_DTYPE_F32, HWINFER_DTYPE_F32, HWINFER_DTYPE_F32)).compute_dtype,
      HWINFER_DTYPE_F32);
}

hwinfer_matmul_quantized_desc Matmul(int64_t m, int64_t n, int64_t k, uint32_t w) {
  hwinfer_matmul_quantized_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_MATMUL_QUANTIZED;
  d.m = m;
  d.n = n;
  d.k = k;
  d.x = View(HWINFER_DTYPE_F32, {m, k});
  d.w = View(w, {n, k});
  d.y = View(HWINFER_DTYPE_F32, {m, n});
  return d;
}

TEST(KernelCost, QuantizedMatmulCountsWeightsByBlockBytes) {
  // Q4_0: 4096 * 4096 / 32 blocks of 18 bytes = 9437184; x and y 4096 F32 each.
  const KernelCost q4 = Count(Matmul(1, 4096, 4096, HWINFER_DTYPE_Q4_0));
  EXPECT_DOUBLE_EQ(q4.bytes_read, 4096.0 * 4096 / 32 * 18 + 4096 * 4);
  EXPECT_DOUBLE_EQ(q4.bytes_read, 9453568.0);
  EXPECT_DOUBLE_EQ(q4.bytes_written, 16384.0);
  EXPECT_DOUBLE_EQ(q4.flops, 33554432.0);
  EXPECT_EQ(q4.compute_dtype, HWINFER_DTYPE_I8);
  // Q8_0: 34-byte blocks.
  const KernelCost q8 = Count(Matmul(2, 64, 128, HWINFER_DTYPE_Q8_0));
  EXPECT_DOUBLE_EQ(q8.bytes_read, 64.0 * 128 / 32 * 34 + 2 * 128 * 4);
  EXPECT_DOUBLE_EQ(q8.bytes_written, 2 * 64 * 4);
  EXPECT_DOUBLE_EQ(q8.flops, 2.0 * 2 * 64 * 128);
}

// Every GGUF type counts its own bytes per block: 4096 x 4096 weights, decode (m = 1).
TEST(KernelCost, EveryWeightTypeCountsItsOwnBlockBytes) {
  struct Expected {
    uint32_t dtype;
    double block_values, block_bytes;
  };
  for (const Expected& e :
       {Expected{HWINFER_DTYPE_Q4_1, 32, 20}, Expected{HWINFER_DTYPE_Q5_0, 32, 22},
        Expected{HWINFER_DTYPE_Q5_1, 32, 24}, Expected{HWINFER_DTYPE_IQ4_NL, 32, 18},
        Expected{HWINFER_DTYPE_Q2_K, 256, 84}, Expected{HWINFER_DTYPE_Q3_K, 256, 110},
        Expected{HWINFER_DTYPE_Q4_K, 256, 144}, Expected{HWINFER_DTYPE_Q5_K, 256, 176},
        Expected{HWINFER_DTYPE_Q6_K, 256, 210}}) {
    SCOPED_TRACE(DtypeName(e.dtype));
    const KernelCost cost = Count(Matmul(1, 4096, 4096, e.dtype));
    EXPECT_DOUBLE_EQ(cost.bytes_read, 4096.0 * 4096 / e.block_values * e.block_bytes + 4096 * 4);
    EXPECT_DOUBLE_EQ(cost.flops, 2.0 * 4096 * 4096);
  }
  // Q4_K: 4.5 bits per weight, as Q4_0.
  EXPECT_DOUBLE_EQ(Count(Matmul(1, 4096, 4096, HWINFER_DTYPE_Q4_K)).bytes_read,
                   Count(Matmul(1, 4096, 4096, HWINFER_DTYPE_Q4_0)).bytes_read);
}

hwinfer_attention_decode_paged_desc Decode(uint32_t pool_dtype) {
  // 2 sequences, 8 query heads over 2 KV heads of 64, blocks of 16, up to 4 blocks each.
  hwinfer_attention_decode_paged_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_ATTENTION_DECODE_PAGED;
  d.n_seqs = 2;
  d.n_heads = 8;
  d.n_kv_heads = 2;
  d.head_dim = 64;
  d.block_size = 16;
  d.max_blocks_per_seq = 4;
  d.q = View(HWINFER_DTYPE_F16, {2, 8, 64});
  d.out = View(HWINFER_DTYPE_F16, {2, 8, 64});
  d.k_cache = View(pool_dtype, {10, 16, 2, 64});
  d.v_cache = View(pool_dtype, {10, 16, 2, 64});
  d.block_tables = View(HWINFER_DTYPE_I32, {2, 4});
  d.context_lens = View(HWINFER_DTYPE_I32, {2});
  return d;
}

TEST(KernelCost, DecodeAttentionCountsTheContextLengthsTheReaderSupplies) {
  const hwinfer_attention_decode_paged_desc d = Decode(HWINFER_DTYPE_F16);
  FakeInts ints;
  ints.Set(&d.context_lens, {10, 33});  // 43 cached tokens
  const KernelCost cost = Count(d, ints.Reader());
  EXPECT_FALSE(cost.upper_bound);
  EXPECT_DOUBLE_EQ(cost.flops, 4.0 * 64 * 8 * 43);                            // 88064
  EXPECT_DOUBLE_EQ(cost.bytes_read, 2 * 8 * 64 * 2 + 2.0 * 43 * 2 * 64 * 2);  // q + K + V
  EXPECT_DOUBLE_EQ(cost.bytes_written, 2 * 8 * 64 * 2);
  EXPECT_EQ(cost.compute_dtype, HWINFER_DTYPE_F16);
}

TEST(KernelCost, DecodeAttentionOverInt8PoolsAddsOneScalePerBlockAndHead) {
  const hwinfer_attention_decode_paged_desc d = Decode(HWINFER_DTYPE_I8);
  FakeInts ints;
  ints.Set(&d.context_lens, {10, 33});  // 1 + 3 blocks
  const KernelCost cost = Count(d, ints.Reader());
  EXPECT_DOUBLE_EQ(cost.bytes_read, 2048 + 2.0 * 43 * 2 * 64 + 2.0 * 4 * 2 * 4);
}

TEST(KernelCost, DecodeAttentionWithoutContextLengthsCountsTheUpperBound) {
  const KernelCost cost = Count(Decode(HWINFER_DTYPE_F16));
  EXPECT_TRUE(cost.upper_bound);
  // Every sequence at max_blocks_per_seq * block_size = 64 tokens.
  EXPECT_DOUBLE_EQ(cost.flops, 4.0 * 64 * 8 * 128);
  EXPECT_DOUBLE_EQ(cost.bytes_read, 2048 + 2.0 * 128 * 2 * 64 * 2);
}

hwinfer_attention_prefill_desc Prefill(uint32_t causal, bool prefix) {
  // 7 new tokens of 2 sequences (3 + 4), 4 heads over 2 KV heads of 8, F32.
  hwinfer_attention_prefill_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_ATTENTION_PREFILL;
  d.n_tokens = 7;
  d.n_seqs = 2;
  d.n_heads = 4;
  d.n_kv_heads = 2;
  d.head_dim = 8;
  d.causal = causal;
  d.q = View(HWINFER_DTYPE_F32, {7, 4, 8});
  d.k = View(HWINFER_DTYPE_F32, {7, 2, 8});
  d.v = View(HWINFER_DTYPE_F32, {7, 2, 8});
  d.out = View(HWINFER_DTYPE_F32, {7, 4, 8});
  d.query_start = View(HWINFER_DTYPE_I32, {3});
  if (prefix) {
    d.block_size = 4;
    d.k_cache = View(HWINFER_DTYPE_F16, {6, 4, 2, 8});
    d.v_cache = View(HWINFER_DTYPE_F16, {6, 4, 2, 8});
    d.block_tables = View(HWINFER_DTYPE_I32, {2, 3});
    d.context_lens = View(HWINFER_DTYPE_I32, {2});
  }
  return d;
}

constexpr double kPrefillNewBytes = 7 * 4 * 8 * 4 + 2 * (7 * 2 * 8 * 4);  // q + k + v = 1792

TEST(KernelCost, CausalPrefillCountsTheTrianglePerSequence) {
  const hwinfer_attention_prefill_desc d = Prefill(1, false);
  FakeInts ints;
  ints.Set(&d.query_start, {0, 3, 7});
  const KernelCost cost = Count(d, ints.Reader());
  // Pairs: 3*4/2 + 4*5/2 = 16.
  EXPECT_DOUBLE_EQ(cost.flops, 4.0 * 8 * 4 * 16);
  EXPECT_DOUBLE_EQ(cost.bytes_read, kPrefillNewBytes);
  EXPECT_DOUBLE_EQ(cost.bytes_written, 7 * 4 * 8 * 4);
  EXPECT_FALSE(cost.upper_bound);

  const hwinfer_attention_prefill_desc full = Prefill(0, false);
  FakeInts full_ints;
  full_ints.Set(&full.query_start, {0, 3, 7});
  EXPECT_DOUBLE_EQ(Count(full, full_ints.Reader()).flops, 4.0 * 8 * 4 * (9 + 16));
}

TEST(KernelCost, PrefillAfterACachedPrefixCountsThePrefixPairsAndReads) {
  const hwinfer_attention_prefill_desc d = Prefill(1, true);
  FakeInts ints;
  ints.Set(&d.query_start, {0, 3, 7});
  ints.Set(&d.context_lens, {5, 0});
  const KernelCost cost = Count(d, ints.Reader());
  // Sequence 0: 3 new tokens each see the 5 cached ones, plus the triangle 6; sequence 1: 10.
  EXPECT_DOUBLE_EQ(cost.flops, 4.0 * 8 * 4 * (15 + 6 + 10));
  // Prefix read: 5 tokens x 2 KV heads x 8 x F16, for K and V.
  EXPECT_DOUBLE_EQ(cost.bytes_read, kPrefillNewBytes + 2.0 * 5 * 2 * 8 * 2);
}

TEST(KernelCost, PrefillWithoutQueryStartsCountsTheUpperBound) {
  const KernelCost cost = Count(Prefill(1, false));
  EXPECT_TRUE(cost.upper_bound);
  EXPECT_DOUBLE_EQ(cost.flops, 4.0 * 8 * 4 * (7 * 8 / 2));  // one sequence of 7 bounds any split
  const KernelCost with_prefix = Count(Prefill(1, true));
  EXPECT_TRUE(with_prefix.upper_bound);
  // Every sequence's prefix at 3 blocks x 4 = 12 tokens.
  EXPECT_DOUBLE_EQ(with_prefix.flops, 4.0 * 8 * 4 * (7 * 12 + 28));
  EXPECT_DOUBLE_EQ(with_prefix.bytes_read, kPrefillNewBytes + 2.0 * 24 * 2 * 8 * 2);
}

TEST(KernelCost, KvAppendReadsNewRowsAndWritesThemInThePoolDtype) {
  hwinfer_kv_append_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_KV_APPEND;
  d.n_tokens = 3;
  d.n_kv_heads = 2;
  d.head_dim = 8;
  d.block_size = 4;
  d.num_blocks = 5;
  d.k = View(HWINFER_DTYPE_F32, {3, 2, 8});
  d.v = View(HWINFER_DTYPE_F32, {3, 2, 8});
  d.k_cache = View(HWINFER_DTYPE_F16, {5, 4, 2, 8});
  d.v_cache = View(HWINFER_DTYPE_F16, {5, 4, 2, 8});
  KernelCost cost = Count(d);
  EXPECT_DOUBLE_EQ(cost.bytes_read, 2 * 48 * 4);
  EXPECT_DOUBLE_EQ(cost.bytes_written, 2 * 48 * 2);
  EXPECT_DOUBLE_EQ(cost.flops, 0);
  d.k_cache.dtype = d.v_cache.dtype = HWINFER_DTYPE_I8;
  EXPECT_DOUBLE_EQ(Count(d).bytes_written, 2 * 48);
}

TEST(KernelCost, RmsNormCountsWeightAndTheFusedResidual) {
  hwinfer_rms_norm_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_RMS_NORM;
  d.n_tokens = 2;
  d.dim = 4096;
  d.x = View(HWINFER_DTYPE_F32, {2, 4096});
  d.weight = View(HWINFER_DTYPE_F32, {4096});
  d.out = View(HWINFER_DTYPE_F32, {2, 4096});
  KernelCost cost = Count(d);
  EXPECT_DOUBLE_EQ(cost.bytes_read, 32768 + 16384);
  EXPECT_DOUBLE_EQ(cost.bytes_written, 32768);
  EXPECT_DOUBLE_EQ(cost.flops, 4.0 * 8192);
  d.residual = View(HWINFER_DTYPE_F32, {2, 4096});
  cost = Count(d);
  EXPECT_DOUBLE_EQ(cost.bytes_read, 32768 + 16384 + 32768);
  EXPECT_DOUBLE_EQ(cost.bytes_written, 32768 + 32768);
  EXPECT_DOUBLE_EQ(cost.flops, 5.0 * 8192);
}

TEST(KernelCost, RopeReadsAndWritesQAndKInPlace) {
  hwinfer_rope_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_ROPE;
  d.n_tokens = 2;
  d.n_heads = 4;
  d.n_kv_heads = 2;
  d.head_dim = 8;
  d.rotary_dim = 8;
  d.q = View(HWINFER_DTYPE_F32, {2, 4, 8});
  d.k = View(HWINFER_DTYPE_F32, {2, 2, 8});
  d.positions = View(HWINFER_DTYPE_I32, {2});
  KernelCost cost = Count(d);
  EXPECT_DOUBLE_EQ(cost.bytes_read, (64 + 32) * 4 + 2 * 4);
  EXPECT_DOUBLE_EQ(cost.bytes_written, (64 + 32) * 4);
  EXPECT_DOUBLE_EQ(cost.flops, 6.0 * (8 / 2) * (4 + 2) * 2);  // 6 per rotated pair
  d.k = View(HWINFER_DTYPE_F32, {2, 2, 8}, /*given=*/false);  // q only
  EXPECT_DOUBLE_EQ(Count(d).bytes_written, 64 * 4);
}

// The fused kernel counts its two halves (rope on q and k, the append of the rotated k and of v)
// less the k it does not read back: 2 tokens, 4 q heads, 2 KV heads of 8, F32 in, F16 pools.
TEST(KernelCost, RopeKvAppendCountsBothHalvesLessTheKRoundTrip) {
  hwinfer_rope_kv_append_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_ROPE_KV_APPEND;
  d.n_tokens = 2;
  d.n_heads = 4;
  d.n_kv_heads = 2;
  d.head_dim = 8;
  d.rotary_dim = 8;
  d.block_size = 4;
  d.num_blocks = 3;
  d.q = View(HWINFER_DTYPE_F32, {2, 4, 8});
  d.k = View(HWINFER_DTYPE_F32, {2, 2, 8});
  d.v = View(HWINFER_DTYPE_F32, {2, 2, 8});
  d.positions = View(HWINFER_DTYPE_I32, {2});
  d.slot_mapping = View(HWINFER_DTYPE_I32, {2});
  d.k_cache = View(HWINFER_DTYPE_F16, {3, 4, 2, 8});
  d.v_cache = View(HWINFER_DTYPE_F16, {3, 4, 2, 8});
  const KernelCost cost = Count(d);
  // rope: q and k (64 + 32 f32) read and written, 2 positions read; append: v's 32 f32 read,
  // k and v's 64 values written as f16.
  EXPECT_DOUBLE_EQ(cost.bytes_read, (64 + 32) * 4 + 2 * 4 + 32 * 4);
  EXPECT_DOUBLE_EQ(cost.bytes_written, (64 + 32) * 4 + 64 * 2);
  EXPECT_DOUBLE_EQ(cost.flops, 6.0 * (8 / 2) * (4 + 2) * 2);
  d.k_cache.dtype = d.v_cache.dtype = HWINFER_DTYPE_I8;
  EXPECT_DOUBLE_EQ(Count(d).bytes_written, (64 + 32) * 4 + 64);
}

TEST(KernelCost, SiluMulAndEmbeddingCountEveryElementOnce) {
  hwinfer_silu_mul_desc silu{};
  silu.struct_size = sizeof(silu);
  silu.kind = HWINFER_KERNEL_SILU_MUL;
  silu.n_tokens = 2;
  silu.dim = 10;
  silu.gate = silu.up = silu.out = View(HWINFER_DTYPE_F16, {2, 10});
  KernelCost cost = Count(silu);
  EXPECT_DOUBLE_EQ(cost.bytes_read, 2 * 20 * 2);
  EXPECT_DOUBLE_EQ(cost.bytes_written, 20 * 2);
  EXPECT_DOUBLE_EQ(cost.flops, 5.0 * 20);

  hwinfer_embedding_desc embedding{};
  embedding.struct_size = sizeof(embedding);
  embedding.kind = HWINFER_KERNEL_EMBEDDING;
  embedding.n_tokens = 3;
  embedding.vocab = 1000;
  embedding.dim = 64;
  embedding.table = View(HWINFER_DTYPE_Q8_0, {1000, 64});
  embedding.ids = View(HWINFER_DTYPE_I32, {3});
  embedding.out = View(HWINFER_DTYPE_F32, {3, 64});
  cost = Count(embedding);
  EXPECT_DOUBLE_EQ(cost.bytes_read, 3 * 4 + 3 * (64 / 32) * 34);  // ids + the 3 rows looked up
  EXPECT_DOUBLE_EQ(cost.bytes_written, 3 * 64 * 4);
  EXPECT_DOUBLE_EQ(cost.flops, 0);
}

TEST(KernelCost, BandwidthProbeMovesSizeTimesIterationsPerDirection) {
  hwinfer_bandwidth_probe_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_BANDWIDTH_PROBE;
  d.size_bytes = 1000;
  d.iterations = 3;
  d.mode = HWINFER_PROBE_COPY;
  EXPECT_DOUBLE_EQ(Count(d).bytes_read, 3000);
  EXPECT_DOUBLE_EQ(Count(d).bytes_written, 3000);
  d.mode = HWINFER_PROBE_READ;
  EXPECT_DOUBLE_EQ(Count(d).bytes(), 3000);
  EXPECT_DOUBLE_EQ(Count(d).bytes_written, 0);
  d.mode = HWINFER_PROBE_WRITE;
  EXPECT_DOUBLE_EQ(Count(d).bytes_written, 3000);
  EXPECT_DOUBLE_EQ(Count(d).flops, 0);
}

TEST(KernelCost, UnknownKindsAndShortDescriptorsCountZero) {
  hwinfer_kernel_desc unknown{sizeof(hwinfer_kernel_desc), 999};
  EXPECT_DOUBLE_EQ(CountKernelCost(unknown, kNoInts).bytes(), 0);
  hwinfer_gemm_desc gemm = Gemm(4, 4, 4, HWINFER_DTYPE_F32, HWINFER_DTYPE_F32, HWINFER_DTYPE_F32);
  gemm.struct_size = 8;
  EXPECT_DOUBLE_EQ(Count(gemm).flops, 0);
  // A null reader is "no values": the upper bound.
  const hwinfer_attention_decode_paged_desc decode = Decode(HWINFER_DTYPE_F16);
  EXPECT_TRUE(Count(decode, IntArrayReader{}).upper_bound);
}

TEST(KernelCost, TotalsSplitFlopsByComputeDtype) {
  CostTotals totals;
  totals.Add(Count(Gemm(1, 4096, 4096, HWINFER_DTYPE_F16, HWINFER_DTYPE_F16, HWINFER_DTYPE_F16)));
  totals.Add(Count(Matmul(1, 64, 64, HWINFER_DTYPE_Q4_0)));
  EXPECT_DOUBLE_EQ(totals.flops, 33554432.0 + 8192.0);
  EXPECT_DOUBLE_EQ(totals.flops_by_dtype[1], 33554432.0);  // f16
  EXPECT_DOUBLE_EQ(totals.flops_by_dtype[3], 8192.0);      // int8
  EXPECT_DOUBLE_EQ(totals.bytes, 33570816.0 + 64.0 * 64 / 32 * 18 + 64 * 4 + 64 * 4);
  EXPECT_EQ(totals.compute_dtype(), HWINFER_DTYPE_F16);
  EXPECT_EQ(CostTotals{}.compute_dtype(), HWINFER_DTYPE_F32);
}

// Generated over hwinfer/kernel_kinds.def: a kind added to the list without samples does not link,
// and one whose samples count no bytes fails here, before any hand-written case exists for it.
TEST(KernelCost, EveryListedKindHasSamplesThatCountBytes) {
  std::set<uint32_t> kinds_seen;
  for (const kit::KernelSample& sample : kit::all_kernel_samples()) {
    ASSERT_NE(sample.desc, nullptr) << sample.name;
    kinds_seen.insert(sample.desc->kind);
    const KernelCost cost = CountKernelCost(*sample.desc, nullptr);
    EXPECT_GT(cost.bytes(), 0.0) << sample.name;
    EXPECT_GE(cost.flops, 0.0) << sample.name;
  }
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  EXPECT_EQ(kinds_seen.count(HWINFER_KERNEL_##KIND), 1u) << #slot " has no sample";
#include "hwinfer/kernel_kinds.def"
}

}  // namespace
}  // namespace hwinfer
