/*
 * init_fails_plugin.c — hwinfer-abi-init-fails.so: negotiates the ABI fine, then plugin_init fails
 * with UNAVAILABLE "simulated init failure: driver not found", as a GPU plugin does on a machine
 * without the driver. The host must pass the plugin's code and text through, naming the file.
 */
#include "minimal_backend.h"

const abi_backend_config abi_backend = {"abi-init-fails", "Never opened", {0}, 0};

static hwinfer_error* failing_init(const hwinfer_host_api* host, const hwinfer_option* options,
                                   size_t n_options, hwinfer_plugin** out) {
  (void)host;
  (void)options;
  (void)n_options;
  (void)out; /* left untouched on failure, as plugin.h requires */
  return abi_error(HWINFER_STATUS_UNAVAILABLE, "simulated init failure: driver not found");
}

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
  abi_fill_api(&api);
  api.plugin_init = failing_init;
  *out_api = &api;
  return NULL;
}
