// cpu_attention_decode_isa_test.cpp — both builds of the CPU paged decode attention (baseline and
// AVX2/FMA/F16C) against the scalar reference on host memory. The conformance suite only reaches
// the build the machine picks; this pins the other one. Must not depend on the plugin ABI layer.
//   pools [num_blocks, block_size, n_kv_heads, head_dim] F16;  q, out [n_seqs, n_heads, head_dim]
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attention_decode.h"
#include "host_info.h"
#include "reference/half.h"
#include "reference/reference_attention.h"
#include "thread_pool.h"

namespace hwinfer::cpu {
namespace {

TEST(CpuAttentionDecodeIsa, BothBuildsMatchTheReference) {
  constexpr int64_t n_seqs = 2, n_heads = 8, n_kv_heads = 2, dim = 64, block_size = 16;
  const std::vector<int32_t> lens = {1000, 17};
  constexpr int64_t max_blocks = 63, num_blocks = 2 * max_blocks;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const auto pool_elems = static_cast<size_t>(num_blocks * block_size * n_kv_heads * dim);
  std::vector<uint16_t> k(pool_elems), v(pool_elems);
  for (auto& x : k) x = reference::f32_to_f16(dist(rng));
  for (auto& x : v) x = reference::f32_to_f16(dist(rng));
  std::vector<int32_t> tables(static_cast<size_t>(n_seqs * max_blocks));
  for (size_t i = 0; i < tables.size(); ++i) {
    tables[i] = static_cast<int32_t>((i * 37) % static_cast<size_t>(num_blocks));
  }
  std::vector<float> q(static_cast<size_t>(n_seqs * n_heads * dim));
  for (auto& x : q) x = dist(rng);

  std::vector<double> want(q.size());
  reference::PagedPool k_ref, v_ref;
  k_ref.shape = v_ref.shape = {num_blocks, block_size, n_kv_heads, dim};
  k_ref.f16 = k.data();
  v_ref.f16 = v.data();
  const float scale = 0.125f;
  reference::attention_decode_paged_reference(k_ref, v_ref, n_seqs, n_heads, q.data(),
                                              tables.data(), max_blocks, lens.data(), scale,
                                              want.data());

  AttentionDecodeProblem p;
  p.n_seqs = n_seqs;
  p.n_heads = n_heads;
  p.n_kv_heads = n_kv_heads;
  p.head_dim = dim;
  p.scale = scale;
  p.q = reinterpret_cast<const uint8_t*>(q.data());
  p.q_seq_stride = p.out_seq_stride = n_heads * dim * 4;
  p.q_head_stride = p.out_head_stride = dim * 4;
  for (auto [pool, data] : {std::pair{&p.k, &k}, std::pair{&p.v, &v}}) {
    pool->data = reinterpret_cast<const uint8_t*>(data->data());
    pool->dtype = HWINFER_DTYPE_F16;
    pool->block_stride = block_size * n_kv_heads * dim * 2;
    pool->row_stride = n_kv_heads * dim * 2;
    pool->head_stride = dim * 2;
  }
  p.table.block_tables = reinterpret_cast<const uint8_t*>(tables.data());
  p.table.row_stride = max_blocks * 4;
  p.table.col_stride = 4;
  p.table.max_blocks_per_seq = max_blocks;
  p.table.context_lens = reinterpret_cast<const uint8_t*>(lens.data());
  p.table.context_stride = 4;
  p.table.block_size = block_size;
  p.table.num_blocks = num_blocks;

  ThreadPool pool(2);
  for (bool use_avx2 : {false, true}) {
    if (use_avx2 && !cpu_can_use_avx2_kernels()) continue;
    SCOPED_TRACE(use_avx2 ? "avx2" : "portable");
    std::vector<float> out(q.size(), NAN);
    p.out = reinterpret_cast<uint8_t*>(out.data());
    ASSERT_EQ(attention_decode_paged(p, pool, use_avx2), nullptr);
    double err = 0.0, norm = 0.0;
    for (size_t i = 0; i < out.size(); ++i) {
      err += (out[i] - want[i]) * (out[i] - want[i]);
      norm += want[i] * want[i];
    }
    EXPECT_LE(err / norm, 1e-10);
  }
}

}  // namespace
}  // namespace hwinfer::cpu
