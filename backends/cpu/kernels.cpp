// kernels.cpp — the CPU plugin's kernel table and kernel_query. Every slot is implemented: GEMM
// (every mix of F32, F16 and BF16 operands), the quantized matmul (Q8_0 and Q4_0 weights), the
// bandwidth probe, rms_norm, silu_mul, rope, embedding, kv_append, attention_decode_paged and
// attention_prefill.
//
// Each kernel has one check_* function shared by kernel_query and the enqueue slot, so the answer
// to "can you run this?" and the enqueue-time validation never disagree. kernel_query accepts
// views without buffers (the core asks before it allocates); enqueue requires them. Malformed
// descriptors are INVALID_ARGUMENT in both; well-formed ones the backend cannot run are
// UNSUPPORTED with a reason (an error at enqueue, supported = 0 from kernel_query). The kernels
// themselves run on the stream's worker thread and fan out through the plugin's pool; nothing here
// may run a kernel on the enqueueing thread.
#include <algorithm>
#include <cinttypes>
#include <initializer_list>

#include "bandwidth_probe.h"
#include "cpu_internal.h"
#include "gemm_f32.h"
#include "gemm_half.h"
#include "kernel_views.h"
#include "matmul_quantized.h"
#include "paged_kv_slots.h"
#include "rowwise_ops.h"
#include "token_ops.h"

namespace hwinfer::cpu {

namespace {

// ---- GEMM --------------------------------------------------------------------------------------
//   a: [m, k];  b: [k, n] (or [n, k] when b_transposed);  c: [m, n];  each F32, F16 or BF16
// Any element-aligned strides (b transposed is just other strides); c must not overlap itself.
// All-F32 runs gemm_f32; any F16/BF16 operand runs gemm_half.

hwinfer_error* check_gemm_dtype(uint32_t dtype, const char* operand) {
  if (dtype == HWINFER_DTYPE_F32 || dtype == HWINFER_DTYPE_F16 || dtype == HWINFER_DTYPE_BF16) {
    return nullptr;
  }
  if (dtype_is_known(dtype)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu gemm: operand %s has dtype %s; gemm takes F32, F16 or BF16",
                              operand, dtype_name(dtype).c_str());
  }
  return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED, "cpu gemm: operand %s has unknown %s",
                            operand, dtype_name(dtype).c_str());
}

hwinfer_error* check_gemm(const hwinfer_device* device, const hwinfer_gemm_desc& d,
                          bool require_buffers) {
  if (hwinfer_error* error = check_desc_size(d.struct_size, sizeof(d), "gemm")) return error;
  if (d.m <= 0 || d.n <= 0 || d.k <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu gemm: m, n and k must be > 0; got m=%" PRId64 " n=%" PRId64
                              " k=%" PRId64,
                              d.m, d.n, d.k);
  }
  if (d.b_transposed > 1) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu gemm: b_transposed must be 0 or 1; got %" PRIu32,
                              d.b_transposed);
  }
  const struct {
    const hwinfer_tensor_view* view;
    const char* name;
  } operands[] = {{&d.a, "a"}, {&d.b, "b"}, {&d.c, "c"}};
  for (const auto& operand : operands) {
    if (operand.view->struct_size < sizeof(hwinfer_tensor_view)) break;  // check_view reports it
    if (hwinfer_error* error = check_gemm_dtype(operand.view->dtype, operand.name)) return error;
  }
  // The dtypes are each operand's own (checked above; check_view reports a short view).
  const ViewExpectation a = expect_view("gemm", "a", d.a.dtype, "[m, k]", {d.m, d.k});
  const ViewExpectation b = d.b_transposed != 0
                                ? expect_view("gemm", "b", d.b.dtype, "[n, k]", {d.n, d.k})
                                : expect_view("gemm", "b", d.b.dtype, "[k, n]", {d.k, d.n});
  ViewExpectation c = expect_view("gemm", "c", d.c.dtype, "[m, n]", {d.m, d.n});
  c.is_output = true;
  if (hwinfer_error* error = check_view(d.a, a, device, require_buffers)) return error;
  if (hwinfer_error* error = check_view(d.b, b, device, require_buffers)) return error;
  if (hwinfer_error* error = check_view(d.c, c, device, require_buffers)) return error;
  return nullptr;
}

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

