// kernel_util.h — what the Vulkan kernel families share (kernels.cpp, kernels_token.cpp,
// kernels_gemm.cpp, kernels_kv.cpp, kernels_quant.cpp, kernels_attention_decode.cpp,
// kernels_attention_prefill.cpp): the
// shared-check context with this backend's limits hook, the operand helpers of dispatch.h's
// convention, and each family's enqueue and limits functions. Internal to the plugin.
#ifndef HWINFER_BACKENDS_VULKAN_KERNEL_UTIL_H_
#define HWINFER_BACKENDS_VULKAN_KERNEL_UTIL_H_

#include <cstdint>

#include "dispatch.h"
#include "hwinfer/kit/check_context.h"
#include "vk_internal.h"

namespace hwinfer::vulkan {

constexpr uint64_t kWorkgroupSize = 256;  // HWINFER_WORKGROUP_SIZE of shaders/common.glsl

inline uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The shared checks' context for |device|, with VulkanBackend::limits as the per-plugin hook.
backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers);

// Bytes from view.offset_bytes to one past the last addressed byte (non-negative strides;
// element-typed views only, block tables compute theirs).
uint64_t view_extent_bytes(const hwinfer_tensor_view& view);
Operand operand_of(const hwinfer_tensor_view& view);
// The element offset (dispatch convention) of a view, in elements of its dtype.
uint32_t element_remainder(const hwinfer_device* device, const hwinfer_tensor_view& view);
// The stride of dimension |dim| of a view, in elements of its dtype.
uint32_t element_stride(const hwinfer_tensor_view& view, uint32_t dim);

// The negative-stride limit every shader has (unsigned indexing); nullptr when none is negative.
hwinfer_error* require_non_negative_strides(const hwinfer_tensor_view& view, const char* kernel,
                                            const char* operand);
// The offset and every stride of |view| whole elements of its dtype and non-negative; otherwise
// UNSUPPORTED naming |kernel| and |operand|.
hwinfer_error* require_whole_elements(const hwinfer_tensor_view& view, const char* kernel,
                                      const char* operand);
// require_whole_elements for the paged pools (plugin.h's layout) of |kernel|: k_cache, v_cache,
// and the scales of an I8 pool.
hwinfer_error* require_whole_pool_elements(const char* kernel, const hwinfer_tensor_view& k_cache,
                                           const hwinfer_tensor_view& v_cache,
                                           const hwinfer_tensor_view& k_scales,
                                           const hwinfer_tensor_view& v_scales);

// kernels_attention_decode.cpp

// kernels_attention_prefill.cpp

// kernels_gemm.cpp

// kernels_kv.cpp

// kernels_quant.cpp

// kernels_token.cpp

}  // namespace hwinfer::vulkan

#endif  // HWINFER_BACKENDS_VULKAN_KERNEL_UTIL_H_
