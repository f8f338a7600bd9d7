/*
 * uuid_plugin.c — hwinfer-abi-uuid-a.so and hwinfer-abi-uuid-b.so, one source built twice
 * (ABI_TEST_UUID_B defined for b). Both report one device with the SAME UUID under different
 * plugin and device names, like the CUDA and Vulkan plugins both seeing one NVIDIA card. The
 * registry must list it once (and record a HiddenDuplicate) unless allow_duplicate_devices is set.
 */
#include "minimal_backend.h"

#define ABI_TEST_SHARED_UUID \
  { 0x6a, 0x9c, 0x1e, 0x52, 0x33, 0x4b, 0x4f, 0x1d, 0x8e, 0x7a, 0x10, 0x2c, 0x5b, 0x90, 0xd4, 0x07 }

#if !defined(ABI_TEST_UUID_B)
const abi_backend_config abi_backend = {"abi-uuid-a", "Shared card seen by A", ABI_TEST_SHARED_UUID,
                                        0};
#else
const abi_backend_config abi_backend = {"abi-uuid-b", "Shared card seen by B", ABI_TEST_SHARED_UUID,
                                        0};
#endif

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
  *out_api = &api;
  return NULL;
}
