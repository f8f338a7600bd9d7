// view_checks.cpp — see view_checks.h. All extent arithmetic is overflow-checked: a descriptor is
// untrusted input.
#include "view_checks.h"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>

#include "common/dtype_info.h"
#include "common/view_extent.h"

namespace hwinfer::vulkan {

namespace {

std::string shape_string(const int64_t* shape, uint32_t rank) {
  std::string text = "[";
  for (uint32_t d = 0; d < rank && d < HWINFER_MAX_RANK; ++d) {
    if (d > 0) text += ", ";
    text += std::to_string(shape[d]);
  }
  return text + "]";
}

hwinfer_error* invalid(const ViewExpectation& e, const std::string& tail) {
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "vulkan %s: operand %s %s", e.kernel,
                            e.operand, tail.c_str());
}

// True when no two elements of the view share a byte (as the CPU backend's check).
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
  std::sort(dims, dims + count, [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  uint64_t covered = element_bytes;
  for (uint32_t i = 0; i < count; ++i) {
    if (dims[i].stride < covered) return false;
    covered = dims[i].stride * dims[i].extent;
  }
  return true;
}

}  // namespace

std::string dtype_name(uint32_t dtype) {
  const char* name = backend::known_dtype_name(dtype);
  return name != nullptr ? name : "dtype " + std::to_string(dtype);
}

bool dtype_is_known(uint32_t dtype) { return backend::known_dtype_name(dtype) != nullptr; }

hwinfer_error* check_view(const hwinfer_tensor_view& view, const ViewExpectation& e,
                          const hwinfer_device* device, bool require_buffer) {
  if (view.struct_size < sizeof(hwinfer_tensor_view)) {
    return invalid(e, "has struct_size " + std::to_string(view.struct_size) +
                          ", smaller than hwinfer_tensor_view");
  }
  if (view.dtype != e.dtype) {
    return invalid(e, "has dtype " + dtype_name(view.dtype) + "; expected " + dtype_name(e.dtype));
  }
  const std::string expected_shape =
      std::string(e.shape_names) + " = " + shape_string(e.shape, e.rank);
  if (view.rank != e.rank) {
    return invalid(e, "has rank " + std::to_string(view.rank) + "; expected " + expected_shape);
  }
  if (!std::equal(e.shape, e.shape + e.rank, view.shape)) {
    return invalid(
        e, "has shape " + shape_string(view.shape, view.rank) + "; expected " + expected_shape);
  }
  const uint64_t element_bytes = backend::dtype_element_bytes(e.dtype);
  if (element_bytes == 0) {
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                              "vulkan %s: operand %s: check_view cannot check block dtype %s",
                              e.kernel, e.operand, dtype_name(e.dtype).c_str());
  }
  for (uint32_t d = 0; d < view.rank; ++d) {
    if (view.strides_bytes[d] % static_cast<int64_t>(element_bytes) != 0) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "vulkan %s: operand %s has stride %" PRId64
                                " bytes in dimension %u, not a multiple of its %" PRIu64
                                "-byte elements",
                                e.kernel, e.operand, view.strides_bytes[d], d, element_bytes);
    }
  }
  if (e.contiguous && view.strides_bytes[view.rank - 1] != static_cast<int64_t>(element_bytes)) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan %s: operand %s must be contiguous (innermost stride %" PRIu64
                              " bytes); got %" PRId64,
                              e.kernel, e.operand, element_bytes,
                              view.strides_bytes[view.rank - 1]);
  }
  int64_t lowest = 0;
  int64_t end = 0;
  if (!backend::view_byte_extent(view, element_bytes, &lowest, &end)) {
    return invalid(e, "has shape and strides whose byte extent overflows: shape " +
                          shape_string(view.shape, view.rank) + ", strides " +
                          shape_string(view.strides_bytes, view.rank));
  }
  if (e.is_output && !view_is_non_overlapping(view, element_bytes)) {
    return invalid(e, "is an output whose elements overlap: strides " +
                          shape_string(view.strides_bytes, view.rank));
  }
  if (view.buffer == nullptr && !require_buffer) return nullptr;
  if (view.buffer == nullptr) return invalid(e, "has no buffer");
  if (view.buffer->device != device) return invalid(e, "lives in a buffer of another device");
  if (backend::extent_outside_buffer(lowest, end, view.offset_bytes, view.buffer->size_bytes)) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "vulkan %s: operand %s (offset %" PRIu64 ", shape %s, strides %s) addresses bytes [%" PRId64
        ", %" PRId64 ") of the view, outside its %" PRIu64 "-byte buffer",
        e.kernel, e.operand, view.offset_bytes, shape_string(view.shape, view.rank).c_str(),
        shape_string(view.strides_bytes, view.rank).c_str(), lowest, end, view.buffer->size_bytes);
  }
  if (view.offset_bytes % element_bytes != 0) {
    return hwinfer_make_error(
        HWINFER_STATUS_UNSUPPORTED,
        "vulkan %s: operand %s starts at an offset not aligned to its %" PRIu64
        "-byte elements (offset %" PRIu64 ")",
        e.kernel, e.operand, element_bytes, view.offset_bytes);
  }
  return nullptr;
}

bool views_overlap(const hwinfer_tensor_view& a, const hwinfer_tensor_view& b) {
  if (a.buffer == nullptr || b.buffer == nullptr || a.buffer != b.buffer) return false;
  auto range = [](const hwinfer_tensor_view& v, int64_t& begin, int64_t& end) {
    int64_t low = 0;
    int64_t high = static_cast<int64_t>(backend::dtype_element_bytes(v.dtype));
    for (uint32_t i = 0; i < v.rank; ++i) {
      const int64_t span = (v.shape[i] - 1) * v.strides_bytes[i];
      (span < 0 ? low : high) += span;
    }
    begin = static_cast<int64_t>(v.offset_bytes) + low;
    end = static_cast<int64_t>(v.offset_bytes) + high;
  };
  int64_t ab = 0, ae = 0, bb = 0, be = 0;
  range(a, ab, ae);
  range(b, bb, be);
  return ab < be && bb < ae;
}

hwinfer_error* check_non_negative_strides(const hwinfer_tensor_view& view, const char* kernel,
                                          const char* operand) {
  for (uint32_t d = 0; d < view.rank && d < HWINFER_MAX_RANK; ++d) {
    if (view.strides_bytes[d] < 0) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "vulkan %s: operand %s has a negative stride (%" PRId64
                                " bytes); negative strides are not implemented in the Vulkan "
                                "backend yet",
                                kernel, operand, view.strides_bytes[d]);
    }
  }
  return nullptr;
}

uint64_t view_extent_bytes(const hwinfer_tensor_view& view) {
  int64_t lowest = 0;
  int64_t end = 0;
  const uint64_t element_bytes = std::max<uint64_t>(1, backend::dtype_element_bytes(view.dtype));
  if (!backend::view_byte_extent(view, element_bytes, &lowest, &end)) return UINT64_MAX;
  return end > 0 ? static_cast<uint64_t>(end) : 0;
}

}  // namespace hwinfer::vulkan
