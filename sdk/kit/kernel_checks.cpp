// kernel_checks.cpp — see kernel_checks.h: the checks of the dense kernels (gemm, the quantized
// matmul, the bandwidth probe) and the per-token ones (rms_norm, silu_mul, rope, embedding). The
// paged-KV kernels are in paged_kv_checks.cpp. Shapes use the descriptor's field names.
#include "hwinfer/kit/kernel_checks.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <initializer_list>
#include <string>

#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/kit/view_checks.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {

// ---- GEMM --------------------------------------------------------------------------------------
//   a: [m, k];  b: [k, n] (or [n, k] when b_transposed);  c: [m, n];  each F32, F16 or BF16
// Any element-aligned strides (b transposed is just other strides); c must not overlap itself.

namespace {

hwinfer_error* check_gemm_dtype(const CheckContext& context, uint32_t dtype, const char* operand) {
  if (dtype == HWINFER_DTYPE_F32 || dtype == HWINFER_DTYPE_F16 || dtype == HWINFER_DTYPE_BF16) {
    return nullptr;
  }
  if (dtype_is_known(dtype)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s gemm: operand %s has dtype %s; gemm takes F32, F16 or BF16",
                              context.plugin_name, operand, dtype_name(dtype).c_str());
  }
  return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED, "%s gemm: operand %s has unknown %s",
                            context.plugin_name, operand, dtype_name(dtype).c_str());
}

}  // namespace

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_gemm_desc& d) {
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), "gemm")) {
    return error;
  }
  if (d.m <= 0 || d.n <= 0 || d.k <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s gemm: m, n and k must be > 0; got m=%" PRId64 " n=%" PRId64
                              " k=%" PRId64,
                              plugin, d.m, d.n, d.k);
  }
  if (d.b_transposed > 1) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s gemm: b_transposed must be 0 or 1; got %" PRIu32, plugin,
                              d.b_transposed);
  }
  const struct {
    const hwinfer_tensor_view* view;
    const char* name;
  } operands[] = {{&d.a, "a"}, {&d.b, "b"}, {&d.c, "c"}};
  for (const auto& operand : operands) {
    if (operand.view->struct_size < sizeof(hwinfer_tensor_view)) break;  // check_view reports it
    if (hwinfer_error* error = check_gemm_dtype(context, operand.view->dtype, operand.name)) {
      return error;
    }
  }
  // The dtypes are each operand's own (checked above; check_view reports a short view).
  const ViewExpectation a = expect_view("gemm", "a", d.a.dtype, "[m, k]", {d.m, d.k});
  const ViewExpectation b = d.b_transposed != 0
                                ? expect_view("gemm", "b", d.b.dtype, "[n, k]", {d.n, d.k})
                                : expect_view("gemm", "b", d.b.dtype, "[k, n]", {d.k, d.n});
  ViewExpectation c = expect_view("gemm", "c", d.c.dtype, "[m, n]", {d.m, d.n});
  c.is_output = true;
  if (hwinfer_error* error = check_view(context, d.a, a)) return error;
  if (hwinfer_error* error = check_view(context, d.b, b)) return error;
  if (hwinfer_error* error = check_view(context, d.c, c)) return error;
  return apply_kernel_limits(context, HWINFER_KERNEL_GEMM, &d);
}

// ---- quantized matmul --------------------------------------------------------------------------
//   x: [m, k] F32;  w: [n, k] Q8_0 | Q4_0 (blocks along k, k % 32 == 0);  y: [m, n] F32
// x and y: any element-aligned strides (y must not overlap itself); w: any non-negative row stride.

namespace {

// "Q4_0, Q8_0, ..." for the block dtypes in |mask|.
std::string weight_dtype_names(uint64_t mask) {
  std::string names;
  for (uint32_t dtype = 0; dtype < 64; ++dtype) {
    if ((mask & weight_dtype_bit(dtype)) == 0) continue;
    if (!names.empty()) names += ", ";
    names += dtype_name(dtype);
  }
  return names.empty() ? "none" : names;
}

}  // namespace

