// plugin_errors.h — error helpers every in-tree backend shares: the exception barrier around an
// ABI slot (guarded), NULL-argument and byte-range checks. Errors are hwinfer_make_error values
// (hwinfer/plugin_support.h) whose message starts with the plugin's name ("cpu ...", "sim ...").
//
// Must not throw: everything here returns an error value, never lets an exception out.
#ifndef HWINFER_SDK_KIT_PLUGIN_ERRORS_H_
#define HWINFER_SDK_KIT_PLUGIN_ERRORS_H_

#include <cstdint>
#include <exception>
#include <new>

#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

// Returns the error |expression| gives, if any.
#define HWINFER_KIT_RETURN_IF_ERROR(expression)             \
  do {                                                      \
    if (hwinfer_error* hwinfer_kit_error_ = (expression)) { \
      return hwinfer_kit_error_;                            \
    }                                                       \
  } while (false)

namespace hwinfer::backend {

// Runs |body| (returning hwinfer_error*) and turns any exception into an error value, so nothing
// throws across the ABI: OUT_OF_MEMORY for std::bad_alloc, INTERNAL otherwise. |plugin_name| and
// |what| (the entry point) start the message: "cpu plugin_init: out of memory".
template <typename Body>
hwinfer_error* guarded(const char* plugin_name, const char* what, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "%s %s: out of memory", plugin_name,
                              what);
  } catch (const std::exception& e) {
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL, "%s %s: %s", plugin_name, what, e.what());
  } catch (...) {
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL, "%s %s: unknown exception", plugin_name,
                              what);
  }
}

// INVALID_ARGUMENT "<plugin_name>: <what> must not be NULL" when |pointer| is NULL, else NULL.
hwinfer_error* require_non_null(const char* plugin_name, const void* pointer, const char* what);

// NULL when [offset, offset + size) lies inside a buffer of |buffer_size_bytes|, else OUT_OF_RANGE
// naming |what| with the offset, size and buffer size.
hwinfer_error* check_byte_range(const char* plugin_name, uint64_t buffer_size_bytes,
                                uint64_t offset, uint64_t size, const char* what);

// INVALID_ARGUMENT when a kernel descriptor's |struct_size| is smaller than |expected| (the
// descriptor type |kernel| needs).
hwinfer_error* check_desc_size(const char* plugin_name, uint32_t struct_size, size_t expected,
                               const char* kernel);

// INVALID_ARGUMENT unless |n_heads| is a multiple of |n_kv_heads| (which must be > 0).
hwinfer_error* check_heads(const char* plugin_name, const char* kernel, int64_t n_heads,
                           int64_t n_kv_heads);

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_PLUGIN_ERRORS_H_
