// kernels_rows.cpp — the per-token kernels' enqueue slots and limits: rms_norm, silu_mul, rope and
// embedding (kernels in rows.cu). Each enqueue runs the shared check (which ends in
// GpuBackend::limits, kernels.cpp, calling the *_limits functions below), turns the views into
// device addresses and element strides, and launches on the stream.
//
// What the shared checks admit but these kernels cannot run is refused in the limits as
// UNSUPPORTED with the reason: offsets or strides that are not whole elements, negative strides,
// and rope's rotary_dim above kMaxRotaryDim. Embedding ids are device data: a bad id is found by
// rows.cu's validation kernel and reported by the next stream_synchronize. Must not read buffer
// contents on the host.
#include <cinttypes>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

// rope keeps rotary_dim / 2 (cos, sin) float pairs of a token in shared memory (32 KiB here).
constexpr int64_t kMaxRotaryDim = 8192;

// A view's stride |dim| in elements of its dtype (require_whole_elements made it whole).
int64_t element_stride(const hwinfer_tensor_view& view, uint32_t dim) {
  return view.strides_bytes[dim] / static_cast<int64_t>(backend::dtype_element_bytes(view.dtype));
}

// [rows, dim] F32 | F16 view -> GpuRowMatrix; an absent view -> data nullptr.
GpuRowMatrix row_matrix(const hwinfer_tensor_view& view) {
  if (view.buffer == nullptr) return GpuRowMatrix{nullptr, 0, false};
  return GpuRowMatrix{view_data(view), element_stride(view, 0), view.dtype == HWINFER_DTYPE_F16};
}

// [n_tokens, n_heads, head_dim] F32 | F16 view -> GpuHeadMatrix; an absent view -> data nullptr.
GpuHeadMatrix head_matrix(const hwinfer_tensor_view& view, int64_t n_heads) {
  if (view.buffer == nullptr) return GpuHeadMatrix{nullptr, 0, 0, 0, false};
  return GpuHeadMatrix{view_data(view), element_stride(view, 0), element_stride(view, 1), n_heads,
                       view.dtype == HWINFER_DTYPE_F16};
}

}  // namespace

// ---- limits (GpuBackend::limits, through kit::limits_hook)
// ----------------------------------------------------------

hwinfer_error* GpuBackend::limits(const backend::CheckContext& /*context*/,
                                  const hwinfer_rms_norm_desc& d) {
  GPU_RETURN_IF_ERROR(require_whole_elements(d.x, "rms_norm", "x"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.weight, "rms_norm", "weight"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.out, "rms_norm", "out"));
  if (d.residual.buffer == nullptr) return nullptr;  // absent (check_rms_norm's rule)
  return require_whole_elements(d.residual, "rms_norm", "residual");
}

hwinfer_error* GpuBackend::limits(const backend::CheckContext& /*context*/,
                                  const hwinfer_silu_mul_desc& d) {
  GPU_RETURN_IF_ERROR(require_whole_elements(d.gate, "silu_mul", "gate"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.up, "silu_mul", "up"));
  return require_whole_elements(d.out, "silu_mul", "out");
}

hwinfer_error* GpuBackend::limits(const backend::CheckContext& context,
                                  const hwinfer_rope_desc& d) {
  const bool require_buffers = context.require_buffers;
  if (d.rotary_dim > kMaxRotaryDim) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s rope: rotary_dim %" PRId64 " is above the %" PRId64
                              " the %s kernel keeps in shared memory",
                              kPluginName, d.rotary_dim, kMaxRotaryDim, kPluginName);
  }
  GPU_RETURN_IF_ERROR(require_whole_elements(d.q, "rope", "q"));
  // k is present as check_rope sees it: a buffer, or (at query time) a rank.
  const bool has_k = d.k.buffer != nullptr || (!require_buffers && d.k.rank != 0);
  if (has_k) GPU_RETURN_IF_ERROR(require_whole_elements(d.k, "rope", "k"));
  return require_whole_elements(d.positions, "rope", "positions");
}

hwinfer_error* GpuBackend::limits(const backend::CheckContext& /*context*/,
                                  const hwinfer_embedding_desc& d) {
  // Block-quantized tables are read byte by byte: any offset and row stride (not negative).
  GPU_RETURN_IF_ERROR(require_whole_elements(d.table, "embedding", "table"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.ids, "embedding", "ids"));
  return require_whole_elements(d.out, "embedding", "out");
}

// ---- enqueue -----------------------------------------------------------------------------------

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream, const hwinfer_rms_norm_desc& desc) {
  const hwinfer_rms_norm_desc& d = desc;
  GPU_RETURN_IF_ERROR(use_device(stream.device, "rms_norm"));
  const gpuError_t result = launch_rms_norm(
      d.n_tokens, d.dim, d.eps, row_matrix(d.x), row_matrix(d.residual),
      reinterpret_cast<const float*>(view_data(d.weight)), row_matrix(d.out), stream.stream);
  return check_runtime(result, "rms_norm", "kernel launch");
}

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream, const hwinfer_silu_mul_desc& desc) {
  const hwinfer_silu_mul_desc& d = desc;
  GPU_RETURN_IF_ERROR(use_device(stream.device, "silu_mul"));
  const gpuError_t result = launch_silu_mul(d.n_tokens, d.dim, row_matrix(d.gate), row_matrix(d.up),
                                            row_matrix(d.out), stream.stream);
  return check_runtime(result, "silu_mul", "kernel launch");
}

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream, const hwinfer_rope_desc& desc) {
  const hwinfer_rope_desc& d = desc;
  GPU_RETURN_IF_ERROR(use_device(stream.device, "rope"));
  const gpuError_t result =
      launch_rope(d.n_tokens, d.rotary_dim, d.theta_base, d.mode == HWINFER_ROPE_NEOX,
                  head_matrix(d.q, d.n_heads), head_matrix(d.k, d.n_kv_heads),
                  reinterpret_cast<const int32_t*>(view_data(d.positions)),
                  element_stride(d.positions, 0), stream.stream);
  return check_runtime(result, "rope", "kernel launch");
}

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream, const hwinfer_embedding_desc& desc) {
  const hwinfer_embedding_desc& d = desc;
  GPU_RETURN_IF_ERROR(use_device(stream.device, "embedding"));
  const gpuError_t result =
      launch_embedding(d.n_tokens, d.vocab, d.dim, d.table.dtype, view_data(d.table),
                       d.table.strides_bytes[0], reinterpret_cast<const int32_t*>(view_data(d.ids)),
                       element_stride(d.ids, 0), reinterpret_cast<float*>(view_data(d.out)),
                       element_stride(d.out, 0), stream.error_word, stream.stream);
  return check_runtime(result, "embedding", "kernel launch");
}

}  // namespace hwinfer::gpu
