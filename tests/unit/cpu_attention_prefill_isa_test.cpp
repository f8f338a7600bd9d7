// cpu_attention_prefill_isa_test.cpp — both builds of the CPU fused prefill attention (portable
// and AVX2/FMA/F16C) on the same problem: two sequences of new tokens (33 and 70, GQA 4, head_dim
// 64) after a paged f16 prefix (40 and 0 cached tokens), causal. The conformance suite reaches
// only the build the machine picks; this pins the other one to it. Host memory only, no ABI.
//   q, out [n_tokens, n_heads, head_dim] F32;  k, v [n_tokens, n_kv_heads, head_dim] F32
//   pools [num_blocks, block_size, n_kv_heads, head_dim] F16
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attention_prefill.h"
#include "host_info.h"
#include "reference/half.h"
#include "thread_pool.h"

namespace hwinfer::cpu {
namespace {

TEST(CpuAttentionPrefillIsa, PortableAndAvx2BuildsAgree) {
  if (!cpu_can_use_avx2_kernels()) GTEST_SKIP() << "no AVX2/FMA/F16C on this CPU";
  constexpr int64_t n_heads = 8, n_kv = 2, dim = 64, block_size = 16, num_blocks = 8;
  const std::vector<int32_t> query_start = {0, 33, 103};
  const std::vector<int32_t> context = {40, 0};
  const int64_t n_tokens = query_start.back(), n_seqs = 2, max_blocks = 4;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](size_t n) {
    std::vector<float> x(n);
    for (float& value : x) value = dist(rng);
    return x;
  };
  const std::vector<float> q = random(static_cast<size_t>(n_tokens * n_heads * dim));
  const std::vector<float> k = random(static_cast<size_t>(n_tokens * n_kv * dim));
  const std::vector<float> v = random(static_cast<size_t>(n_tokens * n_kv * dim));
  std::vector<uint16_t> k_pool(static_cast<size_t>(num_blocks * block_size * n_kv * dim));
  std::vector<uint16_t> v_pool(k_pool.size());
  for (auto& h : k_pool) h = reference::f32_to_f16(dist(rng));
  for (auto& h : v_pool) h = reference::f32_to_f16(dist(rng));
  const std::vector<int32_t> tables = {5, 2, 7, 0, 1, 3, 4, 6};  // [n_seqs, max_blocks]

  AttentionPrefillProblem p;
  p.n_tokens = n_tokens;
  p.n_seqs = n_seqs;
  p.n_heads = n_heads;
  p.n_kv_heads = n_kv;
  p.head_dim = dim;
  p.scale = 0.125f;
  p.causal = true;
  auto matrix = [&](const std::vector<float>& x, int64_t heads) {
    TokenMatrix m;
    m.data = reinterpret_cast<const uint8_t*>(x.data());
    m.dtype = HWINFER_DTYPE_F32;
    m.token_stride = heads * dim * 4;
    m.head_stride = dim * 4;
    return m;
  };
  p.q = matrix(q, n_heads);
  p.k = matrix(k, n_kv);
  p.v = matrix(v, n_kv);
  p.out_token_stride = n_heads * dim * 4;
  p.out_head_stride = dim * 4;
  p.query_start = reinterpret_cast<const uint8_t*>(query_start.data());
  p.query_start_stride = 4;
  p.has_prefix = true;
  auto pool = [&](const std::vector<uint16_t>& data) {
    PagedKvPool kv;
    kv.data = reinterpret_cast<const uint8_t*>(data.data());
    kv.dtype = HWINFER_DTYPE_F16;
    kv.head_stride = dim * 2;
    kv.row_stride = n_kv * dim * 2;
    kv.block_stride = block_size * n_kv * dim * 2;
    return kv;
  };
  p.k_cache = pool(k_pool);
  p.v_cache = pool(v_pool);
  p.table.block_tables = reinterpret_cast<const uint8_t*>(tables.data());
  p.table.row_stride = max_blocks * 4;
  p.table.col_stride = 4;
  p.table.max_blocks_per_seq = max_blocks;
  p.table.context_lens = reinterpret_cast<const uint8_t*>(context.data());
  p.table.context_stride = 4;
  p.table.block_size = block_size;
  p.table.num_blocks = num_blocks;

  ThreadPool threads(2);
  std::vector<float> portable(q.size(), NAN), avx2(q.size(), NAN);
  p.out = reinterpret_cast<uint8_t*>(portable.data());
  ASSERT_EQ(attention_prefill(p, threads, false), nullptr);
  p.out = reinterpret_cast<uint8_t*>(avx2.data());
  ASSERT_EQ(attention_prefill(p, threads, true), nullptr);
  for (size_t i = 0; i < q.size(); ++i) {
    ASSERT_TRUE(std::isfinite(portable[i])) << i;
    ASSERT_NEAR(avx2[i], portable[i], 2e-5) << "value " << i;
  }
}

}  // namespace
}  // namespace hwinfer::cpu