hwinfer_error* enqueue_gemm(hwinfer_stream* stream, const hwinfer_gemm_desc* desc) {
  return guarded("gemm", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "gemm: stream")) return error;
    if (hwinfer_error* error = require_non_null(desc, "gemm: desc")) return error;
    if (hwinfer_error* error = check_gemm(stream->device, *desc, true)) return error;
    const GemmHalfProblem problem = gemm_problem(*desc);
    ThreadPool* pool = stream->pool;
    const GemmIsa isa = stream->gemm_isa;
    if (gemm_is_f32(*desc)) {
      const GemmF32Problem f32 = gemm_f32_problem(problem);
      return stream->worker.enqueue([f32, pool, isa]() -> hwinfer_error* {
        gemm_f32(f32, *pool, isa);
        return nullptr;
      });
    }
    return stream->worker.enqueue([problem, pool, isa, stream]() -> hwinfer_error* {
      gemm_half(problem, *pool, isa, stream->scratch);
      return nullptr;
    });
  });
}

// ---- quantized matmul --------------------------------------------------------------------------
//   x: [m, k] F32;  w: [n, k] Q8_0 | Q4_0 (blocks along k, k % 32 == 0);  y: [m, n] F32
// x and y: any element-aligned strides (y must not overlap itself); w: any non-negative row stride.

hwinfer_error* check_matmul_quantized(const hwinfer_device* device,
                                      const hwinfer_matmul_quantized_desc& d,
                                      bool require_buffers) {
  if (hwinfer_error* error = check_desc_size(d.struct_size, sizeof(d), "matmul_quantized")) {
    return error;
  }
  if (d.m <= 0 || d.n <= 0 || d.k <= 0 || d.k % HWINFER_QK8_0 != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu matmul_quantized: m, n and k must be > 0 and k a multiple of "
                              "the 32-value block; got m=%" PRId64 " n=%" PRId64 " k=%" PRId64,
                              d.m, d.n, d.k);
  }
  if (d.w.struct_size >= sizeof(hwinfer_tensor_view) && d.w.dtype != HWINFER_DTYPE_Q8_0 &&
      d.w.dtype != HWINFER_DTYPE_Q4_0) {
    return hwinfer_make_error(
        dtype_is_known(d.w.dtype) ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNSUPPORTED,
        "cpu matmul_quantized: operand w has dtype %s; it takes Q8_0 or Q4_0",
        dtype_name(d.w.dtype).c_str());
  }
  const ViewExpectation x =
      expect_view("matmul_quantized", "x", HWINFER_DTYPE_F32, "[m, k]", {d.m, d.k});
  const ViewExpectation w = expect_view("matmul_quantized", "w", d.w.dtype, "[n, k]", {d.n, d.k});
  ViewExpectation y = expect_view("matmul_quantized", "y", HWINFER_DTYPE_F32, "[m, n]", {d.m, d.n});
  y.is_output = true;
  if (hwinfer_error* error = check_view(d.x, x, device, require_buffers)) return error;
  if (hwinfer_error* error = check_block_view(d.w, w, device, require_buffers)) return error;
  if (hwinfer_error* error = check_view(d.y, y, device, require_buffers)) return error;
  return nullptr;
}

