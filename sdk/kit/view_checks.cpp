// view_checks.cpp — see view_checks.h. All extent arithmetic is overflow-checked: a descriptor is
// untrusted input.
#include "hwinfer/kit/view_checks.h"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <utility>

#include "hwinfer/kit/view_extent.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {

namespace {

std::string shape_string(const int64_t* shape, uint32_t rank) {
  std::string text = "[";
  for (uint32_t d = 0; d < rank; ++d) {
    if (d > 0) text += ", ";
    text += std::to_string(shape[d]);
  }
  return text + "]";
}

hwinfer_error* invalid(const CheckContext& context, const ViewExpectation& e,
                       const char* format_tail, const std::string& a, const std::string& b = {}) {
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s %s: operand %s %s%s%s",
                            context.plugin_name, e.kernel, e.operand, format_tail, a.c_str(),
                            b.c_str());
}

// True when no two elements of the view share a byte: with the dimensions sorted by |stride|, each
// stride must step over everything the smaller ones span.
bool view_is_non_overlapping(const hwinfer_tensor_view& view, uint64_t element_bytes) {
  struct Dim {
    uint64_t stride;
    uint64_t extent;
  };
  Dim dims[HWINFER_MAX_RANK];
  uint32_t count = 0;
  for (uint32_t d = 0; d < view.rank; ++d) {
    if (view.shape[d] <= 1) continue;
    dims[count++] = {static_cast<uint64_t>(std::llabs(view.strides_bytes[d])),
                     static_cast<uint64_t>(view.shape[d])};
  }
  for (uint32_t i = 1; i < count; ++i) {  // insertion sort by stride (at most 4 dimensions)
    for (uint32_t j = i; j > 0 && dims[j].stride < dims[j - 1].stride; --j) {
      std::swap(dims[j], dims[j - 1]);
    }
  }
  uint64_t covered = element_bytes;  // bytes spanned by the dimensions so far
  for (uint32_t i = 0; i < count; ++i) {
    if (dims[i].stride < covered) return false;
    covered = dims[i].stride * dims[i].extent;  // extents were checked for overflow
  }
  return true;
}

// The buffer checks check_view and check_block_view share: |view| has a buffer, and it belongs to
// context.device.
hwinfer_error* check_buffer(const CheckContext& context, const hwinfer_tensor_view& view,
                            const ViewExpectation& e) {
  if (view.buffer == nullptr) return invalid(context, e, "has no buffer", "");
  if (context.buffers->device(view.buffer) != context.device) {
    return invalid(context, e, "lives in a buffer of another device", "");
  }
  return nullptr;
}

// The first checks of check_view and check_block_view: the view's struct_size, then its dtype.
hwinfer_error* check_struct_and_dtype(const CheckContext& context, const hwinfer_tensor_view& view,
                                      const ViewExpectation& e) {
  if (view.struct_size < sizeof(hwinfer_tensor_view)) {
    return invalid(context, e, "has struct_size ", std::to_string(view.struct_size),
                   ", smaller than hwinfer_tensor_view");
  }
  if (view.dtype != e.dtype) {
    return invalid(context, e, "has dtype ", dtype_name(view.dtype),
                   "; expected " + dtype_name(e.dtype));
  }
  return nullptr;
}

}  // namespace

std::string dtype_name(uint32_t dtype) {
  const char* name = known_dtype_name(dtype);
  return name != nullptr ? name : "dtype " + std::to_string(dtype);
}

bool dtype_is_known(uint32_t dtype) {
  return dtype_element_bytes(dtype) != 0 || hwinfer_dtype_block_values(dtype) != 0;
}

ViewExpectation expect_view(const char* kernel, const char* operand, uint32_t dtype,
                            const char* shape_names, std::initializer_list<int64_t> shape) {
  ViewExpectation e;
  e.kernel = kernel;
  e.operand = operand;
  e.dtype = dtype;
  e.rank = static_cast<uint32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), e.shape);
  e.shape_names = shape_names;
  return e;
}

