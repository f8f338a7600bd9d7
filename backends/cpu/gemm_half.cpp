// gemm_half.cpp — see gemm_half.h. The driver (f32 copies of half a/c, the decode path, the
// packer for the f32 micro-kernel) and the portable kernels of gemm_half_kernels.h. Built without
// -m flags: only gemm_half_avx2.cpp may contain AVX2 instructions.
#include "gemm_half.h"

#include <algorithm>
#include <vector>

#include "gemm_half_kernels.h"
#include "hwinfer/plugin.h"
#include "reference/half.h"
#include "weight_formats.h"

namespace hwinfer::cpu {

namespace {

// m <= this streams B once from memory (decode, batched decode): through register tiles where
// the ISA has them, else row by row; larger m (prefill) packs B for the f32 GEMM micro-kernel,
// except with tiles that are fast at every m (AVX-512: tiles_at_every_m), which run prefill too.
constexpr int64_t kTilesMaxM = 64;
constexpr int64_t kRowsMaxM = 8;
constexpr int64_t kChunkMaxRows = 64;            // rows of a per dot_tiles pass, at most
constexpr int64_t kGemvMinItemBytes = 64 << 10;  // weight bytes per work item, at least
constexpr int64_t kPackMaxK = 256;               // gemm_f32_packed_b's largest kc
constexpr int64_t kTileCols = 24;                // weight rows per dot_tiles call
constexpr int64_t kTileABytes = 256 << 10;       // rows of a per pass: about 256 KiB (L2)

int64_t ceil_div(int64_t x, int64_t d) { return (x + d - 1) / d; }

float half_to_f32(uint16_t h, bool bf16) {
  return bf16 ? reference::bf16_to_f32(h) : reference::f16_to_f32(h);
}

float load_f32(const void* base, int64_t index, uint32_t dtype) {
  if (dtype == HWINFER_DTYPE_F32) return static_cast<const float*>(base)[index];
  return half_to_f32(static_cast<const uint16_t*>(base)[index], dtype == HWINFER_DTYPE_BF16);
}

void store_from_f32(void* base, int64_t index, uint32_t dtype, float value) {
  if (dtype == HWINFER_DTYPE_F32) {
    static_cast<float*>(base)[index] = value;
  } else if (dtype == HWINFER_DTYPE_BF16) {
    static_cast<uint16_t*>(base)[index] = reference::f32_to_bf16(value);
  } else {
    static_cast<uint16_t*>(base)[index] = reference::f32_to_f16(value);
  }
}

void to_f32_portable(const uint16_t* src, int64_t n, bool bf16, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = half_to_f32(src[i], bf16);
}

void dot_rows_portable(const float* a, int64_t lda, int64_t m, const uint16_t* b_row, int64_t k,
                       bool bf16, float* sums) {
  float b_block[64];
  for (int64_t i = 0; i < m; ++i) sums[i] = 0.0f;
  for (int64_t l0 = 0; l0 < k; l0 += 64) {
    const int64_t len = std::min<int64_t>(64, k - l0);
    to_f32_portable(b_row + l0, len, bf16, b_block);
    for (int64_t i = 0; i < m; ++i) {
      const float* a_row = a + i * lda + l0;
      float lanes[8] = {};
      int64_t l = 0;
      for (; l + 8 <= len; l += 8) {
        for (int t = 0; t < 8; ++t) lanes[t] += a_row[l + t] * b_block[l + t];
      }
      float sum = 0.0f;
      for (; l < len; ++l) sum += a_row[l] * b_block[l];
      for (float lane : lanes) sum += lane;
      sums[i] += sum;
    }
  }
}

// c[i,j] = alpha * sum + beta * c[i,j] (c not read when beta == 0); c is f32 here.
inline void store_c(const GemmF32Problem& p, int64_t i, int64_t j, float sum) {
  float* c_ij = p.c + i * p.c_row_stride + j * p.c_col_stride;
  float value = p.alpha * sum;
  if (p.beta != 0.0f) value += p.beta * *c_ij;
  *c_ij = value;
}

// Weight rows per work item: about 8 items per thread (at least 64 KiB of weights each), so the
// threads finish together even when one wakes late and each still streams long runs of
// consecutive rows; whole dot_tiles calls, so that only the last item ends in narrow edge tiles.
int64_t gemv_rows_per_item(const GemmF32Problem& p, const ThreadPool& pool) {
  const int64_t row_bytes = std::max<int64_t>(1, p.k * 2);
  const int64_t rows = std::max(ceil_div(kGemvMinItemBytes, row_bytes),
                                ceil_div(p.n, 8 * static_cast<int64_t>(pool.thread_count())));
  return kTileCols * ceil_div(rows, kTileCols);
}

// Decode with one row of a at a time (no tiles in this kernel set): B[l, j] contiguous along l
// (weights [n, k]), a contiguous along k, m <= kRowsMaxM; each weight row read once.
void gemv_rows(const GemmF32Problem& p, const uint16_t* b, int64_t ldb, bool bf16, ThreadPool& pool,
               const GemmHalfKernels& kernels) {
  const int64_t per_item = gemv_rows_per_item(p, pool);
  pool.parallel_for(ceil_div(p.n, per_item), [&](int64_t item) {
    float sums[kRowsMaxM];
    for (int64_t j = item * per_item; j < std::min(p.n, (item + 1) * per_item); ++j) {
      kernels.dot_rows(p.a, p.a_row_stride, p.m, b + j * ldb, p.k, bf16, sums);
      for (int64_t i = 0; i < p.m; ++i) store_c(p, i, j, sums[i]);
    }
  });
}

// Decode and (AVX-512) prefill through register tiles: a [m, k] of A, rows lda apart (p.a is not
// read), against weights [n, k]; each item reads its weight rows once from memory per chunk of
// rows of a that stays in L2 (equal chunks in multiples of 4 rows: no narrow edge tiles).
// tiles(a_rows, lda, m, b_rows, ldb, n_rows, k, out) is the kernel set's dot_tiles on A.
template <typename A, typename Tiles>
void gemv_tiles(const GemmF32Problem& p, const A* a, int64_t lda, const uint16_t* b, int64_t ldb,
                ThreadPool& pool, const Tiles& tiles) {
  const int64_t per_item = gemv_rows_per_item(p, pool);
  const int64_t max_chunk =
      std::clamp<int64_t>(kTileABytes / (p.k * static_cast<int64_t>(sizeof(A))), 4, kChunkMaxRows);
  const int64_t chunk = 4 * ceil_div(ceil_div(p.m, ceil_div(p.m, max_chunk)), 4);
  pool.parallel_for(ceil_div(p.n, per_item), [&](int64_t item) {
    const int64_t j_end = std::min(p.n, (item + 1) * per_item);
    float out[kChunkMaxRows * kTileCols];  // [rows of a in the chunk][weight rows]
    for (int64_t i0 = 0; i0 < p.m; i0 += chunk) {
      const int64_t rows = std::min(chunk, p.m - i0);
      for (int64_t j0 = item * per_item; j0 < j_end; j0 += kTileCols) {
        const int64_t cols = std::min(kTileCols, j_end - j0);
        tiles(a + i0 * lda, lda, rows, b + j0 * ldb, ldb, cols, p.k, out);
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < cols; ++j) store_c(p, i0 + i, j0 + j, out[i * cols + j]);
        }
      }
    }
  });
}

