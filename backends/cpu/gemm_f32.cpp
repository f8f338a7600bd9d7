// gemm_f32.cpp — see gemm_f32.h. Loop structure of the packed path (BLIS naming):
//
//   for col0 in n step kBlockN:                      B block columns
//     for l0 in k step kBlockK:                      k block (kc)
//       parallel: pack A[:, l0:l0+kc]   -> a_packed  [m/mr panels][kc][mr]
//                 pack B[l0:l0+kc, col0:col0+nc] -> b_packed  [nc/nr panels][kc][nr]
//       parallel over task tiles of C (task_shape: up to kTaskRows x kTaskCols):
//         for each nr panel of B (stays in L1):
//           for each mr panel of A (the task's A block stays in L2):
//             micro-kernel -> register tile -> c (alpha, beta applied on the first k block)
//
// The packing code and this driver are built with -O3 but no -m flags: only the micro-kernel
// differs per instruction set (gemm_f32_microkernel_*.cpp).
#include "gemm_f32.h"

#include <algorithm>
#include <vector>

#include "gemm_f32_microkernel.h"
#include "host_info.h"
#include "weight_formats.h"

namespace hwinfer::cpu {

namespace {

constexpr int64_t kBlockK = 256;    // kc: a [kc, nr] B panel is 16 KiB at nr = 16 (L1)
constexpr int64_t kTaskRows = 96;   // a task's A block [96, kc] is 96 KiB (L2); multiple of mr
constexpr int64_t kTaskCols = 192;  // columns of C per task; multiple of every nr (8, 16, 32)
constexpr int64_t kBlockN = 3072;   // B columns packed at once ([kc, 3072] = 3 MiB)
constexpr int64_t kMaxTile = int64_t{12} * 32;  // the largest micro-kernel's [mr, nr]
constexpr int64_t kSmallM = 4;                  // m <= this takes the GEMV path when strides allow
constexpr int64_t kSmallMMaxCols = 512;         // columns per GEMV item, at most
static_assert((kTaskRows / 4) % 12 == 0 && (kTaskCols / 2) % 32 == 0 && kBlockN % kTaskCols == 0,
              "every task shape must be a whole number of 12 x 32, 6 x 16 and 6 x 8 tiles");

int64_t ceil_div(int64_t x, int64_t d) { return (x + d - 1) / d; }
int64_t round_up(int64_t x, int64_t to) { return ceil_div(x, to) * to; }

GemmMicroKernel microkernel_for(GemmIsa isa) {
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
  if (isa == GemmIsa::kAvx2Fma && use_avx512_vnni()) return gemm_microkernel_avx512();
#endif
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL)
  if (isa == GemmIsa::kAvx2Fma) return gemm_microkernel_avx2_fma();
#else
  (void)isa;
#endif
  return gemm_microkernel_portable();
}

// Packs A[row0 : row0+rows, l0 : l0+kc] into panels of mr rows: panel r (r a multiple of mr) is
// out[r*kc ...] laid out [kc][mr]; rows past |rows| are zero.
void pack_a(const GemmF32Problem& p, int64_t row0, int64_t rows, int64_t l0, int64_t kc, int64_t mr,
            float* out) {
  for (int64_t r = 0; r < rows; r += mr) {
    float* panel = out + r * kc;
    const int64_t valid = std::min(mr, rows - r);
    for (int64_t i = 0; i < valid; ++i) {
      const float* a_row = p.a + (row0 + r + i) * p.a_row_stride + l0 * p.a_col_stride;
      if (p.a_col_stride == 1) {
        for (int64_t l = 0; l < kc; ++l) panel[l * mr + i] = a_row[l];
      } else {
        for (int64_t l = 0; l < kc; ++l) panel[l * mr + i] = a_row[l * p.a_col_stride];
      }
    }
    for (int64_t i = valid; i < mr; ++i) {
      for (int64_t l = 0; l < kc; ++l) panel[l * mr + i] = 0.0f;
    }
  }
}

// Packs B[l0 : l0+kc, col0 : col0+cols] into panels of nr columns: panel j (a multiple of nr) is
// out[j*kc ...] laid out [kc][nr]; columns past |cols| are zero. Reads along whichever of B's
// dimensions is contiguous.
void pack_b(const GemmF32Problem& p, int64_t col0, int64_t cols, int64_t l0, int64_t kc, int64_t nr,
            float* out) {
  for (int64_t j = 0; j < cols; j += nr) {
    float* panel = out + j * kc;
    const int64_t valid = std::min(nr, cols - j);
    const float* b_block = p.b + l0 * p.b_row_stride + (col0 + j) * p.b_col_stride;
    if (p.b_col_stride == 1) {  // rows of B contiguous (b not transposed)
      for (int64_t l = 0; l < kc; ++l) {
        const float* b_row = b_block + l * p.b_row_stride;
        for (int64_t jj = 0; jj < valid; ++jj) panel[l * nr + jj] = b_row[jj];
        for (int64_t jj = valid; jj < nr; ++jj) panel[l * nr + jj] = 0.0f;
      }
    } else {  // columns of B contiguous or strided (b transposed: [n, k] weights)
      for (int64_t jj = 0; jj < valid; ++jj) {
        const float* b_col = b_block + jj * p.b_col_stride;
        for (int64_t l = 0; l < kc; ++l) panel[l * nr + jj] = b_col[l * p.b_row_stride];
      }
      for (int64_t jj = valid; jj < nr; ++jj) {
        for (int64_t l = 0; l < kc; ++l) panel[l * nr + jj] = 0.0f;
      }
    }
  }
}

// c[i,j] = alpha * sum + (first k block ? beta * c[i,j] (not read when beta == 0) : c[i,j]).
inline void store_c(const GemmF32Problem& p, float* c_ij, float sum, bool first_k_block) {
  float value = p.alpha * sum;
  if (!first_k_block) {
    value += *c_ij;
  } else if (p.beta != 0.0f) {
    value += p.beta * *c_ij;
  }
  *c_ij = value;
}

// Writes tile[0:rows, 0:cols] (row stride nr) to c[row0:, col0:].
void store_tile(const GemmF32Problem& p, const float* tile, int64_t nr, int64_t row0, int64_t rows,
                int64_t col0, int64_t cols, bool first_k_block) {
  for (int64_t i = 0; i < rows; ++i) {
    float* c_row = p.c + (row0 + i) * p.c_row_stride + col0 * p.c_col_stride;
    for (int64_t j = 0; j < cols; ++j) {
      store_c(p, c_row + j * p.c_col_stride, tile[i * nr + j], first_k_block);
    }
  }
}

// Task tiles of C: kTaskRows x kTaskCols, halved (cols first, down to 24 x 48, while a multiple of
// nr: each task packs whole panels of B) until there are at least two tasks per thread.
struct TaskShape {
  int64_t rows;
  int64_t cols;
};
TaskShape task_shape(int64_t m, int64_t nc, int threads, int64_t nr) {
  TaskShape shape{kTaskRows, kTaskCols};
  const int64_t wanted_tasks = 2 * static_cast<int64_t>(threads);
  while (ceil_div(m, shape.rows) * ceil_div(nc, shape.cols) < wanted_tasks) {
    if (shape.cols > kTaskCols / 4 && (shape.cols / 2) % nr == 0) {
      shape.cols /= 2;
    } else if (shape.rows > kTaskRows / 4) {
      shape.rows /= 2;
    } else {
      break;
    }
  }
  return shape;
}

// |b_packer| NULL: pack p.b with pack_b.
void gemm_packed(const GemmF32Problem& p, ThreadPool& pool, const GemmMicroKernel& kernel,
                 const GemmBPacker* b_packer) {
  const int64_t mr = kernel.mr;
  const int64_t nr = kernel.nr;
  const int64_t kc_max = std::min(p.k, kBlockK);
  std::vector<float> a_packed(static_cast<size_t>(round_up(p.m, mr) * kc_max));
  std::vector<float> b_packed(static_cast<size_t>(round_up(std::min(p.n, kBlockN), nr) * kc_max));

  for (int64_t col0 = 0; col0 < p.n; col0 += kBlockN) {
    const int64_t nc = std::min(kBlockN, p.n - col0);
    const TaskShape task = task_shape(p.m, nc, pool.thread_count(), nr);
    const int64_t row_blocks = ceil_div(p.m, task.rows);
    const int64_t col_blocks = ceil_div(nc, task.cols);
    for (int64_t l0 = 0; l0 < p.k; l0 += kBlockK) {
      const int64_t kc = std::min(kBlockK, p.k - l0);
      const bool first_k_block = l0 == 0;

      pool.parallel_for(row_blocks + col_blocks, [&](int64_t item) {
        if (item < row_blocks) {
          const int64_t r0 = item * task.rows;
          pack_a(p, r0, std::min(task.rows, p.m - r0), l0, kc, mr, a_packed.data() + r0 * kc);
        } else {
          const int64_t c0 = (item - row_blocks) * task.cols;
          float* out = b_packed.data() + c0 * kc;
          const int64_t cols = std::min(task.cols, nc - c0);
          if (b_packer != nullptr) {
            b_packer->pack(b_packer->context, col0 + c0, cols, l0, kc, nr, out);
          } else {
            pack_b(p, col0 + c0, cols, l0, kc, nr, out);
          }
        }
      });

      pool.parallel_for(row_blocks * col_blocks, [&](int64_t task_index) {
        const int64_t r0 = (task_index / col_blocks) * task.rows;
        const int64_t c0 = (task_index % col_blocks) * task.cols;
        const int64_t rows = std::min(task.rows, p.m - r0);
        const int64_t cols = std::min(task.cols, nc - c0);
        alignas(64) float tile[kMaxTile];  // [mr, nr]
        for (int64_t j = 0; j < cols; j += nr) {
          const float* b_panel = b_packed.data() + (c0 + j) * kc;
          for (int64_t i = 0; i < rows; i += mr) {
            kernel.run(kc, a_packed.data() + (r0 + i) * kc, b_panel, tile);
            store_tile(p, tile, nr, r0 + i, std::min(mr, rows - i), col0 + c0 + j,
                       std::min(nr, cols - j), first_k_block);
          }
        }
      });
    }
  }
}

// sum_l x[l] * y[l] over contiguous x, y, in 16 independent partial sums (vectorisable without
// reassociation flags).
float dot_contiguous(const float* x, const float* y, int64_t k) {
  float lanes[16] = {};
  int64_t l = 0;
  for (; l + 16 <= k; l += 16) {
    for (int64_t t = 0; t < 16; ++t) lanes[t] += x[l + t] * y[l + t];
  }
  float sum = 0.0f;
  for (; l < k; ++l) sum += x[l] * y[l];
  for (int64_t t = 0; t < 16; ++t) sum += lanes[t];
  return sum;
}

// Small m (decode): no packing. Each item computes c[0:m, j0:j0+cols]; B is read once.
void gemm_small_m(const GemmF32Problem& p, ThreadPool& pool) {
  const int64_t per_item = std::clamp<int64_t>(
      round_up(ceil_div(p.n, 4 * static_cast<int64_t>(pool.thread_count())), 16), 16,
      kSmallMMaxCols);
  const int64_t items = ceil_div(p.n, per_item);
  if (p.b_row_stride == 1 && p.a_col_stride == 1) {
    // B[l, j] contiguous along l for each j ([n, k] weights): one dot product per output.
    pool.parallel_for(items, [&](int64_t item) {
      const int64_t j_end = std::min(p.n, (item + 1) * per_item);
      for (int64_t j = item * per_item; j < j_end; ++j) {
        const float* b_col = p.b + j * p.b_col_stride;
        for (int64_t i = 0; i < p.m; ++i) {
          const float sum = dot_contiguous(p.a + i * p.a_row_stride, b_col, p.k);
          store_c(p, p.c + i * p.c_row_stride + j * p.c_col_stride, sum, true);
        }
      }
    });
    return;
  }
  // B[l, j] contiguous along j ([k, n]): c[i, j0:j1] += a[i, l] * B[l, j0:j1] row by row.
  pool.parallel_for(items, [&](int64_t item) {
    const int64_t j0 = item * per_item;
    const int64_t cols = std::min(per_item, p.n - j0);
    float acc[kSmallM][kSmallMMaxCols];  // c[0:m, j0:j0+cols] before alpha/beta
    for (int64_t i = 0; i < p.m; ++i) std::fill_n(acc[i], cols, 0.0f);
    for (int64_t l = 0; l < p.k; ++l) {
      const float* b_row = p.b + l * p.b_row_stride + j0;
      for (int64_t i = 0; i < p.m; ++i) {
        const float a_il = p.a[i * p.a_row_stride + l * p.a_col_stride];
        float* acc_row = acc[i];
        for (int64_t jj = 0; jj < cols; ++jj) acc_row[jj] += a_il * b_row[jj];
      }
    }
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t jj = 0; jj < cols; ++jj) {
        store_c(p, p.c + i * p.c_row_stride + (j0 + jj) * p.c_col_stride, acc[i][jj], true);
      }
    }
  });
}

}  // namespace

