// matmul_quantized.cpp — see matmul_quantized.h. The driver (decode path over quantized x,
// prefill path through gemm_f32_packed_b) and the portable kernels of
// matmul_quantized_kernels.h. Built without -m flags: only matmul_quantized_avx2.cpp may contain
// AVX2 instructions.
#include "matmul_quantized.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hwinfer/plugin.h"
#include "matmul_quantized_kernels.h"
#include "reference/half.h"
#include "weight_formats.h"

namespace hwinfer::cpu {

namespace {

constexpr int64_t kBlockValues = 32;
constexpr int64_t kGemvMinItemBytes = 64 << 10;   // weight bytes per work item, at least
constexpr int64_t kPackMaxK = 256;                // gemm_f32_packed_b's largest kc
constexpr int64_t kDotMaxRows = 64;               // x rows per call of a row kernel (dot_*)
constexpr int64_t kTileMinRows = 2;               // from this m, Q8_0 / Q4_0 run in tiles
constexpr int64_t kParallelQuantizeMinRows = 16;  // from this m, x rows are quantized in parallel
static_assert(HWINFER_QK8_0 == kBlockValues && HWINFER_QK4_0 == kBlockValues, "32-value blocks");
static_assert(kPackMaxK % kBlockValues == 0, "panels hold whole 32-value blocks");

int64_t ceil_div(int64_t x, int64_t d) { return (x + d - 1) / d; }

float block_scale(const uint8_t* block) {
  uint16_t d;
  std::memcpy(&d, block, sizeof(d));
  return reference::f16_to_f32(d);
}

// ---- portable kernels --------------------------------------------------------------------------

void quantize_x_portable(const float* x, int64_t blocks, XBlockQ8* out) {
  for (int64_t b = 0; b < blocks; ++b) {
    const float* v = x + b * kBlockValues;
    float amax = 0.0f;
    for (int t = 0; t < kBlockValues; ++t) amax = std::max(amax, std::fabs(v[t]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int sum = 0;
    for (int t = 0; t < kBlockValues; ++t) {
      out[b].q[t] = static_cast<int8_t>(std::lround(v[t] * id));
      sum += out[b].q[t];
    }
    out[b].d = reference::f16_to_f32(reference::f32_to_f16(d));
    out[b].s = reference::f16_to_f32(reference::f32_to_f16(static_cast<float>(sum) * d));
  }
}

// Weight block b of a row as 32 int8 values and its scale.
void unpack_q8_0(const uint8_t* block, int8_t* q) { std::memcpy(q, block + 2, kBlockValues); }
void unpack_q4_0(const uint8_t* block, int8_t* q) {
  for (int t = 0; t < kBlockValues / 2; ++t) {
    q[t] = static_cast<int8_t>((block[2 + t] & 0x0f) - 8);
    q[t + kBlockValues / 2] = static_cast<int8_t>((block[2 + t] >> 4) - 8);
  }
}

void dot_q8_0_portable(const XBlockQ8* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                       int64_t blocks, float* sums) {
  for (int64_t i = 0; i < m; ++i) sums[i] = 0.0f;
  int8_t w_q[kBlockValues];
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * HWINFER_Q8_0_BLOCK_BYTES;
    unpack_q8_0(block, w_q);
    const float d_w = block_scale(block);
    for (int64_t i = 0; i < m; ++i) {
      const XBlockQ8& x_block = xq[i * x_stride + b];
      int32_t dot = 0;
      for (int t = 0; t < kBlockValues; ++t) dot += int32_t{x_block.q[t]} * int32_t{w_q[t]};
      sums[i] += d_w * x_block.d * static_cast<float>(dot);
    }
  }
}

void dot_q4_0_portable(const XQuadQ4* xq, int64_t x_stride, int64_t m, const uint8_t* w_row,
                       int64_t blocks, float* sums) {
  for (int64_t i = 0; i < m; ++i) sums[i] = 0.0f;
  int8_t w_q[kBlockValues];
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * HWINFER_Q4_0_BLOCK_BYTES;
    unpack_q4_0(block, w_q);
    const float d_w = block_scale(block);
    const int64_t slot = b % 4;  // the block's place in its quad
    for (int64_t i = 0; i < m; ++i) {
      const XQuadQ4& quad = xq[i * x_stride + b / 4];
      int32_t dot = 0;
      for (int t = 0; t < 16; ++t) {
        dot += int32_t{quad.lo[16 * slot + t]} * int32_t{w_q[t]} +
               int32_t{quad.hi[16 * slot + t]} * int32_t{w_q[t + 16]};
      }
      sums[i] += d_w * quad.d[4 * slot] * static_cast<float>(dot);
    }
  }
}

template <void (*kUnpack)(const uint8_t*, int8_t*), int64_t kBlockBytes>
void dequantize_portable(const uint8_t* w_row, int64_t blocks, float* out) {
  int8_t w_q[kBlockValues];
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* block = w_row + b * kBlockBytes;
    kUnpack(block, w_q);
    const float d_w = block_scale(block);
    for (int t = 0; t < kBlockValues; ++t) out[b * kBlockValues + t] = d_w * w_q[t];
  }
}

const MatmulQuantizedKernels& kernels_for(GemmIsa isa) {
  static const MatmulQuantizedKernels portable = matmul_quantized_kernels_portable();
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
  static const MatmulQuantizedKernels vnni = matmul_quantized_kernels_vnni();
  if (isa == GemmIsa::kAvx2Fma && use_avx512_vnni()) return vnni;
#endif
  static const MatmulQuantizedKernels avx2 = matmul_quantized_kernels_avx2();
  if (isa == GemmIsa::kAvx2Fma) return avx2;
#else
  (void)isa;
#endif
  return portable;
}

// ---- decode: quantized x, one pass over the weights --------------------------------------------

// About 8 items per thread (at least 64 KiB of weights each): the threads finish together even
// when one wakes late, and each still streams long runs of consecutive rows.
int64_t gemv_rows_per_item(const MatmulQuantizedProblem& p, const ThreadPool& pool) {
  const int64_t row_bytes = std::max<int64_t>(1, p.w_row_bytes);
  return std::max(ceil_div(kGemvMinItemBytes, row_bytes),
                  ceil_div(p.n, 8 * static_cast<int64_t>(pool.thread_count())));
}

void matmul_gemv(const MatmulQuantizedProblem& p, ThreadPool& pool,
                 const MatmulQuantizedKernels& kernels, ScratchBuffer& scratch) {
  const int64_t blocks = p.k / kBlockValues;
  const int64_t quads = (blocks + 3) / 4;
  const bool q4 = p.w_dtype == HWINFER_DTYPE_Q4_0;
  // Scratch: [m, quads] x quads (Q4_0 only; 64-byte aligned at the front), [m, blocks] quantized
  // x, then (for strided x) contiguous copies of x: one row, or every row when quantized in
  // parallel.
  const size_t quads_bytes = q4 ? static_cast<size_t>(p.m * quads) * sizeof(XQuadQ4) : 0;
  const size_t xq_bytes = static_cast<size_t>(p.m * blocks) * sizeof(XBlockQ8);
  // Strided x: one contiguous copy per row, so that rows can be quantized in parallel.
  const bool parallel_quantize = p.m >= kParallelQuantizeMinRows;
  const int64_t x_copies = p.x_col_stride == 1 ? 0 : parallel_quantize ? p.m : 1;
  const size_t x_copy_bytes = static_cast<size_t>(x_copies * p.k) * sizeof(float);
  auto* base = static_cast<uint8_t*>(scratch.get(quads_bytes + xq_bytes + x_copy_bytes));
  auto* x_quads = reinterpret_cast<XQuadQ4*>(base);
  auto* xq = reinterpret_cast<XBlockQ8*>(base + quads_bytes);
  auto* x_copy = reinterpret_cast<float*>(base + quads_bytes + xq_bytes);
  auto quantize_row = [&](int64_t i, float* row_copy) {
    const float* x_i = p.x + i * p.x_row_stride;
    if (p.x_col_stride != 1) {
      for (int64_t l = 0; l < p.k; ++l) row_copy[l] = x_i[l * p.x_col_stride];
      x_i = row_copy;
    }
    kernels.quantize_x(x_i, blocks, xq + i * blocks);
    if (q4) make_x_quads_q4(xq + i * blocks, blocks, x_quads + i * quads);
  };
  if (parallel_quantize) {
    pool.parallel_for(
        p.m, [&](int64_t i) { quantize_row(i, x_copies == 0 ? nullptr : x_copy + i * p.k); });
  } else {
    for (int64_t i = 0; i < p.m; ++i) quantize_row(i, x_copy);
  }

  const int64_t per_item = gemv_rows_per_item(p, pool);
  auto(*tiles)(const QuantizedTileArgs&) = q4 ? kernels.tiles_q4_0 : kernels.tiles_q8_0;
  if (p.m >= kTileMinRows && tiles != nullptr) {
    pool.parallel_for(ceil_div(p.n, per_item), [&](int64_t item) {
      const int64_t j0 = item * per_item;
      QuantizedTileArgs args;
      args.xq = q4 ? static_cast<const void*>(x_quads) : static_cast<const void*>(xq);
      args.x_stride = q4 ? quads : blocks;
      args.m = p.m;
      args.w = p.w + j0 * p.w_row_bytes;
      args.w_row_bytes = p.w_row_bytes;
      args.rows = std::min(p.n, j0 + per_item) - j0;
      args.blocks = blocks;
      args.y = p.y + j0 * p.y_col_stride;
      args.y_row_stride = p.y_row_stride;
      args.y_col_stride = p.y_col_stride;
      tiles(args);
    });
    return;
  }
  pool.parallel_for(ceil_div(p.n, per_item), [&](int64_t item) {
    const int64_t j_end = std::min(p.n, (item + 1) * per_item);
    float sums[kDotMaxRows];
    for (int64_t j = item * per_item; j < j_end; ++j) {
      for (int64_t i0 = 0; i0 < p.m; i0 += kDotMaxRows) {
        const int64_t rows = std::min(kDotMaxRows, p.m - i0);
        if (q4) {
          kernels.dot_q4_0(x_quads + i0 * quads, quads, rows, p.w + j * p.w_row_bytes, blocks,
                           sums);
        } else {
          kernels.dot_q8_0(xq + i0 * blocks, blocks, rows, p.w + j * p.w_row_bytes, blocks, sums);
        }
        for (int64_t i = 0; i < rows; ++i) {
          p.y[(i0 + i) * p.y_row_stride + j * p.y_col_stride] = sums[i];
        }
      }
    }
  });
}

// The decode path for the types of weight_formats.h: x quantized to the format's activation
// blocks (XBlockQ8 through |kernels|, or XBlockQ8K), then one pass over the weights.
void matmul_gemv_format(const MatmulQuantizedProblem& p, const WeightFormat& format,
                        ThreadPool& pool, GemmIsa isa, const MatmulQuantizedKernels& kernels,
                        ScratchBuffer& scratch) {
  const int64_t x_blocks = p.k / (format.x_q8_k ? 256 : kBlockValues);
  const size_t x_block_bytes = format.x_q8_k ? sizeof(XBlockQ8K) : sizeof(XBlockQ8);
  const size_t xq_bytes = static_cast<size_t>(p.m * x_blocks) * x_block_bytes;
  const size_t x_row_bytes = p.x_col_stride == 1 ? 0 : static_cast<size_t>(p.k) * sizeof(float);
  auto* base = static_cast<uint8_t*>(scratch.get(xq_bytes + x_row_bytes));
  auto* x_row = reinterpret_cast<float*>(base + xq_bytes);
  for (int64_t i = 0; i < p.m; ++i) {
    const float* x_i = p.x + i * p.x_row_stride;
    if (p.x_col_stride != 1) {
      for (int64_t l = 0; l < p.k; ++l) x_row[l] = x_i[l * p.x_col_stride];
      x_i = x_row;
    }
    uint8_t* out = base + static_cast<size_t>(i * x_blocks) * x_block_bytes;
    if (format.x_q8_k) {
      quantize_x_q8_k(x_i, x_blocks, reinterpret_cast<XBlockQ8K*>(out));
    } else {
      kernels.quantize_x(x_i, x_blocks, reinterpret_cast<XBlockQ8*>(out));
    }
  }
  const int64_t w_blocks = p.k / format.block_values;
  const WeightDotFn dot = weight_dot(format.dtype, isa);
  const int64_t per_item = gemv_rows_per_item(p, pool);
  pool.parallel_for(ceil_div(p.n, per_item), [&](int64_t item) {
    const int64_t j_end = std::min(p.n, (item + 1) * per_item);
    float sums[kMatmulQuantizedGemvMaxM];
    for (int64_t j = item * per_item; j < j_end; ++j) {
      dot(base, x_blocks, p.m, p.w + j * p.w_row_bytes, w_blocks, sums);
      for (int64_t i = 0; i < p.m; ++i) p.y[i * p.y_row_stride + j * p.y_col_stride] = sums[i];
    }
  });
}

// ---- prefill: weights dequantized into the f32 GEMM's packed panels ----------------------------

struct QuantizedPackContext {
  const MatmulQuantizedProblem* problem;
  WeightDequantizeFn dequantize;
  int64_t block_values;
  int64_t block_bytes;
};

// GemmBPacker::pack for B[l, j] = dequant(w)[j, l] (see gemm_f32.h); l0 and kc are multiples of
// 32, not necessarily of a 256-value super-block: whole blocks are dequantized around the range.
void pack_quantized(const void* context, int64_t col0, int64_t cols, int64_t l0, int64_t kc,
                    int64_t nr, float* out) {
  const auto& ctx = *static_cast<const QuantizedPackContext*>(context);
  const MatmulQuantizedProblem& p = *ctx.problem;
  float column[kPackMaxK + 2 * 256];
  const int64_t first = l0 / ctx.block_values;
  const int64_t blocks = ceil_div(l0 + kc, ctx.block_values) - first;
  const float* range = column + (l0 - first * ctx.block_values);
  for (int64_t j = 0; j < cols; j += nr) {
    float* panel = out + j * kc;
    const int64_t valid = std::min(nr, cols - j);
    for (int64_t jj = 0; jj < valid; ++jj) {
      const uint8_t* blocks_at = p.w + (col0 + j + jj) * p.w_row_bytes + first * ctx.block_bytes;
      ctx.dequantize(blocks_at, blocks, column);
      for (int64_t l = 0; l < kc; ++l) panel[l * nr + jj] = range[l];
    }
    for (int64_t l = 0; l < kc; ++l) {
      for (int64_t jj = valid; jj < nr; ++jj) panel[l * nr + jj] = 0.0f;
    }
  }
}

void matmul_packed(const MatmulQuantizedProblem& p, ThreadPool& pool, GemmIsa isa,
                   const MatmulQuantizedKernels& kernels) {
  GemmF32Problem f;
  f.m = p.m;
  f.n = p.n;
  f.k = p.k;
  f.a = p.x;
  f.a_row_stride = p.x_row_stride;
  f.a_col_stride = p.x_col_stride;
  f.c = p.y;
  f.c_row_stride = p.y_row_stride;
  f.c_col_stride = p.y_col_stride;
  f.alpha = 1.0f;
  f.beta = 0.0f;
  // Q8_0 / Q4_0 from |kernels|, the other types from weight_formats.h.
  const WeightDequantizeFn dequantize = weight_format(p.w_dtype) != nullptr
                                            ? weight_dequantize(p.w_dtype, isa)
                                        : p.w_dtype == HWINFER_DTYPE_Q8_0 ? kernels.dequantize_q8_0
                                                                          : kernels.dequantize_q4_0;
  const QuantizedPackContext context{&p, dequantize, hwinfer_dtype_block_values(p.w_dtype),
                                     hwinfer_dtype_block_bytes(p.w_dtype)};
  gemm_f32_packed_b(f, GemmBPacker{&pack_quantized, &context}, pool, isa);
}

}  // namespace

