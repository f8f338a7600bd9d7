// view_checks.h — the sim backend's validation of tensor views in kernel descriptors: struct_size,
// dtype, rank, shape, block packing, and (with a buffer) that every addressed byte lies inside it.
//
// A minimal counterpart of backends/cpu/kernel_views.h (which lives inside the CPU plugin module
// and cannot be linked without it). Must not look at buffer contents. Errors say "sim <kernel>:
// operand <name> ...": INVALID_ARGUMENT when malformed, UNSUPPORTED for an unknown dtype value.
#ifndef HWINFER_BACKENDS_SIM_VIEW_CHECKS_H_
#define HWINFER_BACKENDS_SIM_VIEW_CHECKS_H_

#include <cstdint>
#include <initializer_list>

#include "common/dtype_info.h"
#include "common/view_extent.h"
#include "sim_internal.h"

namespace hwinfer::sim {

// Bytes per element of F32, F16, BF16, I8, I32; 0 for Q8_0, Q4_0 and unknown values.
inline uint64_t element_bytes(uint32_t dtype) { return backend::dtype_element_bytes(dtype); }
// "F32", "Q4_0", ... or "unknown".
const char* dtype_name(uint32_t dtype);

// Checks |view| (operand |operand| of |kernel|): dtype one of |dtypes|, rank and |shape| as given.
// Block dtypes must be rank 2 with the innermost dimension a multiple of 32 and stride 0. A NULL
// buffer is an error only when |require_buffer|; a buffer must belong to |device| and hold every
// addressed byte.
hwinfer_error* check_operand(const hwinfer_device* device, const hwinfer_tensor_view& view,
                             const char* kernel, const char* operand,
                             std::initializer_list<uint32_t> dtypes,
                             std::initializer_list<int64_t> shape, bool require_buffer);

// INVALID_ARGUMENT when a descriptor's struct_size is smaller than |expected|.
inline hwinfer_error* check_desc_size(uint32_t struct_size, size_t expected, const char* kernel) {
  return backend::check_desc_size(kPluginName, struct_size, expected, kernel);
}

// INVALID_ARGUMENT naming the first of |values| that is not > 0 (|names| comma-separated, same
// order, for the message).
hwinfer_error* check_positive(const char* kernel, const char* names,
                              std::initializer_list<int64_t> values);

}  // namespace hwinfer::sim

#endif  // HWINFER_BACKENDS_SIM_VIEW_CHECKS_H_
