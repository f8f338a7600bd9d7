/*
 * old_minor_plugin.c — hwinfer-abi-old-minor.so: a plugin whose API table ends just before
 * kernel_query (struct_size = offsetof(hwinfer_plugin_api, kernel_query)), as a plugin built
 * before those slots existed would report. The slots past its struct_size are filled with WORKING
 * functions that count their calls: a host that reads past struct_size would find them, answer
 * "supported" and bump the counters, so the test can tell. The host must treat kernel_query and
 * kernels as absent.
 */
#include <stddef.h>

#include "minimal_backend.h"

const abi_backend_config abi_backend = {"abi-old-minor", "Old minor device", {0}, 1};

HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(uint32_t abi_major,
                                                          uint32_t host_max_minor,
                                                          const hwinfer_host_api* host,
                                                          const hwinfer_plugin_api** out_api) {
  static hwinfer_plugin_api api;
  (void)host_max_minor;
  (void)host;
  if (out_api == NULL) return abi_error(HWINFER_STATUS_INVALID_ARGUMENT, "out_api is NULL");
  if (abi_major != HWINFER_ABI_MAJOR) {
    return abi_error(HWINFER_STATUS_UNSUPPORTED, "this plugin implements ABI major 1");
  }
  abi_fill_api(&api); /* fills kernel_query and kernels too: they must be ignored */
  api.struct_size = (uint32_t)offsetof(hwinfer_plugin_api, kernel_query);
  api.abi_minor = 0;
  *out_api = &api;
  return NULL;
}