struct HalfPackContext {
  const uint16_t* b;
  bool bf16;
  int64_t row_stride, col_stride;  // B[l, j] = b[l * row_stride + j * col_stride]
  const GemmHalfKernels* kernels;
};

// GemmBPacker::pack for f16/bf16 B (see gemm_f32.h).
void pack_half(const void* context, int64_t col0, int64_t cols, int64_t l0, int64_t kc, int64_t nr,
               float* out) {
  const auto& ctx = *static_cast<const HalfPackContext*>(context);
  float column[kPackMaxK];
  for (int64_t j = 0; j < cols; j += nr) {
    float* panel = out + j * kc;
    const int64_t valid = std::min(nr, cols - j);
    const uint16_t* block = ctx.b + l0 * ctx.row_stride + (col0 + j) * ctx.col_stride;
    if (ctx.row_stride == 1) {  // weights [n, k]: each column of B is contiguous
      for (int64_t jj = 0; jj < valid; ++jj) {
        ctx.kernels->to_f32(block + jj * ctx.col_stride, kc, ctx.bf16, column);
        for (int64_t l = 0; l < kc; ++l) panel[l * nr + jj] = column[l];
      }
    } else if (ctx.col_stride == 1) {  // [k, n]: rows of B contiguous
      for (int64_t l = 0; l < kc; ++l) {
        ctx.kernels->to_f32(block + l * ctx.row_stride, valid, ctx.bf16, panel + l * nr);
      }
    } else {
      for (int64_t jj = 0; jj < valid; ++jj) {
        for (int64_t l = 0; l < kc; ++l) {
          panel[l * nr + jj] =
              half_to_f32(block[l * ctx.row_stride + jj * ctx.col_stride], ctx.bf16);
        }
      }
    }
    for (int64_t l = 0; l < kc; ++l) {
      for (int64_t jj = valid; jj < nr; ++jj) panel[l * nr + jj] = 0.0f;
    }
  }
}

