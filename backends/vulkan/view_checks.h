// view_checks.h — validation of the tensor views in the Vulkan backend's kernel descriptors, with
// the CPU backend's semantics (backends/cpu/kernel_views.h) so a descriptor the CPU rejects as
// INVALID_ARGUMENT is rejected the same way here: struct_size, dtype, rank, shape
// (INVALID_ARGUMENT), strides not a multiple of the element or a non-contiguous innermost dimension
// where required (UNSUPPORTED), every addressed byte inside the buffer (INVALID_ARGUMENT), element
// alignment (UNSUPPORTED), outputs whose elements overlap (INVALID_ARGUMENT).
//
// Shared by kernel_query (views may come without buffers) and the enqueue slots. Must not look at
// buffer contents.
#ifndef HWINFER_BACKENDS_VULKAN_VIEW_CHECKS_H_
#define HWINFER_BACKENDS_VULKAN_VIEW_CHECKS_H_

#include <cstdint>
#include <string>

#include "vk_internal.h"

namespace hwinfer::vulkan {

struct ViewExpectation {
  const char* kernel = "";
  const char* operand = "";
  uint32_t dtype = 0;  // a non-block dtype
  uint32_t rank = 0;
  int64_t shape[HWINFER_MAX_RANK] = {};
  const char* shape_names = "";
  bool contiguous = false;
  bool is_output = false;
};

// "F32", ... or "dtype <n>".
std::string dtype_name(uint32_t dtype);
bool dtype_is_known(uint32_t dtype);

hwinfer_error* check_view(const hwinfer_tensor_view& view, const ViewExpectation& expected,
                          const hwinfer_device* device, bool require_buffer);

// True when two views with buffers (having passed check_view) share a byte of one buffer.
bool views_overlap(const hwinfer_tensor_view& a, const hwinfer_tensor_view& b);

// UNSUPPORTED when a stride of |view| is negative (the shaders index with unsigned offsets).
hwinfer_error* check_non_negative_strides(const hwinfer_tensor_view& view, const char* kernel,
                                          const char* operand);

// Bytes from view.offset_bytes to one past the last addressed byte (non-negative strides).
uint64_t view_extent_bytes(const hwinfer_tensor_view& view);

inline hwinfer_error* check_desc_size(uint32_t struct_size, size_t expected, const char* kernel) {
  return backend::check_desc_size(kPluginName, struct_size, expected, kernel);
}

}  // namespace hwinfer::vulkan

#endif  // HWINFER_BACKENDS_VULKAN_VIEW_CHECKS_H_