GemmIsa detect_gemm_isa() {
  return cpu_can_use_avx2_kernels() ? GemmIsa::kAvx2Fma : GemmIsa::kPortable;
}

const char* gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx2Fma:
#if defined(HWINFER_CPU_HAVE_AVX512_KERNEL)
      if (use_avx512_vnni()) return "avx512+vnni";  // the same family, 512-bit kernels
#endif
      return "avx2+fma+f16c";
    case GemmIsa::kPortable:
      break;
  }
  return "portable";
}

void gemm_f32(const GemmF32Problem& problem, ThreadPool& pool, GemmIsa isa) {
  if (problem.m <= 0 || problem.n <= 0 || problem.k <= 0) return;
  const bool b_contiguous_along_k = problem.b_row_stride == 1 && problem.a_col_stride == 1;
  const bool b_contiguous_along_n = problem.b_col_stride == 1;
  if (problem.m <= kSmallM && (b_contiguous_along_k || b_contiguous_along_n)) {
    gemm_small_m(problem, pool);
    return;
  }
  gemm_packed(problem, pool, microkernel_for(isa), nullptr);
}

void gemm_f32_packed_b(const GemmF32Problem& problem, const GemmBPacker& b_packer, ThreadPool& pool,
                       GemmIsa isa) {
  if (problem.m <= 0 || problem.n <= 0 || problem.k <= 0) return;
  gemm_packed(problem, pool, microkernel_for(isa), &b_packer);
}

}  // namespace hwinfer::cpu