// a as f32 into f: as given, or converted into |scratch| ([m, k], dense).
void a_as_f32(const GemmHalfProblem& p, const GemmHalfKernels& kernels, ScratchBuffer& scratch,
              GemmF32Problem& f) {
  if (p.a_dtype == HWINFER_DTYPE_F32) {
    f.a = static_cast<const float*>(p.a);
    f.a_row_stride = p.a_row_stride;
    f.a_col_stride = p.a_col_stride;
    return;
  }
  auto* a_f32 = static_cast<float*>(scratch.get(static_cast<size_t>(p.m * p.k) * sizeof(float)));
  const auto* a = static_cast<const uint16_t*>(p.a);
  const bool bf16 = p.a_dtype == HWINFER_DTYPE_BF16;
  for (int64_t i = 0; i < p.m; ++i) {
    if (p.a_col_stride == 1) {
      kernels.to_f32(a + i * p.a_row_stride, p.k, bf16, a_f32 + i * p.k);
    } else {
      for (int64_t l = 0; l < p.k; ++l) {
        a_f32[i * p.k + l] = half_to_f32(a[i * p.a_row_stride + l * p.a_col_stride], bf16);
      }
    }
  }
  f.a = a_f32;
  f.a_row_stride = p.k;
  f.a_col_stride = 1;
}

// a as bf16 rows for dot_tiles_bf16: as given when it is bf16 along k, else rounded by to_bf16
// into |scratch| ([m, k], dense; *lda set). f32 and f16 values reach to_bf16 exactly as f32.
const uint16_t* a_as_bf16(const GemmHalfProblem& p, const GemmHalfKernels& kernels,
                          ScratchBuffer& scratch, int64_t* lda) {
  if (p.a_dtype == HWINFER_DTYPE_BF16 && p.a_col_stride == 1) {
    *lda = p.a_row_stride;
    return static_cast<const uint16_t*>(p.a);
  }
  // [m, k] bf16, then one f32 row at the next 64-byte boundary (m * k may be odd).
  const size_t a_bytes = (static_cast<size_t>(p.m * p.k) * sizeof(uint16_t) + 63) / 64 * 64;
  auto* a_bf16 = static_cast<uint16_t*>(scratch.get(a_bytes + static_cast<size_t>(p.k) * 4));
  auto* row = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(a_bf16) + a_bytes);  // [k]
  for (int64_t i = 0; i < p.m; ++i) {
    const float* row_f32 = row;
    if (p.a_dtype == HWINFER_DTYPE_F32 && p.a_col_stride == 1) {
      row_f32 = static_cast<const float*>(p.a) + i * p.a_row_stride;
    } else {
      for (int64_t l = 0; l < p.k; ++l) {
        row[l] = load_f32(p.a, i * p.a_row_stride + l * p.a_col_stride, p.a_dtype);
      }
    }
    kernels.to_bf16(row_f32, p.k, a_bf16 + i * p.k);
  }
  *lda = p.k;
  return a_bf16;
}