hwinfer_error* check_view(const CheckContext& context, const hwinfer_tensor_view& view,
                          const ViewExpectation& e) {
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = check_struct_and_dtype(context, view, e)) return error;
  if (view.rank != e.rank) {
    return invalid(
        context, e, "has rank ", std::to_string(view.rank),
        "; expected " + std::string(e.shape_names) + " = " + shape_string(e.shape, e.rank));
  }
  if (!std::equal(e.shape, e.shape + e.rank, view.shape)) {
    return invalid(
        context, e, "has shape ", shape_string(view.shape, view.rank),
        "; expected " + std::string(e.shape_names) + " = " + shape_string(e.shape, e.rank));
  }
  const uint64_t element_bytes = dtype_element_bytes(e.dtype);
  if (element_bytes == 0) {  // a block dtype: the kernel should have called check_block_view
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                              "%s %s: operand %s: check_view cannot check block dtype %s", plugin,
                              e.kernel, e.operand, dtype_name(e.dtype).c_str());
  }
  for (uint32_t d = 0; d < view.rank; ++d) {
    if (view.strides_bytes[d] % static_cast<int64_t>(element_bytes) != 0) {
      return hwinfer_make_error(
          HWINFER_STATUS_UNSUPPORTED,
          "%s %s: operand %s has stride %" PRId64
          " bytes in dimension %u, not a multiple of its %" PRIu64 "-byte elements",
          plugin, e.kernel, e.operand, view.strides_bytes[d], d, element_bytes);
    }
  }
  if (e.contiguous && view.strides_bytes[view.rank - 1] != static_cast<int64_t>(element_bytes)) {
    return hwinfer_make_error(
        HWINFER_STATUS_UNSUPPORTED,
        "%s %s: operand %s must be contiguous (innermost stride %" PRIu64 " bytes); got %" PRId64,
        plugin, e.kernel, e.operand, element_bytes, view.strides_bytes[view.rank - 1]);
  }
  int64_t lowest = 0;
  int64_t end = 0;
  if (!view_byte_extent(view, element_bytes, &lowest, &end)) {
    return invalid(context, e, "has shape and strides whose byte extent overflows: shape ",
                   shape_string(view.shape, view.rank),
                   ", strides " + shape_string(view.strides_bytes, view.rank));
  }
  if (e.is_output && !view_is_non_overlapping(view, element_bytes)) {
    return invalid(context, e, "is an output whose elements overlap: strides ",
                   shape_string(view.strides_bytes, view.rank));
  }
  if (view.buffer == nullptr && !context.require_buffers) return nullptr;
  if (hwinfer_error* error = check_buffer(context, view, e)) return error;
  const uint64_t size = context.buffers->size_bytes(view.buffer);
  const uint64_t offset = view.offset_bytes;
  if (extent_outside_buffer(lowest, end, offset, size)) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "%s %s: operand %s (offset %" PRIu64
        ", shape %s, strides %s) "
        "addresses bytes [%" PRId64 ", %" PRId64
        ") of the view, outside "
        "its %" PRIu64 "-byte buffer",
        plugin, e.kernel, e.operand, offset, shape_string(view.shape, view.rank).c_str(),
        shape_string(view.strides_bytes, view.rank).c_str(), lowest, end, size);
  }
  if ((context.buffers->host_address(view.buffer) + offset) % element_bytes != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s %s: operand %s starts at an address not aligned to its %" PRIu64
                              "-byte elements (offset %" PRIu64 ")",
                              plugin, e.kernel, e.operand, element_bytes, offset);
  }
  return nullptr;
}