hwinfer_error* check_weight_dtype(const CheckContext& context, const char* kernel,
                                  const char* operand, uint32_t dtype) {
  const bool is_block = hwinfer_dtype_block_values(dtype) != 0;
  if (is_block && (context.weight_dtypes & weight_dtype_bit(dtype)) != 0) return nullptr;
  const std::string taken = weight_dtype_names(context.weight_dtypes);
  if (is_block) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s %s: operand %s has dtype %s, which this backend does not have "
                              "(it takes %s)",
                              context.plugin_name, kernel, operand, dtype_name(dtype).c_str(),
                              taken.c_str());
  }
  return hwinfer_make_error(
      dtype_is_known(dtype) ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNSUPPORTED,
      "%s %s: operand %s has dtype %s; it takes a block-quantized dtype (%s)", context.plugin_name,
      kernel, operand, dtype_name(dtype).c_str(), taken.c_str());
}

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_matmul_quantized_desc& d) {
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error =
          check_desc_size(plugin, d.struct_size, sizeof(d), "matmul_quantized")) {
    return error;
  }
  const bool has_w = d.w.struct_size >= sizeof(hwinfer_tensor_view);
  if (has_w) {
    if (hwinfer_error* error = check_weight_dtype(context, "matmul_quantized", "w", d.w.dtype)) {
      return error;
    }
  }
  const int64_t block = has_w ? hwinfer_dtype_block_values(d.w.dtype) : HWINFER_QK8_0;
  if (d.m <= 0 || d.n <= 0 || d.k <= 0 || d.k % block != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s matmul_quantized: m, n and k must be > 0 and k a multiple of "
                              "the %" PRId64 "-value block; got m=%" PRId64 " n=%" PRId64
                              " k=%" PRId64,
                              plugin, block, d.m, d.n, d.k);
  }
  const ViewExpectation x =
      expect_view("matmul_quantized", "x", HWINFER_DTYPE_F32, "[m, k]", {d.m, d.k});
  const ViewExpectation w = expect_view("matmul_quantized", "w", d.w.dtype, "[n, k]", {d.n, d.k});
  ViewExpectation y = expect_view("matmul_quantized", "y", HWINFER_DTYPE_F32, "[m, n]", {d.m, d.n});
  y.is_output = true;
  if (hwinfer_error* error = check_view(context, d.x, x)) return error;
  if (hwinfer_error* error = check_block_view(context, d.w, w)) return error;
  if (hwinfer_error* error = check_view(context, d.y, y)) return error;
  return apply_kernel_limits(context, HWINFER_KERNEL_MATMUL_QUANTIZED, &d);
}

// ---- bandwidth probe ---------------------------------------------------------------------------
//   src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8
//   (READ)
// Operands a mode does not use are ignored. All used views must be contiguous; COPY's src and dst
// must not overlap.