hwinfer_error* enqueue_matmul_quantized(hwinfer_stream* stream,
                                        const hwinfer_matmul_quantized_desc* desc) {
  return guarded("matmul_quantized", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "matmul_quantized: stream")) return error;
    if (hwinfer_error* error = require_non_null(desc, "matmul_quantized: desc")) return error;
    if (hwinfer_error* error = check_matmul_quantized(stream->device, *desc, true)) return error;
    constexpr int64_t kF32 = sizeof(float);
    MatmulQuantizedProblem p;
    p.m = desc->m;
    p.n = desc->n;
    p.k = desc->k;
    p.x = reinterpret_cast<const float*>(view_data(desc->x));
    p.x_row_stride = desc->x.strides_bytes[0] / kF32;
    p.x_col_stride = desc->x.strides_bytes[1] / kF32;
    p.w = view_data(desc->w);
    p.w_dtype = desc->w.dtype;
    p.w_row_bytes = desc->w.strides_bytes[0];
    p.y = reinterpret_cast<float*>(view_data(desc->y));
    p.y_row_stride = desc->y.strides_bytes[0] / kF32;
    p.y_col_stride = desc->y.strides_bytes[1] / kF32;
    ThreadPool* pool = stream->pool;
    const GemmIsa isa = stream->gemm_isa;
    return stream->worker.enqueue([p, pool, isa, stream]() -> hwinfer_error* {
      matmul_quantized(p, *pool, isa, stream->scratch);
      return nullptr;
    });
  });
}

// ---- bandwidth probe ---------------------------------------------------------------------------
//   src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8
//   (READ)
// Operands a mode does not use are ignored. All used views must be contiguous.

constexpr int64_t kSinkMinBytes = 64;

hwinfer_error* check_bandwidth_probe(const hwinfer_device* device,
                                     const hwinfer_bandwidth_probe_desc& d, bool require_buffers) {
  if (hwinfer_error* error = check_desc_size(d.struct_size, sizeof(d), "bandwidth_probe")) {
    return error;
  }
  if (d.mode != HWINFER_PROBE_READ && d.mode != HWINFER_PROBE_COPY &&
      d.mode != HWINFER_PROBE_WRITE) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "cpu bandwidth_probe: unknown mode %" PRIu32
                              " (the cpu backend has READ=0, COPY=1, WRITE=2)",
                              d.mode);
  }
  if (d.size_bytes == 0 || d.size_bytes > static_cast<uint64_t>(INT64_MAX)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "cpu bandwidth_probe: size_bytes must be in [1, 2^63); got %" PRIu64,
                              d.size_bytes);
  }
  const auto size = static_cast<int64_t>(d.size_bytes);
  const bool uses_src = d.mode != HWINFER_PROBE_WRITE;
  const bool uses_dst = d.mode != HWINFER_PROBE_READ;
  const bool uses_sink = d.mode == HWINFER_PROBE_READ;
  ViewExpectation src =
      expect_view("bandwidth_probe", "src", HWINFER_DTYPE_I8, "[size_bytes]", {size});
  ViewExpectation dst =
      expect_view("bandwidth_probe", "dst", HWINFER_DTYPE_I8, "[size_bytes]", {size});
  src.contiguous = dst.contiguous = true;
  dst.is_output = true;
  if (uses_src) {
    if (hwinfer_error* error = check_view(d.src, src, device, require_buffers)) return error;
  }
  if (uses_dst) {
    if (hwinfer_error* error = check_view(d.dst, dst, device, require_buffers)) return error;
  }
  if (uses_sink) {
    // The sink may be longer than 64 bytes: check it against its own length, then the minimum.
    const int64_t sink_bytes =
        d.sink.struct_size >= sizeof(hwinfer_tensor_view) && d.sink.rank == 1 ? d.sink.shape[0] : 0;
    ViewExpectation sink = expect_view("bandwidth_probe", "sink", HWINFER_DTYPE_I8, "[>= 64]",
                                       {std::max(sink_bytes, kSinkMinBytes)});
    sink.contiguous = true;
    sink.is_output = true;
    if (hwinfer_error* error = check_view(d.sink, sink, device, require_buffers)) return error;
  }
  if (d.mode == HWINFER_PROBE_COPY && d.src.buffer != nullptr && d.dst.buffer != nullptr) {
    const auto src_begin = reinterpret_cast<uintptr_t>(view_data(d.src));
    const auto dst_begin = reinterpret_cast<uintptr_t>(view_data(d.dst));
    if (src_begin < dst_begin + d.size_bytes && dst_begin < src_begin + d.size_bytes) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu bandwidth_probe: COPY src and dst overlap in memory");
    }
  }
  return nullptr;
}

