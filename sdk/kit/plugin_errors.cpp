// plugin_errors.cpp — see plugin_errors.h.
#include "hwinfer/kit/plugin_errors.h"

#include <cinttypes>

namespace hwinfer::backend {

hwinfer_error* require_non_null(const char* plugin_name, const void* pointer, const char* what) {
  if (pointer != nullptr) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s: %s must not be NULL", plugin_name,
                            what);
}

hwinfer_error* check_byte_range(const char* plugin_name, uint64_t buffer_size_bytes,
                                uint64_t offset, uint64_t size, const char* what) {
  if (offset <= buffer_size_bytes && size <= buffer_size_bytes - offset) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_OUT_OF_RANGE,
                            "%s %s: range [offset %" PRIu64 ", size %" PRIu64
                            ") lies outside the %" PRIu64 "-byte buffer",
                            plugin_name, what, offset, size, buffer_size_bytes);
}

hwinfer_error* check_desc_size(const char* plugin_name, uint32_t struct_size, size_t expected,
                               const char* kernel) {
  if (struct_size >= expected) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: descriptor struct_size %" PRIu32
                            " is smaller than this kernel's descriptor (%zu bytes)",
                            plugin_name, kernel, struct_size, expected);
}

hwinfer_error* check_heads(const char* plugin_name, const char* kernel, int64_t n_heads,
                           int64_t n_kv_heads) {
  if (n_heads % n_kv_heads == 0) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: n_heads (%" PRId64
                            ") must be a multiple of n_kv_heads (%" PRId64 ")",
                            plugin_name, kernel, n_heads, n_kv_heads);
}

}  // namespace hwinfer::backend