namespace {

constexpr int64_t kSinkMinBytes = 64;

}  // namespace

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_bandwidth_probe_desc& d) {
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), "bandwidth_probe")) {
    return error;
  }
  if (d.mode != HWINFER_PROBE_READ && d.mode != HWINFER_PROBE_COPY &&
      d.mode != HWINFER_PROBE_WRITE) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s bandwidth_probe: unknown mode %" PRIu32
                              " (the %s backend has READ=0, COPY=1, WRITE=2)",
                              plugin, d.mode, plugin);
  }
  if (d.size_bytes == 0 || d.size_bytes > static_cast<uint64_t>(INT64_MAX)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s bandwidth_probe: size_bytes must be in [1, 2^63); got %" PRIu64,
                              plugin, d.size_bytes);
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
    if (hwinfer_error* error = check_view(context, d.src, src)) return error;
  }
  if (uses_dst) {
    if (hwinfer_error* error = check_view(context, d.dst, dst)) return error;
  }
  if (uses_sink) {
    // The sink may be longer than 64 bytes: check it against its own length, then the minimum.
    const int64_t sink_bytes =
        d.sink.struct_size >= sizeof(hwinfer_tensor_view) && d.sink.rank == 1 ? d.sink.shape[0] : 0;
    ViewExpectation sink = expect_view("bandwidth_probe", "sink", HWINFER_DTYPE_I8, "[>= 64]",
                                       {std::max(sink_bytes, kSinkMinBytes)});
    sink.contiguous = true;
    sink.is_output = true;
    if (hwinfer_error* error = check_view(context, d.sink, sink)) return error;
  }
  if (d.mode == HWINFER_PROBE_COPY &&
      byte_ranges_overlap(context, d.src.buffer, d.src.offset_bytes, d.size_bytes, d.dst.buffer,
                          d.dst.offset_bytes, d.size_bytes)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s bandwidth_probe: COPY src and dst overlap in memory", plugin);
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_BANDWIDTH_PROBE, &d);
}

// ---- RMSNorm and SiLU-mul ----------------------------------------------------------------------
//   rms_norm:  x, out, residual: [n_tokens, dim] F32 | F16 (innermost contiguous);  weight: [dim]
//              F32.  residual (optional, present when it has a buffer) is updated in place.
//   silu_mul:  gate, up, out: [n_tokens, dim] F32 | F16 (innermost contiguous)
// Outputs must not overlap inputs (except residual, which is in/out by definition).

namespace {

// A [n_tokens, dim] view of |dtype|, innermost contiguous.
ViewExpectation expect_matrix(const char* kernel, const char* operand, uint32_t dtype, int64_t rows,
                              int64_t cols, bool is_output) {
  ViewExpectation e = expect_view(kernel, operand, dtype, "[n_tokens, dim]", {rows, cols});
  e.contiguous = true;
  e.is_output = is_output;
  return e;
}

hwinfer_error* check_float_dtype(const CheckContext& context, const hwinfer_tensor_view& view,
                                 const char* kernel, const char* operand) {
  return check_dtype_in(context, view, kernel, operand, {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16},
                        "F32 or F16");
}

}  // namespace

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_rms_norm_desc& d) {
  constexpr const char* kName = "rms_norm";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kName)) {
    return error;
  }
  if (d.n_tokens <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s rms_norm: n_tokens and dim must be > 0; got n_tokens=%" PRId64
                              " dim=%" PRId64,
                              plugin, d.n_tokens, d.dim);
  }
  if (!(d.eps >= 0.0f) || !std::isfinite(d.eps)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s rms_norm: eps must be finite and >= 0; got %g", plugin,
                              static_cast<double>(d.eps));
  }
  const bool has_residual = d.residual.buffer != nullptr;
  if (hwinfer_error* error = check_float_dtype(context, d.x, kName, "x")) return error;
  if (hwinfer_error* error = check_float_dtype(context, d.out, kName, "out")) return error;
  if (has_residual) {
    if (hwinfer_error* error = check_float_dtype(context, d.residual, kName, "residual")) {
      return error;
    }
  }
  if (hwinfer_error* error = check_view(
          context, d.x, expect_matrix(kName, "x", d.x.dtype, d.n_tokens, d.dim, false))) {
    return error;
  }
  ViewExpectation weight = expect_view(kName, "weight", HWINFER_DTYPE_F32, "[dim]", {d.dim});
  weight.contiguous = true;
  if (hwinfer_error* error = check_view(context, d.weight, weight)) return error;
  if (hwinfer_error* error = check_view(
          context, d.out, expect_matrix(kName, "out", d.out.dtype, d.n_tokens, d.dim, true))) {
    return error;
  }
  if (has_residual) {
    CheckContext with_buffer = context;  // a residual is present only with its buffer
    with_buffer.require_buffers = true;
    if (hwinfer_error* error = check_view(
            with_buffer, d.residual,
            expect_matrix(kName, "residual", d.residual.dtype, d.n_tokens, d.dim, true))) {
      return error;
    }
  }
  if (views_overlap(d.out, d.x)) return overlap_error(context, kName, "out", "x");
  if (views_overlap(d.out, d.weight)) return overlap_error(context, kName, "out", "weight");
  if (has_residual) {
    if (views_overlap(d.out, d.residual)) return overlap_error(context, kName, "out", "residual");
    if (views_overlap(d.residual, d.x)) return overlap_error(context, kName, "residual", "x");
    if (views_overlap(d.residual, d.weight)) {
      return overlap_error(context, kName, "residual", "weight");
    }
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_RMS_NORM, &d);
}

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_silu_mul_desc& d) {
  constexpr const char* kName = "silu_mul";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kName)) {
    return error;
  }
  if (d.n_tokens <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s silu_mul: n_tokens and dim must be > 0; got n_tokens=%" PRId64
                              " dim=%" PRId64,
                              plugin, d.n_tokens, d.dim);
  }
  if (hwinfer_error* error = check_float_dtype(context, d.gate, kName, "gate")) return error;
  if (hwinfer_error* error = check_float_dtype(context, d.up, kName, "up")) return error;
  if (hwinfer_error* error = check_float_dtype(context, d.out, kName, "out")) return error;
  if (hwinfer_error* error = check_view(
          context, d.gate, expect_matrix(kName, "gate", d.gate.dtype, d.n_tokens, d.dim, false))) {
    return error;
  }
  if (hwinfer_error* error = check_view(
          context, d.up, expect_matrix(kName, "up", d.up.dtype, d.n_tokens, d.dim, false))) {
    return error;
  }
  if (hwinfer_error* error = check_view(
          context, d.out, expect_matrix(kName, "out", d.out.dtype, d.n_tokens, d.dim, true))) {
    return error;
  }
  if (views_overlap(d.out, d.gate)) return overlap_error(context, kName, "out", "gate");
  if (views_overlap(d.out, d.up)) return overlap_error(context, kName, "out", "up");
  return apply_kernel_limits(context, HWINFER_KERNEL_SILU_MUL, &d);
}

