// kernels.cpp — the GPU plugins' kernel table and kernel_query, and the helpers kernel_util.h
// declares. Each kernel family lives in its own kernels_<family>.cpp (host side: checks, launch
// geometry) and <family>.cu (the kernels, shared by CUDA and HIP through gpu_device.h).
//
// Descriptors are validated by the checks every backend shares
// (sdk/include/hwinfer/kit/kernel_checks.h), from kernel_query (views may lack buffers) and from
// the enqueue slots (buffers required), so this backend rejects exactly what the CPU backend
// rejects; gpu_limits() adds what it cannot run as UNSUPPORTED with the reason. Must not read
// buffer contents on the host.
#include <cinttypes>

#include "hwinfer/kit/dtype_info.h"
#include "kernel_util.h"

namespace hwinfer::gpu {

namespace {

uint64_t buffer_size(const hwinfer_buffer* buffer) { return buffer->size_bytes; }
const hwinfer_device* buffer_device(const hwinfer_buffer* buffer) { return buffer->device; }
uintptr_t buffer_host_address(const hwinfer_buffer* buffer) {
  return reinterpret_cast<uintptr_t>(buffer->host_ptr);
}

const backend::BufferInfoFn kBuffers = {&buffer_size, &buffer_device, &buffer_host_address};

hwinfer_error* not_implemented(uint32_t kind) {
  const char* name = hwinfer_kernel_kind_name(kind);
  return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                            "kernel kind %" PRIu32 " (%s) is not implemented in the %s backend",
                            kind, name != nullptr ? name : "unknown", kPluginName);
}

// The shared checks' per-plugin hook (check_context.h).
hwinfer_error* gpu_limits(const backend::CheckContext& context, uint32_t kind, const void* desc) {
  (void)context;
  switch (kind) {
    case HWINFER_KERNEL_BANDWIDTH_PROBE:
      return nullptr;
    case HWINFER_KERNEL_RMS_NORM:
      return rms_norm_limits(*static_cast<const hwinfer_rms_norm_desc*>(desc));
    case HWINFER_KERNEL_SILU_MUL:
      return silu_mul_limits(*static_cast<const hwinfer_silu_mul_desc*>(desc));
    case HWINFER_KERNEL_ROPE:
      return rope_limits(*static_cast<const hwinfer_rope_desc*>(desc), context.require_buffers);
    case HWINFER_KERNEL_EMBEDDING:
      return embedding_limits(*static_cast<const hwinfer_embedding_desc*>(desc));
    case HWINFER_KERNEL_KV_APPEND:
      return kv_append_limits(*static_cast<const hwinfer_kv_append_desc*>(desc));
    case HWINFER_KERNEL_ROPE_KV_APPEND:
      return nullptr;  // its halves were limited as rope and kv_append (check_rope_kv_append)
    case HWINFER_KERNEL_GEMM:
      return gemm_limits(*static_cast<const hwinfer_gemm_desc*>(desc));
    case HWINFER_KERNEL_MATMUL_QUANTIZED:
      return matmul_quantized_limits(*static_cast<const hwinfer_matmul_quantized_desc*>(desc));
    case HWINFER_KERNEL_ATTENTION_DECODE_PAGED:
      return attention_decode_limits(
          *static_cast<const hwinfer_attention_decode_paged_desc*>(desc));
    case HWINFER_KERNEL_ATTENTION_PREFILL:
      return attention_prefill_limits(*static_cast<const hwinfer_attention_prefill_desc*>(desc),
                                      context.require_buffers);
    default:
      return not_implemented(kind);
  }
}

}  // namespace

backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers) {
  backend::CheckContext context;
  context.plugin_name = kPluginName;
  context.buffers = &kBuffers;
  context.device = device;
  context.require_buffers = require_buffers;
  context.kernel_limits = &gpu_limits;
  context.weight_dtypes = backend::kWeightDtypesAll;  // weight_blocks.h has every one
  return context;
}

hwinfer_error* check_launch(const char* kernel) {
  const gpuError_t result = GPU(GetLastError)();
  if (result == gpuSuccess) return nullptr;
  return runtime_error(result, kernel, "kernel launch");
}

hwinfer_error* require_whole_elements(const hwinfer_tensor_view& view, const char* kernel,
                                      const char* operand) {
  if (view_absent(view)) return nullptr;
  const uint64_t element = backend::dtype_element_bytes(view.dtype);
  const bool blocks = element == 0;  // quantized: outer strides in bytes, innermost packed
  for (uint32_t d = 0; d < view.rank && d < HWINFER_MAX_RANK; ++d) {
    const int64_t stride = view.strides_bytes[d];
    if (stride < 0) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "%s %s: operand %s has a negative stride in dimension %" PRIu32
                                "; the %s kernels take non-negative strides",
                                kPluginName, kernel, operand, d, kPluginName);
    }
    if (!blocks && static_cast<uint64_t>(stride) % element != 0) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "%s %s: operand %s has stride %" PRId64
                                " bytes in dimension %" PRIu32 ", not a multiple of its %" PRIu64
                                "-byte elements",
                                kPluginName, kernel, operand, stride, d, element);
    }
  }
  if (!blocks && view.offset_bytes % element != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s %s: operand %s starts at byte offset %" PRIu64
                              ", not a multiple of its %" PRIu64 "-byte elements",
                              kPluginName, kernel, operand, view.offset_bytes, element);
  }
  return nullptr;
}

}  // namespace hwinfer::gpu
