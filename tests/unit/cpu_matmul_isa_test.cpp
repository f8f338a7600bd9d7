// cpu_matmul_isa_test.cpp — both builds (portable and AVX2/FMA/F16C) of the CPU plugin's
// quantized matmul and f16/bf16 GEMM against the scalar references, on host memory. The
// conformance suite only reaches the build the machine picks; this pins the other one, and pins
// that the decode path's x quantization is the reference's bit for bit (NMSE ~1e-13, not ~1e-5).
// Must not depend on the plugin ABI layer.
//   x [m, k] F32, w [n, k] any GGUF block type, y [m, n] F32;   a [m, k], B [k, n] or [n, k], c [m,
//   n]
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "gemm_half.h"
#include "gemm_half_kernels.h"
#include "hwinfer/plugin.h"
#include "matmul_quantized.h"
#include "matmul_quantized_kernels.h"
#include "reference/half.h"
#include "reference/quantize_blocks.h"
#include "reference/reference_matmul.h"
#include "reference/weight_blocks.h"
#include "scratch_buffer.h"
#include "thread_pool.h"
#include "weight_formats.h"

namespace hwinfer::cpu {
namespace {

std::vector<GemmIsa> Isas() {
  std::vector<GemmIsa> isas = {GemmIsa::kPortable};
  if (detect_gemm_isa() == GemmIsa::kAvx2Fma) isas.push_back(GemmIsa::kAvx2Fma);
  return isas;
}

// Every ISA, each with x contiguous and with x strided along k.
std::vector<std::pair<GemmIsa, bool>> IsasByStride() {
  std::vector<std::pair<GemmIsa, bool>> out;
  for (GemmIsa isa : Isas()) {
    for (bool strided : {false, true}) out.emplace_back(isa, strided);
  }
  return out;
}

double Nmse(const std::vector<float>& got, const std::vector<float>& ref) {
  double err2 = 0, ref2 = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    const double diff = static_cast<double>(got[e]) - static_cast<double>(ref[e]);
    err2 += diff * diff;
    ref2 += static_cast<double>(ref[e]) * static_cast<double>(ref[e]);
  }
  return err2 / ref2;
}

TEST(CpuMatmulIsa, QuantizedBothBuildsMatchTheReferences) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  ThreadPool pool(2);
  ScratchBuffer scratch;
  constexpr int64_t n = 37;
  for (uint32_t dtype :
       {HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0, HWINFER_DTYPE_Q4_1, HWINFER_DTYPE_Q5_0,
        HWINFER_DTYPE_Q5_1, HWINFER_DTYPE_IQ4_NL, HWINFER_DTYPE_Q2_K, HWINFER_DTYPE_Q3_K,
        HWINFER_DTYPE_Q4_K, HWINFER_DTYPE_Q5_K, HWINFER_DTYPE_Q6_K}) {
    // 9 blocks of 32, or 3 super-blocks of 256.
    const int64_t k = hwinfer_dtype_block_values(dtype) == 256 ? 768 : 288;
    const int64_t row_bytes =
        k / hwinfer_dtype_block_values(dtype) * hwinfer_dtype_block_bytes(dtype);
    std::vector<uint8_t> w(static_cast<size_t>(n * row_bytes));
    std::vector<float> w_row(static_cast<size_t>(k));
    for (int64_t j = 0; j < n; ++j) {
      for (float& v : w_row) v = dist(rng);
      if (dtype == HWINFER_DTYPE_Q8_0) {
        std::vector<hwinfer_block_q8_0> blocks(static_cast<size_t>(k / 32));
        reference::quantize_q8_0(w_row.data(), blocks.data(), k);
        std::memcpy(w.data() + j * row_bytes, blocks.data(), static_cast<size_t>(row_bytes));
      } else if (dtype == HWINFER_DTYPE_Q4_0) {
        std::vector<hwinfer_block_q4_0> blocks(static_cast<size_t>(k / 32));
        reference::quantize_q4_0(w_row.data(), blocks.data(), k);
        std::memcpy(w.data() + j * row_bytes, blocks.data(), static_cast<size_t>(row_bytes));
      } else {
        reference::fill_random_blocks(dtype, k / hwinfer_dtype_block_values(dtype), rng(),
                                      w.data() + j * row_bytes);
      }
    }
    const bool int8_at_every_m = dtype == HWINFER_DTYPE_Q8_0 || dtype == HWINFER_DTYPE_Q4_0;
    for (int64_t m : {int64_t{1}, int64_t{3}, int64_t{6}, int64_t{20}, kMatmulQuantizedGemvMaxM,
                      kMatmulQuantizedGemvMaxM + 1}) {
      std::vector<float> x(static_cast<size_t>(m * k));
      for (float& v : x) v = dist(rng);
      // The int8 path quantizes x (Q8_0 / Q4_0 at every m, the other types up to
      // kMatmulQuantizedGemvMaxM); the f32 path keeps it exact.
      std::vector<float> want(static_cast<size_t>(m * n));
      if (int8_at_every_m || m <= kMatmulQuantizedGemvMaxM) {
        reference::matmul_quantized_reference_q8_x(m, n, k, x.data(), k, w.data(), dtype, row_bytes,
                                                   want.data(), n);
      } else {
        reference::matmul_quantized_reference(m, n, k, x.data(), k, w.data(), dtype, row_bytes,
                                              want.data(), n);
      }
      // x also with a column stride of 2 (copied row by row before quantizing, in parallel
      // from 16 rows).
      std::vector<float> x_strided(static_cast<size_t>(2 * m * k));
      for (size_t e = 0; e < x.size(); ++e) x_strided[2 * e] = x[e];
      for (auto [isa, strided] : IsasByStride()) {
        SCOPED_TRACE(testing::Message() << gemm_isa_name(isa) << " dtype " << dtype << " m " << m
                                        << " strided " << strided);
        std::vector<float> y(static_cast<size_t>(m * n), -1.0f);
        MatmulQuantizedProblem p;
        p.m = m;
        p.n = n;
        p.k = k;
        p.x = strided ? x_strided.data() : x.data();
        p.x_row_stride = strided ? 2 * k : k;
        p.x_col_stride = strided ? 2 : 1;
        p.w = w.data();
        p.w_dtype = dtype;
        p.w_row_bytes = row_bytes;
        p.y = y.data();
        p.y_row_stride = n;
        p.y_col_stride = 1;
        matmul_quantized(p, pool, isa, scratch);
        EXPECT_LE(Nmse(y, want), 1e-11);
      }
    }
  }
}