hwinfer_error* enqueue_bandwidth_probe(hwinfer_stream* stream,
                                       const hwinfer_bandwidth_probe_desc* desc) {
  return guarded("bandwidth_probe", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(stream, "bandwidth_probe: stream")) return error;
    if (hwinfer_error* error = require_non_null(desc, "bandwidth_probe: desc")) return error;
    if (hwinfer_error* error = check_bandwidth_probe(stream->device, *desc, true)) return error;
    BandwidthProbeArgs args;
    args.mode = desc->mode;
    args.iterations = desc->iterations;
    args.size_bytes = desc->size_bytes;
    if (desc->mode != HWINFER_PROBE_WRITE) args.src = view_data(desc->src);
    if (desc->mode != HWINFER_PROBE_READ) args.dst = view_data(desc->dst);
    if (desc->mode == HWINFER_PROBE_READ) args.sink = view_data(desc->sink);
    ThreadPool* pool = stream->pool;
    return stream->worker.enqueue([args, pool]() -> hwinfer_error* {
      bandwidth_probe(args, *pool);
      return nullptr;
    });
  });
}

// Turns a check result into a kernel_query answer: UNSUPPORTED becomes supported = 0 with the
// error's message as the reason; other errors are returned as they are.
hwinfer_error* answer(hwinfer_error* check, hwinfer_kernel_support* out) {
  if (check == nullptr) {
    hwinfer_set_support(out, HWINFER_KERNEL_SUPPORTED, "%s", "");
    return nullptr;
  }
  if (check->code != HWINFER_STATUS_UNSUPPORTED) return check;
  hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED, "%s", check->message);
  check->destroy(check);
  return nullptr;
}

const hwinfer_kernel_table kKernelTable = {
    .struct_size = sizeof(hwinfer_kernel_table),
    .reserved0 = 0,
    .gemm = &enqueue_gemm,
    .matmul_quantized = &enqueue_matmul_quantized,
    .attention_prefill = &enqueue_attention_prefill,
    .attention_decode_paged = &enqueue_attention_decode_paged,
    .kv_append = &enqueue_kv_append,
    .rms_norm = &enqueue_rms_norm,
    .rope = &enqueue_rope,
    .silu_mul = &enqueue_silu_mul,
    .embedding = &enqueue_embedding,
    .bandwidth_probe = &enqueue_bandwidth_probe,
};

}  // namespace

