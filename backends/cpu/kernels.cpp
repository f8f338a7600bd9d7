// kernels.cpp — the CPU plugin's matmul and probe kernels. Every kind is implemented: GEMM
// (every mix of F32, F16 and BF16 operands), the quantized matmul (Q8_0 and Q4_0 weights), the
// bandwidth probe, rms_norm, silu_mul, rope, embedding, kv_append, rope_kv_append (ABI 1.1: rope
// then kv_append in one work item), attention_decode_paged and attention_prefill.
//
// The slots and kernel_query are the plugin kit's (sdk/include/hwinfer/kit/kernel_slots.h) over
// CpuKernels: descriptor validation is sdk/include/hwinfer/kit/kernel_checks.h, the same for every
// backend: each slot runs its kind's check with buffers required, and kernel_query answers with the
// same checks (sdk/include/hwinfer/kit/kernel_query.h), views without buffers accepted, so the two
// never disagree. The CPU has no limits of its own beyond them (check_context sets no kernel_limits
// hook). The kernels themselves run on the stream's worker thread and fan out through the plugin's
// pool; nothing here may run a kernel on the enqueueing thread.
#include "bandwidth_probe.h"
#include "cpu_internal.h"
#include "cpu_kernels.h"
#include "gemm_f32.h"
#include "gemm_half.h"
#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/kernel_slots.h"
#include "matmul_quantized.h"

namespace hwinfer::cpu {

namespace {

// ---- GEMM --------------------------------------------------------------------------------------
//   a: [m, k];  b: [k, n] (or [n, k] when b_transposed);  c: [m, n];  each F32, F16 or BF16
// All-F32 runs gemm_f32; any F16/BF16 operand runs gemm_half.

bool gemm_is_f32(const hwinfer_gemm_desc& d) {
  return d.a.dtype == HWINFER_DTYPE_F32 && d.b.dtype == HWINFER_DTYPE_F32 &&
         d.c.dtype == HWINFER_DTYPE_F32;
}

// The descriptor as gemm_half's problem: strides in elements of each operand's dtype.
GemmHalfProblem gemm_problem(const hwinfer_gemm_desc& d) {
  const auto a_bytes = static_cast<int64_t>(dtype_element_bytes(d.a.dtype));
  const auto b_bytes = static_cast<int64_t>(dtype_element_bytes(d.b.dtype));
  const auto c_bytes = static_cast<int64_t>(dtype_element_bytes(d.c.dtype));
  GemmHalfProblem p;
  p.m = d.m;
  p.n = d.n;
  p.k = d.k;
  p.a = view_data(d.a);
  p.a_dtype = d.a.dtype;
  p.a_row_stride = d.a.strides_bytes[0] / a_bytes;
  p.a_col_stride = d.a.strides_bytes[1] / a_bytes;
  p.b = view_data(d.b);
  p.b_dtype = d.b.dtype;
  // B[l, j]: b[l, j] of a [k, n] view, or b[j, l] of an [n, k] view.
  const int dim_l = d.b_transposed != 0 ? 1 : 0;
  p.b_row_stride = d.b.strides_bytes[dim_l] / b_bytes;
  p.b_col_stride = d.b.strides_bytes[1 - dim_l] / b_bytes;
  p.c = view_data(d.c);
  p.c_dtype = d.c.dtype;
  p.c_row_stride = d.c.strides_bytes[0] / c_bytes;
  p.c_col_stride = d.c.strides_bytes[1] / c_bytes;
  p.alpha = d.alpha;
  p.beta = d.beta;
  return p;
}

GemmF32Problem gemm_f32_problem(const GemmHalfProblem& h) {
  GemmF32Problem p;
  p.m = h.m;
  p.n = h.n;
  p.k = h.k;
  p.a = static_cast<const float*>(h.a);
  p.a_row_stride = h.a_row_stride;
  p.a_col_stride = h.a_col_stride;
  p.b = static_cast<const float*>(h.b);
  p.b_row_stride = h.b_row_stride;
  p.b_col_stride = h.b_col_stride;
  p.c = static_cast<float*>(h.c);
  p.c_row_stride = h.c_row_stride;
  p.c_col_stride = h.c_col_stride;
  p.alpha = h.alpha;
  p.beta = h.beta;
  return p;
}

}  // namespace

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_gemm_desc& d) {
  const GemmHalfProblem problem = gemm_problem(d);
  ThreadPool* pool = stream.pool;
  const GemmIsa isa = stream.gemm_isa;
  if (gemm_is_f32(d)) {
    const GemmF32Problem f32 = gemm_f32_problem(problem);
    return stream.worker.enqueue([f32, pool, isa]() -> hwinfer_error* {
      gemm_f32(f32, *pool, isa);
      return nullptr;
    });
  }
  return stream.worker.enqueue([problem, pool, isa, scratch = &stream.scratch]() -> hwinfer_error* {
    gemm_half(problem, *pool, isa, *scratch);
    return nullptr;
  });
}

// ---- quantized matmul --------------------------------------------------------------------------
//   x: [m, k] F32;  w: [n, k] any GGUF block type (blocks along k);  y: [m, n] F32

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_matmul_quantized_desc& d) {
  constexpr int64_t kF32 = sizeof(float);
  MatmulQuantizedProblem p;
  p.m = d.m;
  p.n = d.n;
  p.k = d.k;
  p.x = reinterpret_cast<const float*>(view_data(d.x));
  p.x_row_stride = d.x.strides_bytes[0] / kF32;
  p.x_col_stride = d.x.strides_bytes[1] / kF32;
  p.w = view_data(d.w);
  p.w_dtype = d.w.dtype;
  p.w_row_bytes = d.w.strides_bytes[0];
  p.y = reinterpret_cast<float*>(view_data(d.y));
  p.y_row_stride = d.y.strides_bytes[0] / kF32;
  p.y_col_stride = d.y.strides_bytes[1] / kF32;
  ThreadPool* pool = stream.pool;
  const GemmIsa isa = stream.gemm_isa;
  return stream.worker.enqueue([p, pool, isa, scratch = &stream.scratch]() -> hwinfer_error* {
    matmul_quantized(p, *pool, isa, *scratch);
    return nullptr;
  });
}

// ---- bandwidth probe ---------------------------------------------------------------------------
//   src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8
//   (READ)

hwinfer_error* CpuKernels::enqueue(hwinfer_stream& stream, const hwinfer_bandwidth_probe_desc& d) {
  BandwidthProbeArgs args;
  args.mode = d.mode;
  args.iterations = d.iterations;
  args.size_bytes = d.size_bytes;
  if (d.mode != HWINFER_PROBE_WRITE) args.src = view_data(d.src);
  if (d.mode != HWINFER_PROBE_READ) args.dst = view_data(d.dst);
  if (d.mode == HWINFER_PROBE_READ) args.sink = view_data(d.sink);
  ThreadPool* pool = stream.pool;
  return stream.worker.enqueue([args, pool]() -> hwinfer_error* {
    bandwidth_probe(args, *pool);
    return nullptr;
  });
}

static_assert(kit::kernel_count<CpuKernels>() == kit::kKernelKindCount, "the CPU runs every kind");

}  // namespace hwinfer::cpu
