// plugin_options.cpp — see plugin_options.h.
#include "hwinfer/kit/plugin_options.h"

#include <cinttypes>

#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {

hwinfer_error* check_option_array(const char* plugin_name, const char* what,
                                  const hwinfer_option* options, size_t n_options) {
  if (n_options == 0 || options != nullptr) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: options is NULL but n_options is %zu", plugin_name, what,
                            n_options);
}

hwinfer_error* check_option(const char* plugin_name, const char* what, const hwinfer_option& option,
                            size_t index) {
  if (option.struct_size >= offsetof(hwinfer_option, value) + sizeof(option.value) &&
      option.key != nullptr && option.value != nullptr) {
    return nullptr;
  }
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: option %zu is malformed (struct_size %" PRIu32
                            ", key or value NULL)",
                            plugin_name, what, index, option.struct_size);
}

bool parse_uint(std::string_view text, uint64_t min, uint64_t max, uint64_t* out,
                size_t max_digits) {
  if (text.empty() || text.size() > max_digits || max_digits > 19) return false;
  uint64_t value = 0;
  for (const char digit : text) {
    if (digit < '0' || digit > '9') return false;
    value = value * 10 + static_cast<uint64_t>(digit - '0');
  }
  if (value < min || value > max) return false;
  *out = value;
  return true;
}

}  // namespace hwinfer::backend