hwinfer_error* kernel_query(hwinfer_device* device, const hwinfer_kernel_desc* desc,
                            hwinfer_kernel_support* out) {
  return guarded("kernel_query", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(device, "kernel_query: device")) return error;
    if (hwinfer_error* error = require_non_null(desc, "kernel_query: desc")) return error;
    if (hwinfer_error* error = require_non_null(out, "kernel_query: out")) return error;
    if (hwinfer_error* error =
            check_desc_size(desc->struct_size, sizeof(hwinfer_kernel_desc), "kernel_query")) {
      return error;
    }
    switch (desc->kind) {
      case HWINFER_KERNEL_GEMM:
        if (hwinfer_error* error =
                check_desc_size(desc->struct_size, sizeof(hwinfer_gemm_desc), "gemm")) {
          return error;
        }
        return answer(check_gemm(device, *reinterpret_cast<const hwinfer_gemm_desc*>(desc), false),
                      out);
      case HWINFER_KERNEL_MATMUL_QUANTIZED:
        if (hwinfer_error* error = check_desc_size(
                desc->struct_size, sizeof(hwinfer_matmul_quantized_desc), "matmul_quantized")) {
          return error;
        }
        return answer(
            check_matmul_quantized(
                device, *reinterpret_cast<const hwinfer_matmul_quantized_desc*>(desc), false),
            out);
      case HWINFER_KERNEL_KV_APPEND:
        if (hwinfer_error* error =
                check_desc_size(desc->struct_size, sizeof(hwinfer_kv_append_desc), "kv_append")) {
          return error;
        }
        return answer(
            check_kv_append(device, *reinterpret_cast<const hwinfer_kv_append_desc*>(desc), false),
            out);
      case HWINFER_KERNEL_RMS_NORM:
        if (hwinfer_error* error =
                check_desc_size(desc->struct_size, sizeof(hwinfer_rms_norm_desc), "rms_norm")) {
          return error;
        }
        return answer(
            check_rms_norm(device, *reinterpret_cast<const hwinfer_rms_norm_desc*>(desc), false),
            out);
      case HWINFER_KERNEL_SILU_MUL:
        if (hwinfer_error* error =
                check_desc_size(desc->struct_size, sizeof(hwinfer_silu_mul_desc), "silu_mul")) {
          return error;
        }
        return answer(
            check_silu_mul(device, *reinterpret_cast<const hwinfer_silu_mul_desc*>(desc), false),
            out);
      case HWINFER_KERNEL_ROPE:
        if (hwinfer_error* error =
                check_desc_size(desc->struct_size, sizeof(hwinfer_rope_desc), "rope")) {
          return error;
        }
        return answer(check_rope(device, *reinterpret_cast<const hwinfer_rope_desc*>(desc), false),
                      out);
      case HWINFER_KERNEL_EMBEDDING:
        if (hwinfer_error* error =
                check_desc_size(desc->struct_size, sizeof(hwinfer_embedding_desc), "embedding")) {
          return error;
        }
        return answer(
            check_embedding(device, *reinterpret_cast<const hwinfer_embedding_desc*>(desc), false),
            out);
      case HWINFER_KERNEL_ATTENTION_DECODE_PAGED:
        if (hwinfer_error* error =
                check_desc_size(desc->struct_size, sizeof(hwinfer_attention_decode_paged_desc),
                                "attention_decode_paged")) {
          return error;
        }
        return answer(
            check_attention_decode_paged(
                device, *reinterpret_cast<const hwinfer_attention_decode_paged_desc*>(desc), false),
            out);
      case HWINFER_KERNEL_ATTENTION_PREFILL:
        if (hwinfer_error* error = check_desc_size(
                desc->struct_size, sizeof(hwinfer_attention_prefill_desc), "attention_prefill")) {
          return error;
        }
        return answer(
            check_attention_prefill(
                device, *reinterpret_cast<const hwinfer_attention_prefill_desc*>(desc), false),
            out);
      case HWINFER_KERNEL_BANDWIDTH_PROBE:
        if (hwinfer_error* error = check_desc_size(
                desc->struct_size, sizeof(hwinfer_bandwidth_probe_desc), "bandwidth_probe")) {
          return error;
        }
        return answer(
            check_bandwidth_probe(
                device, *reinterpret_cast<const hwinfer_bandwidth_probe_desc*>(desc), false),
            out);
      default:
        break;
    }
    if (const char* name = hwinfer_kernel_kind_name(desc->kind)) {
      hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED,
                          "%s is not implemented in the cpu backend yet", name);
    } else {
      hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED,
                          "unknown kernel kind %" PRIu32 " (newer than this cpu plugin)",
                          desc->kind);
    }
    return nullptr;
  });
}

const hwinfer_kernel_table* kernel_table() { return &kKernelTable; }

}  // namespace hwinfer::cpu
