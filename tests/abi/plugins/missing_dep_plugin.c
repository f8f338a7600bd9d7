/*
 * missing_dep_plugin.c — hwinfer-abi-missing-dep.so: a correct plugin that links a library the
 * loader cannot find at run time (libabi_gone.so, built into a folder that is on no search path
 * and not in the plugin's RPATH), like a CUDA plugin on a machine without libcuda. dlopen fails;
 * the host must report dlerror's text, which names the missing library.
 */
#include "minimal_backend.h"

int abi_gone_function(void); /* defined in gone_library.c, i.e. in libabi_gone.so */

const abi_backend_config abi_backend = {"abi-missing-dep", "Never loaded", {0}, 0};

HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(uint32_t abi_major,
                                                          uint32_t host_max_minor,
                                                          const hwinfer_host_api* host,
                                                          const hwinfer_plugin_api** out_api) {
  static hwinfer_plugin_api api;
  (void)abi_major;
  (void)host_max_minor;
  (void)host;
  if (out_api == NULL || abi_gone_function() != 42) {
    return abi_error(HWINFER_STATUS_INTERNAL, "unreachable");
  }
  abi_fill_api(&api);
  *out_api = &api;
  return NULL;
}
