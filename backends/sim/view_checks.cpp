// view_checks.cpp — see view_checks.h. Extent arithmetic is overflow-checked: a descriptor is
// untrusted input.
#include "view_checks.h"

#include <algorithm>
#include <cinttypes>
#include <string>

namespace hwinfer::sim {

namespace {

std::string list_string(const int64_t* values, size_t count) {
  std::string text = "[";
  for (size_t i = 0; i < count; ++i) text += (i > 0 ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

bool is_block_dtype(uint32_t dtype) {
  return dtype == HWINFER_DTYPE_Q8_0 || dtype == HWINFER_DTYPE_Q4_0;
}

}  // namespace

const char* dtype_name(uint32_t dtype) {
  const char* name = backend::known_dtype_name(dtype);
  return name != nullptr ? name : "unknown";
}

hwinfer_error* check_operand(const hwinfer_device* device, const hwinfer_tensor_view& view,
                             const char* kernel, const char* operand,
                             std::initializer_list<uint32_t> dtypes,
                             std::initializer_list<int64_t> shape, bool require_buffer) {
  if (view.struct_size < sizeof(hwinfer_tensor_view)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim %s: operand %s has struct_size %" PRIu32
                              ", smaller than hwinfer_tensor_view",
                              kernel, operand, view.struct_size);
  }
  if (std::find(dtypes.begin(), dtypes.end(), view.dtype) == dtypes.end()) {
    std::string allowed;
    for (const uint32_t dtype : dtypes)
      allowed += (allowed.empty() ? "" : " | ") + std::string(dtype_name(dtype));
    const bool known = element_bytes(view.dtype) != 0 || is_block_dtype(view.dtype);
    return hwinfer_make_error(known ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNSUPPORTED,
                              "sim %s: operand %s has dtype %s (%" PRIu32 "); expected %s", kernel,
                              operand, dtype_name(view.dtype), view.dtype, allowed.c_str());
  }
  const auto rank = static_cast<uint32_t>(shape.size());
  if (view.rank != rank || !std::equal(shape.begin(), shape.end(), view.shape)) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT, "sim %s: operand %s has shape %s; expected %s", kernel,
        operand, list_string(view.shape, std::min<uint32_t>(view.rank, HWINFER_MAX_RANK)).c_str(),
        list_string(shape.begin(), shape.size()).c_str());
  }
  // [low, high): the byte range the view addresses, relative to offset_bytes.
  int64_t low = 0;
  int64_t high = 0;
  if (is_block_dtype(view.dtype)) {
    const int64_t block_bytes =
        view.dtype == HWINFER_DTYPE_Q8_0 ? HWINFER_Q8_0_BLOCK_BYTES : HWINFER_Q4_0_BLOCK_BYTES;
    if (rank != 2 || view.shape[1] <= 0 || view.shape[1] % 32 != 0 || view.strides_bytes[1] != 0 ||
        view.strides_bytes[0] < 0) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "sim %s: operand %s of %s must be [rows, values] with values a "
                                "multiple of 32, innermost stride 0 and a row stride >= 0",
                                kernel, operand, dtype_name(view.dtype));
    }
    high = view.shape[1] / 32 * block_bytes;
    int64_t span = 0;
    if (__builtin_mul_overflow(view.shape[0] - 1, view.strides_bytes[0], &span) ||
        __builtin_add_overflow(high, span, &high)) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "sim %s: operand %s has a byte extent that overflows", kernel,
                                operand);
    }
  } else {
    for (uint32_t d = 0; d < rank; ++d) {
      if (view.shape[d] <= 0) {
        return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                  "sim %s: operand %s has an empty dimension %u", kernel, operand,
                                  d);
      }
    }
    if (!backend::view_byte_extent(view, element_bytes(view.dtype), &low, &high)) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "sim %s: operand %s has a byte extent that overflows", kernel,
                                operand);
    }
  }
  if (view.buffer == nullptr) {
    if (!require_buffer) return nullptr;
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "sim %s: operand %s has no buffer",
                              kernel, operand);
  }
  if (view.buffer->device != device) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim %s: operand %s lives in a buffer of another device", kernel,
                              operand);
  }
  const uint64_t size = view.buffer->size_bytes;
  const uint64_t offset = view.offset_bytes;
  if (backend::extent_outside_buffer(low, high, offset, size)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim %s: operand %s (offset %" PRIu64 ") addresses bytes [%" PRId64
                              ", %" PRId64 ") of the view, outside its %" PRIu64 "-byte buffer",
                              kernel, operand, offset, low, high, size);
  }
  return nullptr;
}

hwinfer_error* check_positive(const char* kernel, const char* names,
                              std::initializer_list<int64_t> values) {
  if (std::all_of(values.begin(), values.end(), [](int64_t v) { return v > 0; })) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "sim %s: %s must be > 0; got %s",
                            kernel, names, list_string(values.begin(), values.size()).c_str());
}

}  // namespace hwinfer::sim
