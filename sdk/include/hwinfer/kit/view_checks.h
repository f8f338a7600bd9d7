// view_checks.h — validation of the tensor views (hwinfer_tensor_view) in kernel descriptors, the
// same for every backend: struct_size, dtype, rank, shape, strides, alignment, that every byte a
// view addresses lies inside its buffer, and whether two views share bytes.
//
// Used by kernel_checks.h and by a backend's own kernel-specific checks. Views may come without
// buffers at kernel_query time (CheckContext::require_buffers false): shape and strides are still
// checked, the buffer bounds are not. Errors are "<plugin> <kernel>: operand <name> ...":
// INVALID_ARGUMENT for a malformed view, UNSUPPORTED for a well-formed one no backend here runs
// (misaligned data, a non-contiguous view where the kernel needs one, a negative block row stride,
// an unknown dtype value).
//
// Must not read buffer contents, nor dereference a hwinfer_buffer (its struct is each plugin's:
// CheckContext::buffers reads it).
#ifndef HWINFER_SDK_KIT_VIEW_CHECKS_H_
#define HWINFER_SDK_KIT_VIEW_CHECKS_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// "F32", "Q4_0", ... or "dtype <n>" for an unknown value.
std::string dtype_name(uint32_t dtype);
// True for every HWINFER_DTYPE_* plugin.h defines.
bool dtype_is_known(uint32_t dtype);

// What a view must look like. |shape_names| labels the expected shape in messages ("[m, k]").
struct ViewExpectation {
  const char* kernel = "";   // "gemm", for messages
  const char* operand = "";  // "a", for messages
  uint32_t dtype = 0;        // a non-block dtype (check_view) or a block one (check_block_view)
  uint32_t rank = 0;         // 1..HWINFER_MAX_RANK
  int64_t shape[HWINFER_MAX_RANK] = {};
  const char* shape_names = "";  // "[m, k]"
  bool contiguous = false;       // innermost stride must equal the element size (1-D: packed)
  bool is_output = false;        // must not overlap itself (no zero or interleaved strides)
};

// The expectation for |operand| of |kernel|: |dtype| with |shape| (|shape_names| for messages,
// e.g. "[m, k]"); not contiguous, not an output.
ViewExpectation expect_view(const char* kernel, const char* operand, uint32_t dtype,
                            const char* shape_names, std::initializer_list<int64_t> shape);

// Checks |view| against |expected|. A NULL buffer is an error only when context.require_buffers;
// a buffer must belong to context.device and hold every addressed byte, and the data must be
// aligned to the element size. Returns NULL, or INVALID_ARGUMENT (malformed) / UNSUPPORTED
// (misaligned, or not contiguous where the kernel needs it) with a message naming the operand.
hwinfer_error* check_view(const CheckContext& context, const hwinfer_tensor_view& view,
                          const ViewExpectation& expected);

// Checks a rank-2 [rows, values] view of block-quantized data (|expected.dtype| Q8_0, Q4_K..., as
// plugin.h lays it out): dtype, rank and shape as check_view; values a multiple of the block size
// and an innermost stride of 0 (packed blocks), INVALID_ARGUMENT otherwise; a negative row stride
// is UNSUPPORTED; with a buffer, every addressed byte inside it. No alignment is required.
hwinfer_error* check_block_view(const CheckContext& context, const hwinfer_tensor_view& view,
                                const ViewExpectation& expected);

// NULL when |view|'s dtype is one of |allowed| (|allowed_names| in messages: "F32 or F16");
// otherwise INVALID_ARGUMENT for a known dtype, UNSUPPORTED for a value plugin.h does not define.
// A view with a short struct_size passes (check_view reports it).
hwinfer_error* check_dtype_in(const CheckContext& context, const hwinfer_tensor_view& view,
                              const char* kernel, const char* operand,
                              std::initializer_list<uint32_t> allowed, const char* allowed_names);

// True when two views (of non-block dtypes, both having passed check_view with their buffer)
// share a byte of the same buffer. False when either has no buffer, or the buffers differ.
bool views_overlap(const hwinfer_tensor_view& a, const hwinfer_tensor_view& b);

// True when bytes [a_offset, a_offset + a_size) of |a| and [b_offset, b_offset + b_size) of |b|
// share memory: in the same buffer, or in two buffers whose host addresses alias (imported host
// memory). Ranges must lie inside their buffers; false when either buffer is NULL.
bool byte_ranges_overlap(const CheckContext& context, const hwinfer_buffer* a, uint64_t a_offset,
                         uint64_t a_size, const hwinfer_buffer* b, uint64_t b_offset,
                         uint64_t b_size);

// INVALID_ARGUMENT "<plugin> <kernel>: operands <a> and <b> overlap in memory".
hwinfer_error* overlap_error(const CheckContext& context, const char* kernel, const char* a,
                             const char* b);

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_VIEW_CHECKS_H_
