/*
 * major2_plugin.c — a plugin of a future, incompatible ABI major 2. Built twice:
 *   hwinfer-abi-major2.so        answers a host that asks for major 1 with UNSUPPORTED
 *                                "this plugin implements ABI major 2" (what plugin.h asks for);
 *   hwinfer-abi-major2-table.so  (ABI_TEST_IGNORE_REQUESTED_MAJOR) ignores the request and hands
 *                                back a table that says abi_major = 2 (a sloppy plugin).
 * Either way the host must refuse it with a message naming both majors, and never call into the
 * table.
 */
#include "minimal_backend.h"

const abi_backend_config abi_backend = {"abi-major2", "Major 2 device", {0}, 0};

HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(uint32_t abi_major,
                                                          uint32_t host_max_minor,
                                                          const hwinfer_host_api* host,
                                                          const hwinfer_plugin_api** out_api) {
  static hwinfer_plugin_api api;
  (void)host_max_minor;
  (void)host;
  if (out_api == NULL) return abi_error(HWINFER_STATUS_INVALID_ARGUMENT, "out_api is NULL");
#ifndef ABI_TEST_IGNORE_REQUESTED_MAJOR
  if (abi_major != 2u) {
    return abi_error(HWINFER_STATUS_UNSUPPORTED, "this plugin implements ABI major 2");
  }
#else
  (void)abi_major;
#endif
  abi_fill_api(&api);
  api.abi_major = 2u;
  api.abi_minor = 0u;
  *out_api = &api;
  return NULL;
}