// Q8_0 / Q4_0 in register tiles: every tile kernel (AVX2, AVX-512 VNNI where the CPU has it) gives
// the row kernel's sums bit for bit, for any m (tile edges, x taken in several chunks) and any
// number of weight rows, so a sequence's logits do not depend on the batch it decodes in.
TEST(CpuMatmulIsa, QuantizedTilesGiveTheRowKernelsSumsExactly) {
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
  if (detect_gemm_isa() != GemmIsa::kAvx2Fma) GTEST_SKIP() << "no AVX2/FMA/F16C on this CPU";
  std::mt19937 rng(14);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::pair<const char*, MatmulQuantizedKernels>> sets = {
      {"avx2", matmul_quantized_kernels_avx2()}};
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
  if (use_avx512_vnni()) sets.emplace_back("avx512-vnni", matmul_quantized_kernels_vnni());
#endif
  const MatmulQuantizedKernels rows = matmul_quantized_kernels_avx2();
  // blocks 9 and 11: Q4_0's lone last block and its tail pairs; 2000 blocks: x in chunks.
  for (int64_t blocks : {int64_t{9}, int64_t{11}, int64_t{2000}}) {
    const int64_t k = 32 * blocks, quads = (blocks + 3) / 4;
    const int64_t m = blocks == 2000 ? 9 : 7, n = 5;
    std::vector<float> x(static_cast<size_t>(m * k));
    for (float& v : x) v = dist(rng);
    std::vector<XBlockQ8> xq(static_cast<size_t>(m * blocks));
    std::vector<XQuadQ4> x_quads(static_cast<size_t>(m * quads));
    for (int64_t i = 0; i < m; ++i) {
      rows.quantize_x(x.data() + i * k, blocks, xq.data() + i * blocks);
      make_x_quads_q4(xq.data() + i * blocks, blocks, x_quads.data() + i * quads);
    }
    for (uint32_t dtype : {HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0}) {
      const bool q4 = dtype == HWINFER_DTYPE_Q4_0;
      const int64_t row_bytes = blocks * hwinfer_dtype_block_bytes(dtype);
      std::vector<uint8_t> w(static_cast<size_t>(n * row_bytes));
      reference::fill_random_blocks(dtype, n * blocks, rng(), w.data());
      std::vector<float> want(static_cast<size_t>(m * n));
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {  // one row of x at a time, as decode at batch 1
          const uint8_t* w_row = w.data() + j * row_bytes;
          if (q4) {
            rows.dot_q4_0(x_quads.data() + i * quads, quads, 1, w_row, blocks, &want[i * n + j]);
          } else {
            rows.dot_q8_0(xq.data() + i * blocks, blocks, 1, w_row, blocks, &want[i * n + j]);
          }
        }
      }
      for (const auto& [name, kernels] : sets) {
        std::vector<float> y(static_cast<size_t>(m * n), -1.0f);
        QuantizedTileArgs args;
        args.xq = q4 ? static_cast<const void*>(x_quads.data()) : xq.data();
        args.x_stride = q4 ? quads : blocks;
        args.m = m;
        args.w = w.data();
        args.w_row_bytes = row_bytes;
        args.rows = n;
        args.blocks = blocks;
        args.y = y.data();
        args.y_row_stride = n;
        args.y_col_stride = 1;
        (q4 ? kernels.tiles_q4_0 : kernels.tiles_q8_0)(args);
        for (size_t e = 0; e < y.size(); ++e) {
          ASSERT_EQ(y[e], want[e])
              << name << " dtype " << dtype << " blocks " << blocks << " output " << e;
        }
        // The set's own row kernels, all m rows of x against one weight row at a time.
        for (int64_t j = 0; j < n; ++j) {
          std::vector<float> sums(static_cast<size_t>(m), -1.0f);
          const uint8_t* w_row = w.data() + j * row_bytes;
          if (q4) {
            kernels.dot_q4_0(x_quads.data(), quads, m, w_row, blocks, sums.data());
          } else {
            kernels.dot_q8_0(xq.data(), blocks, m, w_row, blocks, sums.data());
          }
          for (int64_t i = 0; i < m; ++i) {
            ASSERT_EQ(sums[i], want[i * n + j])
                << name << " rows, dtype " << dtype << " blocks " << blocks << " x row " << i;
          }
        }
      }
    }
  }