hwinfer_error* check_block_view(const CheckContext& context, const hwinfer_tensor_view& view,
                                const ViewExpectation& e) {
  if (hwinfer_error* error = check_struct_and_dtype(context, view, e)) return error;
  if (view.rank != 2 || e.rank != 2) {
    return invalid(context, e, "has rank ", std::to_string(view.rank),
                   "; expected " + std::string(e.shape_names) + " = " + shape_string(e.shape, 2));
  }
  if (!std::equal(e.shape, e.shape + 2, view.shape)) {
    return invalid(context, e, "has shape ", shape_string(view.shape, 2),
                   "; expected " + std::string(e.shape_names) + " = " + shape_string(e.shape, 2));
  }
  const int64_t block_values = hwinfer_dtype_block_values(e.dtype);
  const int64_t block_bytes = hwinfer_dtype_block_bytes(e.dtype);
  if (view.shape[0] <= 0 || view.shape[1] <= 0 || view.shape[1] % block_values != 0) {
    return invalid(context, e, "has shape ", shape_string(view.shape, 2),
                   ": both dimensions must be > 0 and the innermost a multiple of the " +
                       std::to_string(block_values) + "-value block");
  }
  if (view.strides_bytes[1] != 0) {
    return invalid(context, e, "has innermost stride ", std::to_string(view.strides_bytes[1]),
                   " bytes; quantized blocks are packed, so it must be 0 (plugin.h)");
  }
  if (view.strides_bytes[0] < 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s %s: operand %s has a negative row stride (%" PRId64 " bytes)",
                              context.plugin_name, e.kernel, e.operand, view.strides_bytes[0]);
  }
  const int64_t row_bytes = view.shape[1] / block_values * block_bytes;
  int64_t end = 0;
  if (__builtin_mul_overflow(view.shape[0] - 1, view.strides_bytes[0], &end) ||
      __builtin_add_overflow(end, row_bytes, &end)) {
    return invalid(context, e, "has shape and strides whose byte extent overflows: shape ",
                   shape_string(view.shape, 2), ", strides " + shape_string(view.strides_bytes, 2));
  }
  if (view.buffer == nullptr && !context.require_buffers) return nullptr;
  if (hwinfer_error* error = check_buffer(context, view, e)) return error;
  const uint64_t size = context.buffers->size_bytes(view.buffer);
  const uint64_t offset = view.offset_bytes;
  if (offset > size || static_cast<uint64_t>(end) > size - offset) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "%s %s: operand %s (offset %" PRIu64 ", shape %s, row stride %" PRId64
        ") addresses bytes [0, %" PRId64 ") of the view, outside its %" PRIu64 "-byte buffer",
        context.plugin_name, e.kernel, e.operand, offset, shape_string(view.shape, 2).c_str(),
        view.strides_bytes[0], end, size);
  }
  return nullptr;
}

hwinfer_error* check_dtype_in(const CheckContext& context, const hwinfer_tensor_view& view,
                              const char* kernel, const char* operand,
                              std::initializer_list<uint32_t> allowed, const char* allowed_names) {
  if (view.struct_size < sizeof(hwinfer_tensor_view)) return nullptr;  // check_view reports it
  if (std::find(allowed.begin(), allowed.end(), view.dtype) != allowed.end()) return nullptr;
  const uint32_t code =
      dtype_is_known(view.dtype) ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNSUPPORTED;
  return hwinfer_make_error(code, "%s %s: operand %s has dtype %s; expected %s",
                            context.plugin_name, kernel, operand, dtype_name(view.dtype).c_str(),
                            allowed_names);
}

bool views_overlap(const hwinfer_tensor_view& a, const hwinfer_tensor_view& b) {
  if (a.buffer == nullptr || b.buffer == nullptr || a.buffer != b.buffer) return false;
  // [begin, end) byte offsets in the buffer (the views passed check_view: no overflow).
  auto range = [](const hwinfer_tensor_view& v, uint64_t& begin, uint64_t& end) {
    int64_t low = 0, high = static_cast<int64_t>(dtype_element_bytes(v.dtype));
    for (uint32_t i = 0; i < v.rank; ++i) {
      const int64_t span = (v.shape[i] - 1) * v.strides_bytes[i];
      (span < 0 ? low : high) += span;
    }
    begin = v.offset_bytes - static_cast<uint64_t>(-low);
    end = v.offset_bytes + static_cast<uint64_t>(high);
  };
  uint64_t ab = 0, ae = 0, bb = 0, be = 0;
  range(a, ab, ae);
  range(b, bb, be);
  return ab < be && bb < ae;
}

bool byte_ranges_overlap(const CheckContext& context, const hwinfer_buffer* a, uint64_t a_offset,
                         uint64_t a_size, const hwinfer_buffer* b, uint64_t b_offset,
                         uint64_t b_size) {
  if (a == nullptr || b == nullptr) return false;
  uint64_t a_begin = a_offset;
  uint64_t b_begin = b_offset;
  if (a != b) {
    const uintptr_t a_base = context.buffers->host_address(a);
    const uintptr_t b_base = context.buffers->host_address(b);
    if (a_base == 0 || b_base == 0) return false;  // distinct device allocations
    a_begin += a_base;
    b_begin += b_base;
  }
  return a_begin < b_begin + b_size && b_begin < a_begin + a_size;
}

hwinfer_error* overlap_error(const CheckContext& context, const char* kernel, const char* a,
                             const char* b) {
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: operands %s and %s overlap in memory", context.plugin_name,
                            kernel, a, b);
}

}  // namespace hwinfer::backend
