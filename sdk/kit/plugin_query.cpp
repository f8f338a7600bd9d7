// plugin_query.cpp — see plugin_query.h.
#include "hwinfer/kit/plugin_query.h"

#include <cinttypes>

#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {

hwinfer_error* check_plugin_query(const char* plugin_name, uint32_t abi_major,
                                  const hwinfer_plugin_api* const* out_api) {
  if (out_api == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s hwinfer_plugin_query: out_api must not be NULL", plugin_name);
  }
  if (abi_major != HWINFER_ABI_MAJOR) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s plugin implements ABI major %u only; the host asked for "
                              "major %" PRIu32,
                              plugin_name, HWINFER_ABI_MAJOR, abi_major);
  }
  return nullptr;
}

}  // namespace hwinfer::backend
