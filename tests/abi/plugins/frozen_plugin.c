/*
 * frozen_plugin.c — hwinfer-abi-frozen.so, -frozen-1-1.so .. -frozen-1-3.so: a plugin
 * compiled ONLY against a frozen header (tests/abi/frozen/v1_<ABI_FROZEN_MINOR>/hwinfer/plugin.h),
 * standing for a vendor binary built years ago. Every later hwinfer of major 1 must load it, list
 * its device, allocate, copy and run its one kernel (bandwidth_probe). It must not be rebuilt
 * against the live header: the build gives it the frozen include folder and nothing else.
 */
#include <string.h>

#include "minimal_backend.h"

#ifndef ABI_FROZEN_MINOR
#define ABI_FROZEN_MINOR 0
#endif
#if HWINFER_ABI_MAJOR != 1u || HWINFER_ABI_MINOR != ABI_FROZEN_MINOR
#error "frozen_plugin.c must be compiled against the frozen header of ABI 1.ABI_FROZEN_MINOR"
#endif

#if ABI_FROZEN_MINOR == 0
const abi_backend_config abi_backend = {"abi-frozen", "Frozen 1.0 device", {0}, 0};
#elif ABI_FROZEN_MINOR == 1
const abi_backend_config abi_backend = {"abi-frozen-1-1", "Frozen 1.1 device", {0}, 0};
#elif ABI_FROZEN_MINOR == 2
const abi_backend_config abi_backend = {"abi-frozen-1-2", "Frozen 1.2 device", {0}, 0};
#else
const abi_backend_config abi_backend = {"abi-frozen-1-3", "Frozen 1.3 device", {0}, 0};
#endif

HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(uint32_t abi_major,
                                                          uint32_t host_max_minor,
                                                          const hwinfer_host_api* host,
                                                          const hwinfer_plugin_api** out_api) {
  static hwinfer_plugin_api api;
  (void)host_max_minor;
  (void)host;
  if (out_api == NULL) return abi_error(HWINFER_STATUS_INVALID_ARGUMENT, "out_api is NULL");
  if (abi_major != 1u) {
    return abi_error(HWINFER_STATUS_UNSUPPORTED, "this plugin implements ABI major 1");
  }
  abi_fill_api(&api);
  *out_api = &api;
  return NULL;
}
