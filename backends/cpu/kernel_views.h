// kernel_views.h — validation of the tensor views in kernel descriptors: struct_size, dtype, rank,
// shape, strides, and that every byte a view addresses lies inside its buffer.
//
// Shared by kernel_query (where views may come without buffers: the core asks before it allocates)
// and by the kernel slots at enqueue (where buffers are required). Must not look at buffer
// contents, and must not decide what a kernel supports beyond the view itself.
#ifndef HWINFER_BACKENDS_CPU_KERNEL_VIEWS_H_
#define HWINFER_BACKENDS_CPU_KERNEL_VIEWS_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "common/dtype_info.h"
#include "common/view_extent.h"
#include "cpu_internal.h"

namespace hwinfer::cpu {

// Bytes per element of a non-block dtype (F32, F16, BF16, I8, I32); 0 for Q8_0, Q4_0 and unknown.
using backend::dtype_element_bytes;
// "F32", "Q4_0", ... or "dtype <n>" for an unknown value.
std::string dtype_name(uint32_t dtype);
// True for every HWINFER_DTYPE_* plugin.h defines.
bool dtype_is_known(uint32_t dtype);

// What a view must look like. |shape_names| labels the expected shape in messages ("[m, k]").
struct ViewExpectation {
  const char* kernel = "";   // "gemm", for messages
  const char* operand = "";  // "a", for messages
  uint32_t dtype = 0;        // a non-block dtype (check_view) or Q8_0/Q4_0 (check_block_view)
  uint32_t rank = 0;         // 1..HWINFER_MAX_RANK
  int64_t shape[HWINFER_MAX_RANK] = {};
  const char* shape_names = "";  // "[m, k]"
  bool contiguous = false;       // innermost stride must equal the element size (1-D: packed)
  bool is_output = false;        // must not overlap itself (no zero or interleaved strides)
};

// Checks |view| against |expected|. A NULL buffer is an error only when |require_buffer|; when a
// buffer is given it must belong to |device| and hold every addressed byte, and the data must be
// aligned to the element size. Returns NULL, or INVALID_ARGUMENT (malformed) / UNSUPPORTED
// (misaligned, or not contiguous where the kernel needs it) with a message naming the operand.
hwinfer_error* check_view(const hwinfer_tensor_view& view, const ViewExpectation& expected,
                          const hwinfer_device* device, bool require_buffer);

// Checks a rank-2 [rows, values] view of block-quantized data (|expected.dtype| Q8_0 or Q4_0, as
// plugin.h lays it out): dtype, rank and shape as check_view; values a multiple of the block size
// and an innermost stride of 0 (packed blocks), INVALID_ARGUMENT otherwise; a negative row stride
// is UNSUPPORTED; with a buffer, every addressed byte inside it. No alignment is required.
hwinfer_error* check_block_view(const hwinfer_tensor_view& view, const ViewExpectation& expected,
                                const hwinfer_device* device, bool require_buffer);

// Address of the view's element [0, ..., 0]. The view must have passed check_view with a buffer.
inline uint8_t* view_data(const hwinfer_tensor_view& view) {
  return view.buffer->data + view.offset_bytes;
}

// True when two views (of non-block dtypes, both with buffers, having passed check_view) share a
// byte of the same buffer. False when either has no buffer.
bool views_overlap(const hwinfer_tensor_view& a, const hwinfer_tensor_view& b);

// INVALID_ARGUMENT when a descriptor's struct_size is smaller than |kernel|'s descriptor.
inline hwinfer_error* check_desc_size(uint32_t struct_size, size_t expected, const char* kernel) {
  return backend::check_desc_size(kPluginName, struct_size, expected, kernel);
}

// The expectation for |operand| of |kernel|: |dtype| with |shape| (|shape_names| for messages,
// e.g. "[m, k]").
ViewExpectation expect_view(const char* kernel, const char* operand, uint32_t dtype,
                            const char* shape_names, std::initializer_list<int64_t> shape);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_KERNEL_VIEWS_H_