void make_x_quads_q4(const XBlockQ8* blocks, int64_t count, XQuadQ4* out) {
  for (int64_t b = 0; b < (count + 3) / 4 * 4; ++b) {
    XQuadQ4& quad = out[b / 4];
    const int64_t slot = b % 4;
    int32_t sum = 0;
    for (int t = 0; t < 16; ++t) {
      const int8_t lo = b < count ? blocks[b].q[t] : int8_t{0};
      const int8_t hi = b < count ? blocks[b].q[t + 16] : int8_t{0};
      quad.lo[16 * slot + t] = lo;
      quad.hi[16 * slot + t] = hi;
      sum += lo + hi;
    }
    for (int lane = 0; lane < 4; ++lane) {
      quad.d[4 * slot + lane] = b < count ? blocks[b].d : 0.0f;
      quad.correction[4 * slot + lane] = -2 * sum;
    }
  }
}

MatmulQuantizedKernels matmul_quantized_kernels_portable() {
  MatmulQuantizedKernels kernels;
  kernels.quantize_x = &quantize_x_portable;
  kernels.dot_q8_0 = &dot_q8_0_portable;
  kernels.dot_q4_0 = &dot_q4_0_portable;
  kernels.dequantize_q8_0 = &dequantize_portable<&unpack_q8_0, HWINFER_Q8_0_BLOCK_BYTES>;
  kernels.dequantize_q4_0 = &dequantize_portable<&unpack_q4_0, HWINFER_Q4_0_BLOCK_BYTES>;
  return kernels;  // no tiles: every m runs the row kernels
}

void matmul_quantized(const MatmulQuantizedProblem& problem, ThreadPool& pool, GemmIsa isa,
                      ScratchBuffer& scratch) {
  if (problem.m <= 0 || problem.n <= 0 || problem.k <= 0) return;
  const MatmulQuantizedKernels& kernels = kernels_for(isa);
  const WeightFormat* format = weight_format(problem.w_dtype);
  if (format == nullptr) {  // Q8_0, Q4_0: int8 dot products at every m
    matmul_gemv(problem, pool, kernels, scratch);
  } else if (problem.m <= kMatmulQuantizedGemvMaxM) {
    matmul_gemv_format(problem, *format, pool, isa, kernels, scratch);
  } else {
    matmul_packed(problem, pool, isa, kernels);
  }
}

}  // namespace hwinfer::cpu
