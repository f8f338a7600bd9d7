/*
 * null_slot_plugin.c — hwinfer-abi-null-slot.so: a kernel table whose gemm slot is NULL while
 * kernel_query claims SUPPORTED for every kernel (a plugin contradicting itself). The host must
 * trust the table: gemm is unsupported, kernel_query is never asked about it, and a launch is
 * refused before any call. abi_test_call_count(kind) (exported) counts every call the plugin gets
 * about a kind, so the test sees 0 for gemm and a positive count for bandwidth_probe, the slot
 * this plugin does fill.
 */
#include "minimal_backend.h"

const abi_backend_config abi_backend = {"abi-null-slot", "Null slot device", {0}, 1};

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
  abi_fill_api(&api); /* the probe-only table: gemm and every other slot NULL */
  *out_api = &api;
  return NULL;
}
