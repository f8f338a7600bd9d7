/*
 * minimal_backend.h — a deliberately small host-memory backend shared by the ABI test plugins.
 *
 * Each test plugin (frozen_plugin.c, old_minor_plugin.c, ...) compiles this code into itself and
 * then bends its API table to model one situation the host must handle (an old minor, a NULL
 * slot, a refused major...). Plain C99 against whichever <hwinfer/plugin.h> the plugin is built
 * with: the frozen 1.0 copy for hwinfer-abi-frozen.so, the live header for the others. So it may
 * use only what ABI 1.0 has, must not include plugin_support.h (the frozen plugin has no access to
 * it), and must never abort or print.
 */
#ifndef HWINFER_ABI_TEST_MINIMAL_BACKEND_H_
#define HWINFER_ABI_TEST_MINIMAL_BACKEND_H_

#include <hwinfer/plugin.h>

/* What differs between the test plugins that share this backend. Each plugin defines
 * `abi_backend` (below) with its own values. */
typedef struct abi_backend_config {
  const char* plugin_name; /* hwinfer_plugin_api.name */
  const char* device_name; /* hwinfer_device_info.name of its one device */
  uint8_t uuid[16];        /* all-zero = no UUID */
  int claim_all_kernels;   /* kernel_query answers SUPPORTED for every kind (null-slot test) */
} abi_backend_config;

extern const abi_backend_config abi_backend;

/* An error with a copy of |message| (caller frees with err->destroy). Never NULL. */
hwinfer_error* abi_error(uint32_t code, const char* message);

/* Fills every 1.0 slot of |api| with the minimal backend (including kernel_query and a kernel
 * table that has only bandwidth_probe) and sets struct_size/abi version from the header it is
 * compiled with. Plugins then change what their test needs. */
void abi_fill_api(hwinfer_plugin_api* api);

/* The kernel table abi_fill_api uses (bandwidth_probe only), for plugins that build their own. */
const hwinfer_kernel_table* abi_probe_kernel_table(void);

/* Counts every call the plugin receives that concerns kernel |kind| (kernel_query with that kind,
 * or a launch through its slot). Exported, so tests can dlsym it and prove the host never called
 * a slot it should not have. Kinds >= 64 return 0. */
HWINFER_PLUGIN_EXPORT uint64_t abi_test_call_count(uint32_t kind);
void abi_count_call(uint32_t kind);

#endif /* HWINFER_ABI_TEST_MINIMAL_BACKEND_H_ */