#else
  GTEST_SKIP() << "built without the AVX2 kernels";
#endif
}

// The prefill path's dequantizers: every ISA gives the portable kernel's floats exactly (each value
// is one rounding of the same exact products; only the sign of a zero may differ: s q - 32 s is +0
// where s (q - 32) is -0 for a negative s).
TEST(CpuMatmulIsa, DequantizersAgreeExactly) {
  std::mt19937 rng(12);
  for (uint32_t dtype : {HWINFER_DTYPE_Q4_1, HWINFER_DTYPE_Q5_0, HWINFER_DTYPE_Q5_1,
                         HWINFER_DTYPE_IQ4_NL, HWINFER_DTYPE_Q2_K, HWINFER_DTYPE_Q3_K,
                         HWINFER_DTYPE_Q4_K, HWINFER_DTYPE_Q5_K, HWINFER_DTYPE_Q6_K}) {
    constexpr int64_t kBlocks = 5;
    const int64_t values = kBlocks * hwinfer_dtype_block_values(dtype);
    std::vector<uint8_t> w(static_cast<size_t>(kBlocks * hwinfer_dtype_block_bytes(dtype)));
    reference::fill_random_blocks(dtype, kBlocks, rng(), w.data());
    std::vector<float> portable(static_cast<size_t>(values));
    weight_dequantize(dtype, GemmIsa::kPortable)(w.data(), kBlocks, portable.data());
    for (GemmIsa isa : Isas()) {
      std::vector<float> out(static_cast<size_t>(values), -1.0f);
      weight_dequantize(dtype, isa)(w.data(), kBlocks, out.data());
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] != portable[i]) {
          ADD_FAILURE() << gemm_isa_name(isa) << " dtype " << dtype << " value " << i << ": "
                        << out[i] << " vs " << portable[i];
          break;
        }
      }
    }
  }
}