// ---- RoPE --------------------------------------------------------------------------------------
//   q: [n_tokens, n_heads, head_dim], k (optional): [n_tokens, n_kv_heads, head_dim] F32 | F16
//   (innermost contiguous, outer strides free; rotated in place);  positions: [n_tokens] I32.
//   NORMAL and NEOX pairing; rotary_dim even and <= head_dim (even). q, k and positions must not
//   overlap each other.

namespace {

// [n_tokens] I32 (positions, ids); any element-aligned stride.
ViewExpectation expect_token_vector(const char* kernel, const char* operand, int64_t n_tokens) {
  return expect_view(kernel, operand, HWINFER_DTYPE_I32, "[n_tokens]", {n_tokens});
}

}  // namespace

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_rope_desc& d) {
  constexpr const char* kName = "rope";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kName)) {
    return error;
  }
  if (d.mode != HWINFER_ROPE_NORMAL && d.mode != HWINFER_ROPE_NEOX) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s rope: unknown mode %" PRIu32
                              " (the %s backend has NORMAL=0, "
                              "NEOX=1)",
                              plugin, d.mode, plugin);
  }
  const bool has_k = d.k.buffer != nullptr || (!context.require_buffers && d.k.rank != 0);
  if (d.n_tokens <= 0 || d.n_heads <= 0 || d.head_dim <= 0 || (has_k && d.n_kv_heads <= 0)) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "%s rope: n_tokens, n_heads, head_dim (and n_kv_heads with k) must be > 0; got "
        "n_tokens=%" PRId64 " n_heads=%" PRId64 " n_kv_heads=%" PRId64 " head_dim=%" PRId64,
        plugin, d.n_tokens, d.n_heads, d.n_kv_heads, d.head_dim);
  }
  if (d.head_dim % 2 != 0 || d.rotary_dim <= 0 || d.rotary_dim % 2 != 0 ||
      d.rotary_dim > d.head_dim) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s rope: head_dim must be even and rotary_dim even in [2, "
                              "head_dim]; got head_dim=%" PRId64 " rotary_dim=%" PRId64,
                              plugin, d.head_dim, d.rotary_dim);
  }
  if (!(d.theta_base > 0.0f) || !std::isfinite(d.theta_base)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s rope: theta_base must be finite and > 0; got %g", plugin,
                              static_cast<double>(d.theta_base));
  }
  if (hwinfer_error* error = check_dtype_in(context, d.q, kName, "q",
                                            {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
    return error;
  }
  if (has_k) {
    if (hwinfer_error* error = check_dtype_in(
            context, d.k, kName, "k", {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16}, "F32 or F16")) {
      return error;
    }
  }
  if (hwinfer_error* error =
          check_dtype_in(context, d.positions, kName, "positions", {HWINFER_DTYPE_I32}, "I32")) {
    return error;
  }
  ViewExpectation q = expect_view(kName, "q", d.q.dtype, "[n_tokens, n_heads, head_dim]",
                                  {d.n_tokens, d.n_heads, d.head_dim});
  q.contiguous = q.is_output = true;
  if (hwinfer_error* error = check_view(context, d.q, q)) return error;
  if (has_k) {
    ViewExpectation k = expect_view(kName, "k", d.k.dtype, "[n_tokens, n_kv_heads, head_dim]",
                                    {d.n_tokens, d.n_kv_heads, d.head_dim});
    k.contiguous = k.is_output = true;
    if (hwinfer_error* error = check_view(context, d.k, k)) return error;
  }
  if (hwinfer_error* error =
          check_view(context, d.positions, expect_token_vector(kName, "positions", d.n_tokens))) {
    return error;
  }
  if (views_overlap(d.q, d.positions)) return overlap_error(context, kName, "q", "positions");
  if (has_k) {
    if (views_overlap(d.q, d.k)) return overlap_error(context, kName, "q", "k");
    if (views_overlap(d.k, d.positions)) return overlap_error(context, kName, "k", "positions");
  }
  return apply_kernel_limits(context, HWINFER_KERNEL_ROPE, &d);
}

// ---- embedding ---------------------------------------------------------------------------------
//   table: [vocab, dim] F32 | F16 | BF16 (innermost contiguous) | a block-quantized dtype the
//   plugin takes (GGUF blocks packed along dim, dim a multiple of the block, innermost stride 0);
//   ids: [n_tokens] I32;  out: [n_tokens, dim] F32 (innermost contiguous), overlapping neither
//   table nor ids.

namespace {

bool is_block_dtype(uint32_t dtype) { return hwinfer_dtype_block_values(dtype) != 0; }

// The table of a block-quantized embedding as the I8 byte matrix [vocab, dim / block * bytes] it
// occupies, so check_view can bound it by its buffer. |d.table| must be rank 2 with innermost
// stride 0 (checked by the caller).
hwinfer_tensor_view block_table_as_bytes(const hwinfer_embedding_desc& d) {
  hwinfer_tensor_view bytes = d.table;
  bytes.dtype = HWINFER_DTYPE_I8;
  bytes.shape[1] = d.dim / hwinfer_dtype_block_values(d.table.dtype) *
                   static_cast<int64_t>(hwinfer_dtype_block_bytes(d.table.dtype));
  bytes.strides_bytes[1] = 1;
  return bytes;
}

hwinfer_error* check_embedding_table(const CheckContext& context, const hwinfer_embedding_desc& d) {
  constexpr const char* kName = "embedding";
  const char* plugin = context.plugin_name;
  ViewExpectation table =
      expect_view(kName, "table", d.table.dtype, "[vocab, dim]", {d.vocab, d.dim});
  if (d.table.struct_size < sizeof(hwinfer_tensor_view) || !is_block_dtype(d.table.dtype)) {
    table.contiguous = true;
    return check_view(context, d.table, table);
  }
  const std::string dtype_text = dtype_name(d.table.dtype);
  const char* dtype = dtype_text.c_str();
  if (hwinfer_error* error = check_weight_dtype(context, kName, "table", d.table.dtype)) {
    return error;
  }
  const int64_t block = hwinfer_dtype_block_values(d.table.dtype);
  if (d.dim % block != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s embedding: a %s table needs dim %% %" PRId64
                              " == 0; got dim=%" PRId64,
                              plugin, dtype, block, d.dim);
  }
  if (d.table.rank != 2 || d.table.shape[0] != d.vocab || d.table.shape[1] != d.dim) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "%s embedding: operand table must be [vocab, dim] = [%" PRId64 ", %" PRId64
        "] (rank 2); got rank %" PRIu32 " shape [%" PRId64 ", %" PRId64 ", ...]",
        plugin, d.vocab, d.dim, d.table.rank, d.table.shape[0], d.table.shape[1]);
  }
  if (d.table.strides_bytes[1] != 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s embedding: a %s table has packed blocks: its innermost stride "
                              "must be 0; got %" PRId64,
                              plugin, dtype, d.table.strides_bytes[1]);
  }
  const hwinfer_tensor_view bytes = block_table_as_bytes(d);
  ViewExpectation expected =
      expect_view(kName, "table", HWINFER_DTYPE_I8, "[vocab, dim / block * block bytes]",
                  {bytes.shape[0], bytes.shape[1]});
  expected.contiguous = true;
  return check_view(context, bytes, expected);
}

}  // namespace

