// kernels_kv.cpp — kv_append's and rope_kv_append's enqueue slots and kv_append's limits (kernels
// in kv_append.cu): the new tokens'
// keys and values (F32 | F16) into the paged pools (F16 | I8, each side its own dtype), the I8
// pools' per-(block, head) scales grown as the CPU backend does. The shared check
// (backend::check_kv_append, ending in GpuBackend::limits) runs first; the views
// become device addresses and element strides.
//
// Slots are device data: a slot >= num_blocks * block_size is found by kv_append.cu's validation
// kernel, nothing is written, and the next stream_synchronize returns INVALID_ARGUMENT. Must not
// read buffer contents on the host.
#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"
#include "launch.h"

namespace hwinfer::gpu {

namespace {

int64_t element_stride(const hwinfer_tensor_view& view, uint32_t dim) {
  return view.strides_bytes[dim] / static_cast<int64_t>(backend::dtype_element_bytes(view.dtype));
}

//   src: [n_tokens, n_kv_heads, head_dim];  cache: [num_blocks, block_size, n_kv_heads, head_dim];
//   scales: [num_blocks, n_kv_heads] (I8 pools only).
GpuKvSide kv_side(const hwinfer_tensor_view& src, const hwinfer_tensor_view& cache,
                  const hwinfer_tensor_view& scales) {
  GpuKvSide side{};
  side.src = view_data(src);
  side.src_token_stride = element_stride(src, 0);
  side.src_head_stride = element_stride(src, 1);
  side.src_f16 = src.dtype == HWINFER_DTYPE_F16;
  side.pool = view_data(cache);
  side.pool_block_stride = element_stride(cache, 0);
  side.pool_row_stride = element_stride(cache, 1);
  side.pool_head_stride = element_stride(cache, 2);
  side.pool_i8 = cache.dtype == HWINFER_DTYPE_I8;
  if (side.pool_i8) {
    side.scales = reinterpret_cast<float*>(view_data(scales));
    side.scale_block_stride = element_stride(scales, 0);
    side.scale_head_stride = element_stride(scales, 1);
  }
  return side;
}

// [n_tokens, n_heads, head_dim] F32 | F16 view -> GpuHeadMatrix (element strides).
GpuHeadMatrix head_matrix(const hwinfer_tensor_view& view, int64_t n_heads) {
  return GpuHeadMatrix{view_data(view), element_stride(view, 0), element_stride(view, 1), n_heads,
                       view.dtype == HWINFER_DTYPE_F16};
}

}  // namespace

hwinfer_error* GpuBackend::limits(const backend::CheckContext& /*context*/,
                                  const hwinfer_kv_append_desc& d) {
  GPU_RETURN_IF_ERROR(require_whole_elements(d.k, "kv_append", "k"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.v, "kv_append", "v"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.slot_mapping, "kv_append", "slot_mapping"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.k_cache, "kv_append", "k_cache"));
  GPU_RETURN_IF_ERROR(require_whole_elements(d.v_cache, "kv_append", "v_cache"));
  if (d.k_cache.dtype == HWINFER_DTYPE_I8) {
    GPU_RETURN_IF_ERROR(require_whole_elements(d.k_scales, "kv_append", "k_scales"));
  }
  if (d.v_cache.dtype == HWINFER_DTYPE_I8) {
    GPU_RETURN_IF_ERROR(require_whole_elements(d.v_scales, "kv_append", "v_scales"));
  }
  return nullptr;
}

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream, const hwinfer_kv_append_desc& desc) {
  const hwinfer_kv_append_desc& d = desc;
  const GpuKvSide k = kv_side(d.k, d.k_cache, d.k_scales);
  const GpuKvSide v = kv_side(d.v, d.v_cache, d.v_scales);
  GPU_RETURN_IF_ERROR(use_device(stream.device, "kv_append"));
  const gpuError_t result =
      launch_kv_append(d.n_tokens, d.n_kv_heads, d.head_dim, d.block_size, d.num_blocks,
                       reinterpret_cast<const int32_t*>(view_data(d.slot_mapping)),
                       element_stride(d.slot_mapping, 0), k, v, stream.error_word,
                       stream.device->info.compute_units, stream.stream);
  return check_runtime(result, "kv_append", "kernel launch");
}

// ---- RoPE fused with the KV append (ABI 1.1) ---------------------------------------------------
//   q: [n_tokens, n_heads, head_dim], k, v: [n_tokens, n_kv_heads, head_dim] F32 | F16;
//   positions, slot_mapping: [n_tokens] I32;  pools as kv_append.
// check_rope_kv_append checks the two halves as rope and kv_append (their limits included:
// rope_limits, kv_append_limits), so the fused kind adds no limit of its own. One launch
// (kv_append.cu's rope_kv_append_kernel).

hwinfer_error* GpuBackend::enqueue(hwinfer_stream& stream,
                                   const hwinfer_rope_kv_append_desc& desc) {
  const hwinfer_rope_kv_append_desc& d = desc;
  GpuRope rope{};
  rope.half = d.rotary_dim / 2;
  rope.theta_base = static_cast<double>(d.theta_base);
  rope.neox = d.mode == HWINFER_ROPE_NEOX;
  rope.q = head_matrix(d.q, d.n_heads);
  rope.k = head_matrix(d.k, d.n_kv_heads);
  rope.positions = reinterpret_cast<const int32_t*>(view_data(d.positions));
  rope.position_stride = element_stride(d.positions, 0);
  const GpuKvSide k = kv_side(d.k, d.k_cache, d.k_scales);
  const GpuKvSide v = kv_side(d.v, d.v_cache, d.v_scales);
  GPU_RETURN_IF_ERROR(use_device(stream.device, "rope_kv_append"));
  const gpuError_t result =
      launch_rope_kv_append(rope, d.n_tokens, d.n_kv_heads, d.head_dim, d.block_size, d.num_blocks,
                            reinterpret_cast<const int32_t*>(view_data(d.slot_mapping)),
                            element_stride(d.slot_mapping, 0), k, v, stream.error_word,
                            stream.device->info.compute_units, stream.stream);
  return check_runtime(result, "rope_kv_append", "kernel launch");
}

}  // namespace hwinfer::gpu