// The K-quants have a third decode kernel (AVX-512 VNNI), which weight_dot() prefers over the AVX2
// one where the CPU has it: each build is checked here against the portable one directly, so both
// stay tested on any CPU that runs them.
TEST(CpuMatmulIsa, EveryKQuantDotKernelMatchesThePortableOne) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  constexpr int64_t kBlocks = 3, kRows = 6;
  std::vector<float> x(static_cast<size_t>(kRows * kBlocks * 256));
  for (float& v : x) v = dist(rng);
  std::vector<XBlockQ8K> xq(static_cast<size_t>(kRows * kBlocks));
  for (int64_t i = 0; i < kRows; ++i) {
    quantize_x_q8_k(x.data() + i * kBlocks * 256, kBlocks, xq.data() + i * kBlocks);
  }
  for (uint32_t dtype : {HWINFER_DTYPE_Q2_K, HWINFER_DTYPE_Q3_K, HWINFER_DTYPE_Q4_K,
                         HWINFER_DTYPE_Q5_K, HWINFER_DTYPE_Q6_K}) {
    std::vector<uint8_t> w(static_cast<size_t>(kBlocks * hwinfer_dtype_block_bytes(dtype)));
    reference::fill_random_blocks(dtype, kBlocks, rng(), w.data());
    std::vector<std::pair<const char*, WeightDotFn>> kernels;
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
    if (detect_gemm_isa() == GemmIsa::kAvx2Fma)
      kernels.emplace_back("avx2", weight_dot_avx2(dtype));
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
    if (use_avx512_vnni()) kernels.emplace_back("avx512-vnni", weight_dot_avx512(dtype));
#endif
    for (int64_t m = 1; m <= kRows; ++m) {
      float want[kRows], got[kRows];
      weight_dot(dtype, GemmIsa::kPortable)(xq.data(), kBlocks, m, w.data(), kBlocks, want);
      for (const auto& [name, dot] : kernels) {
        dot(xq.data(), kBlocks, m, w.data(), kBlocks, got);
        for (int64_t i = 0; i < m; ++i) {
          EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])))
              << name << " dtype " << dtype << " m " << m << " row " << i;
        }
      }
    }
  }
}

// c [m, n] F32 = a [m, k] F32 @ B, B of |b_dtype|: [n, k] when |transposed| (weights), else [k, n].
GemmHalfProblem HalfWeightProblem(int64_t m, int64_t n, int64_t k, const float* a,
                                  const uint16_t* b, uint32_t b_dtype, bool transposed, float* c) {
  GemmHalfProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = a;
  p.a_dtype = HWINFER_DTYPE_F32;
  p.a_row_stride = k;
  p.a_col_stride = 1;
  p.b = b;
  p.b_dtype = b_dtype;
  p.b_row_stride = transposed ? 1 : n;
  p.b_col_stride = transposed ? k : 1;
  p.c = c;
  p.c_dtype = HWINFER_DTYPE_F32;
  p.c_row_stride = n;
  p.c_col_stride = 1;
  return p;
}