// The product into f (c as f32; a as f32 in f unless the bf16 pair path takes it from p).
void run_half_weights(const GemmHalfProblem& p, GemmF32Problem& f, ThreadPool& pool, GemmIsa isa,
                      const GemmHalfKernels& kernels, ScratchBuffer& scratch) {
  const auto* b = static_cast<const uint16_t*>(p.b);
  const bool bf16 = p.b_dtype == HWINFER_DTYPE_BF16;
  const int64_t ldb = p.b_col_stride;
  if (bf16 && p.b_row_stride == 1 && kernels.dot_tiles_bf16 != nullptr) {  // weights [n, k]
    int64_t lda = 0;
    const uint16_t* a = a_as_bf16(p, kernels, scratch, &lda);
    gemv_tiles(f, a, lda, b, ldb, pool, kernels.dot_tiles_bf16);
    return;
  }
  a_as_f32(p, kernels, scratch, f);
  const bool rows_of_b = p.b_row_stride == 1 && f.a_col_stride == 1;  // weights [n, k]
  if (rows_of_b && p.m > 1 && kernels.dot_tiles != nullptr &&
      (kernels.tiles_at_every_m || p.m <= kTilesMaxM)) {
    auto tiles = [&](const float* a, int64_t lda, int64_t m, const uint16_t* b_rows, int64_t b_ld,
                     int64_t rows, int64_t k, float* out) {
      kernels.dot_tiles(a, lda, m, b_rows, b_ld, rows, k, bf16, out);
    };
    gemv_tiles(f, f.a, f.a_row_stride, b, ldb, pool, tiles);
    return;
  }
  if (rows_of_b && p.m <= kRowsMaxM) {
    gemv_rows(f, b, ldb, bf16, pool, kernels);
    return;
  }
  const HalfPackContext context{b, bf16, p.b_row_stride, p.b_col_stride, &kernels};
  gemm_f32_packed_b(f, GemmBPacker{&pack_half, &context}, pool, isa);
}

}  // namespace

GemmHalfKernels gemm_half_kernels_portable() { return {&to_f32_portable, &dot_rows_portable}; }

const GemmHalfKernels& gemm_half_kernels_for(GemmIsa isa) {
  static const GemmHalfKernels portable = gemm_half_kernels_portable();
#if defined(HWINFER_CPU_HAVE_AVX512_BF16_KERNEL)
  static const GemmHalfKernels avx512_bf16 = gemm_half_kernels_avx512_bf16();
  if (isa == GemmIsa::kAvx2Fma && use_avx512_bf16()) return avx512_bf16;
#endif
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
  static const GemmHalfKernels avx512 = gemm_half_kernels_avx512();
  if (isa == GemmIsa::kAvx2Fma && use_avx512_vnni()) return avx512;
#endif
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
  static const GemmHalfKernels avx2 = gemm_half_kernels_avx2();
  if (isa == GemmIsa::kAvx2Fma) return avx2;
#else
  (void)isa;
#endif
  return portable;
}

void gemm_half(const GemmHalfProblem& p, ThreadPool& pool, GemmIsa isa, ScratchBuffer& scratch) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return;
  const GemmHalfKernels& kernels = gemm_half_kernels_for(isa);
  GemmF32Problem f;
  f.m = p.m;
  f.n = p.n;
  f.k = p.k;
  f.alpha = p.alpha;
  f.beta = p.beta;

  // c as f32: as given, or an f32 copy ([m, n], dense; the old c only when beta reads it).
  std::vector<float> c_f32;
  if (p.c_dtype == HWINFER_DTYPE_F32) {
    f.c = static_cast<float*>(p.c);
    f.c_row_stride = p.c_row_stride;
    f.c_col_stride = p.c_col_stride;
  } else {
    c_f32.resize(static_cast<size_t>(p.m * p.n));
    if (p.beta != 0.0f) {
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          c_f32[static_cast<size_t>(i * p.n + j)] =
              load_f32(p.c, i * p.c_row_stride + j * p.c_col_stride, p.c_dtype);
        }
      }
    }
    f.c = c_f32.data();
    f.c_row_stride = p.n;
    f.c_col_stride = 1;
  }

  if (p.b_dtype == HWINFER_DTYPE_F32) {
    a_as_f32(p, kernels, scratch, f);
    f.b = static_cast<const float*>(p.b);
    f.b_row_stride = p.b_row_stride;
    f.b_col_stride = p.b_col_stride;
    gemm_f32(f, pool, isa);
  } else {
    run_half_weights(p, f, pool, isa, kernels, scratch);
  }

  if (p.c_dtype != HWINFER_DTYPE_F32) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        store_from_f32(p.c, i * p.c_row_stride + j * p.c_col_stride, p.c_dtype,
                       c_f32[static_cast<size_t>(i * p.n + j)]);
      }
    }
  }
}

}  // namespace hwinfer::cpu