hwinfer_error* check_kernel(const CheckContext& context, const hwinfer_embedding_desc& d) {
  constexpr const char* kName = "embedding";
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_desc_size(plugin, d.struct_size, sizeof(d), kName)) {
    return error;
  }
  if (d.n_tokens <= 0 || d.vocab <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s embedding: n_tokens, vocab and dim must be > 0; got "
                              "n_tokens=%" PRId64 " vocab=%" PRId64 " dim=%" PRId64,
                              plugin, d.n_tokens, d.vocab, d.dim);
  }
  if (d.table.struct_size >= sizeof(hwinfer_tensor_view) && !is_block_dtype(d.table.dtype)) {
    if (hwinfer_error* error =
            check_dtype_in(context, d.table, kName, "table",
                           {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16},
                           "F32, F16, BF16 or a block-quantized dtype")) {
      return error;
    }
  }
  if (hwinfer_error* error =
          check_dtype_in(context, d.ids, kName, "ids", {HWINFER_DTYPE_I32}, "I32")) {
    return error;
  }
  if (hwinfer_error* error =
          check_dtype_in(context, d.out, kName, "out", {HWINFER_DTYPE_F32}, "F32")) {
    return error;
  }
  if (hwinfer_error* error = check_embedding_table(context, d)) return error;
  if (hwinfer_error* error =
          check_view(context, d.ids, expect_token_vector(kName, "ids", d.n_tokens))) {
    return error;
  }
  ViewExpectation out =
      expect_view(kName, "out", HWINFER_DTYPE_F32, "[n_tokens, dim]", {d.n_tokens, d.dim});
  out.contiguous = out.is_output = true;
  if (hwinfer_error* error = check_view(context, d.out, out)) return error;
  const hwinfer_tensor_view table =
      is_block_dtype(d.table.dtype) ? block_table_as_bytes(d) : d.table;
  if (views_overlap(d.out, table)) return overlap_error(context, kName, "out", "table");
  if (views_overlap(d.out, d.ids)) return overlap_error(context, kName, "out", "ids");
  return apply_kernel_limits(context, HWINFER_KERNEL_EMBEDDING, &d);
}

}  // namespace hwinfer::backend