TEST(CpuMatmulIsa, HalfGemmBothBuildsMatchTheReference) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  ThreadPool pool(2);
  ScratchBuffer scratch;
  constexpr int64_t n = 45, k = 300;
  for (uint32_t b_dtype : {HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16}) {
    std::vector<uint16_t> b(static_cast<size_t>(n * k));
    for (auto& v : b) {
      v = b_dtype == HWINFER_DTYPE_F16 ? reference::f32_to_f16(dist(rng))
                                       : reference::f32_to_bf16(dist(rng));
    }
    for (int64_t m : {int64_t{1}, int64_t{5}, int64_t{20}, int64_t{70}}) {
      for (bool transposed : {true, false}) {
        std::vector<float> a(static_cast<size_t>(m * k));
        for (float& v : a) v = dist(rng);
        std::vector<float> want(static_cast<size_t>(m * n));
        reference::gemm_reference(m, n, k, a.data(), HWINFER_DTYPE_F32, k, b.data(), b_dtype,
                                  transposed ? k : n, transposed, want.data(), HWINFER_DTYPE_F32, n,
                                  1.0f, 0.0f);
        // Where bf16 weights run in their own precision: the same product of a rounded to bf16.
        std::vector<float> a_bf16(a.size());
        for (size_t e = 0; e < a.size(); ++e) {
          a_bf16[e] = reference::bf16_to_f32(reference::f32_to_bf16(a[e]));
        }
        std::vector<float> want_bf16_a(static_cast<size_t>(m * n));
        reference::gemm_reference(m, n, k, a_bf16.data(), HWINFER_DTYPE_F32, k, b.data(), b_dtype,
                                  transposed ? k : n, transposed, want_bf16_a.data(),
                                  HWINFER_DTYPE_F32, n, 1.0f, 0.0f);
        for (GemmIsa isa : Isas()) {
          SCOPED_TRACE(testing::Message() << gemm_isa_name(isa) << " b dtype " << b_dtype << " m "
                                          << m << " transposed " << transposed);
          std::vector<float> c(static_cast<size_t>(m * n), -1.0f);
          gemm_half(HalfWeightProblem(m, n, k, a.data(), b.data(), b_dtype, transposed, c.data()),
                    pool, isa, scratch);
          const bool bf16_pairs = b_dtype == HWINFER_DTYPE_BF16 && transposed &&
                                  gemm_half_kernels_for(isa).dot_tiles_bf16 != nullptr;
          EXPECT_LE(Nmse(c, bf16_pairs ? want_bf16_a : want), 1e-11);
          // And the rounding is what that path adds: ~u(bf16)^2 / 3 (about 2e-6) against f32 a.
          if (bf16_pairs) {
            EXPECT_LE(Nmse(c, want), 1e-5);
          }
        }
      }
    }
  }
}

// The AVX-512 half tiles run at every m (decode and prefill): a row of a gets the same sums bit for
// bit whether it is alone (m = 1), in a batch (tiles and their edges) or in a prompt (m = 100,
// past the AVX2 build's tile limit), through the driver and through the kernels. bf16 weights:
// the bf16 pair tiles where the CPU has them (a rounded to bf16 once), else the widening ones.
TEST(CpuMatmulIsa, HalfTilesGiveEveryRowTheSameSumsAtEveryM) {
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
  if (detect_gemm_isa() != GemmIsa::kAvx2Fma || !use_avx512_vnni()) {
    GTEST_SKIP() << "no AVX-512 on this CPU (or HWINFER_CPU_AVX512=0)";
  }
  const GemmHalfKernels& kernels = gemm_half_kernels_for(GemmIsa::kAvx2Fma);
  ASSERT_TRUE(kernels.tiles_at_every_m);
  std::mt19937 rng(15);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  ThreadPool pool(2);
  ScratchBuffer scratch;
  constexpr int64_t n = 23;  // 4-row column blocks and a 3-row edge
  for (int64_t k : {int64_t{300}, int64_t{2048}, int64_t{7}}) {  // a masked tail, none, only one
    for (uint32_t b_dtype : {HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16}) {
      const bool bf16 = b_dtype == HWINFER_DTYPE_BF16;
      std::vector<uint16_t> b(static_cast<size_t>(n * k));
      for (auto& v : b)
        v = bf16 ? reference::f32_to_bf16(dist(rng)) : reference::f32_to_f16(dist(rng));
      constexpr int64_t kRows = 100;
      std::vector<float> a(static_cast<size_t>(kRows * k));
      for (float& v : a) v = dist(rng);
      std::vector<uint16_t> a_bf16(a.size());
      const bool pairs = bf16 && kernels.dot_tiles_bf16 != nullptr;
      if (pairs) kernels.to_bf16(a.data(), static_cast<int64_t>(a.size()), a_bf16.data());
      auto tiles = [&](int64_t row, int64_t m, int64_t j0, int64_t rows, float* out) {
        if (pairs) {
          kernels.dot_tiles_bf16(a_bf16.data() + row * k, k, m, b.data() + j0 * k, k, rows, k, out);
        } else {
          kernels.dot_tiles(a.data() + row * k, k, m, b.data() + j0 * k, k, rows, k, bf16, out);
        }
      };
      std::vector<float> alone(static_cast<size_t>(kRows * n));  // [row][weight row], m = 1
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < kRows; ++i) tiles(i, 1, j, 1, &alone[i * n + j]);
      }
      for (int64_t m : {int64_t{1}, int64_t{6}, int64_t{kRows}}) {
        SCOPED_TRACE(testing::Message() << "k " << k << " b dtype " << b_dtype << " m " << m);
        std::vector<float> tiled(static_cast<size_t>(m * n), -1.0f);
        tiles(0, m, 0, n, tiled.data());
        std::vector<float> c(static_cast<size_t>(m * n), -1.0f);
        gemm_half(HalfWeightProblem(m, n, k, a.data(), b.data(), b_dtype, true, c.data()), pool,
                  GemmIsa::kAvx2Fma, scratch);
        for (size_t e = 0; e < tiled.size(); ++e) {
          ASSERT_EQ(tiled[e], alone[e]) << "dot_tiles, output " << e;
          ASSERT_EQ(c[e], alone[e]) << "gemm_half, output " << e;
        }
      }
      if (!pairs) {  // dot_rows (the widening set's m = 1 kernel) is the same tiles
        float sum = 0.0f;
        kernels.dot_rows(a.data(), k, 1, b.data(), k, bf16, &sum);
        EXPECT_EQ(sum, alone[0]);
      }
    }
  }
