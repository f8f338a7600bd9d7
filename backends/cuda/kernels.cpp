// kernels.cpp — the GPU plugins' check context (the plugin kit makes the kernel table and
// kernel_query from GpuBackend), and the helpers kernel_util.h declares. Each kernel family lives
// in its own kernels_<family>.cpp (host side: checks, launch geometry) and <family>.cu (the
// kernels, shared by CUDA and HIP through gpu_device.h).
//
// Descriptors are validated by the checks every backend shares
// (sdk/include/hwinfer/kit/kernel_checks.h), from kernel_query (views may lack buffers) and from
// the enqueue slots (buffers required), so this backend rejects exactly what the CPU backend
// rejects; GpuBackend::limits (one overload per kind, in each family's file) adds what it cannot
// run as UNSUPPORTED with the reason. Must not read
// buffer contents on the host.
#include <cinttypes>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_limits.h"
#include "kernel_util.h"

namespace hwinfer::gpu {

namespace {

uint64_t buffer_size(const hwinfer_buffer* buffer) { return buffer->size_bytes; }
const hwinfer_device* buffer_device(const hwinfer_buffer* buffer) { return buffer->device; }
uintptr_t buffer_host_address(const hwinfer_buffer* buffer) {
  return reinterpret_cast<uintptr_t>(buffer->host_ptr);
}

const backend::BufferInfoFn kBuffers = {&buffer_size, &buffer_device, &buffer_host_address};

}  // namespace

backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers) {
  backend::CheckContext context;
  context.plugin_name = kPluginName;
  context.buffers = &kBuffers;
  context.device = device;
  context.require_buffers = require_buffers;
  context.kernel_limits = &kit::limits_hook<GpuBackend>;
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