#else
  GTEST_SKIP() << "built without the AVX-512 kernels";
#endif
}

// The FMA micro-kernels (AVX2's 6 x 16, AVX-512's 12 x 32; the ctest cpu_matmul_isa_with_avx512_off
// runs this with the first) compute each element of c as one chain of FMAs over a 256-value k
// block, the blocks' sums added in order: the same bits whatever the kernel's tile shape.
TEST(CpuMatmulIsa, F32GemmIsOneFmaChainPerKBlock) {
  if (detect_gemm_isa() != GemmIsa::kAvx2Fma) GTEST_SKIP() << "no FMA kernel on this CPU";
  constexpr int64_t kM = 37, kN = 70, kK = 600, kBlock = 256;  // k blocks of 256, 256 and 88
  std::mt19937 rng(20261206);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(kM * kK), b(kN * kK), c(kM * kN, 0.0f);  // b: [n, k] weights
  for (float& v : a) v = uniform(rng);
  for (float& v : b) v = uniform(rng);
  GemmF32Problem problem;
  problem.m = kM;
  problem.n = kN;
  problem.k = kK;
  problem.a = a.data();
  problem.a_row_stride = kK;
  problem.a_col_stride = 1;
  problem.b = b.data();
  problem.b_row_stride = 1;
  problem.b_col_stride = kK;
  problem.c = c.data();
  problem.c_row_stride = kN;
  problem.c_col_stride = 1;
  ThreadPool pool(2);
  gemm_f32(problem, pool, GemmIsa::kAvx2Fma);
  int mismatches = 0;
  for (int64_t i = 0; i < kM; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      float expected = 0.0f;
      for (int64_t l0 = 0; l0 < kK; l0 += kBlock) {
        float chain = 0.0f;
        for (int64_t l = l0; l < std::min(kK, l0 + kBlock); ++l) {
          chain = std::fma(a[i * kK + l], b[j * kK + l], chain);
        }
        expected = l0 == 0 ? chain : expected + chain;
      }
      if (c[i * kN + j] != expected && ++mismatches <= 3) {
        ADD_FAILURE() << "c[" << i << ", " << j << "] = " << c[i * kN + j] << ", expected "
                      << expected << " (" << gemm_isa_name(GemmIsa::kAvx2Fma) << ")";
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace hwinfer::cpu
