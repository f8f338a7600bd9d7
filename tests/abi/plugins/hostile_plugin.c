/*
 * hostile_plugin.c — plugins that break the rules of plugin.h in the ways a buggy vendor plugin
 * does, one behaviour per build (a HOSTILE_* definition), so the host's handling of each is tested:
 *   HOSTILE_ABORT_IN_QUERY       hwinfer_plugin_query calls abort()
 *   HOSTILE_EXIT_IN_QUERY        hwinfer_plugin_query calls _exit(0) (looks like success)
 *   HOSTILE_HANG_IN_QUERY        hwinfer_plugin_query never returns
 *   HOSTILE_SEGV_IN_INIT         plugin_init dies of SIGSEGV
 *   HOSTILE_SEGV_IN_CONSTRUCTOR  the library's constructor dies of SIGSEGV (during dlopen)
 *   HOSTILE_MANY_DEVICES         device_count reports 0xFFFFFFFF devices
 *   HOSTILE_DEVICE_OPEN_FAILS    one device that device_open always refuses
 *   HOSTILE_CONTROL_CHARACTERS   terminal escape sequences in its name and its device's name
 * Everything else is the minimal backend. Test-only: never installed.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "minimal_backend.h"

#if defined(HOSTILE_CONTROL_CHARACTERS)
const abi_backend_config abi_backend = {
    "abi-hostile\x1b[2J", "Hostile\rDevice\x1b]0;title\x07", {0}, 0};
#else
const abi_backend_config abi_backend = {"abi-hostile", "Hostile Device", {0}, 0};
#endif

#if defined(HOSTILE_SEGV_IN_CONSTRUCTOR)
__attribute__((constructor)) static void crash_while_loading(void) { raise(SIGSEGV); }
#endif

#if defined(HOSTILE_SEGV_IN_INIT)
static hwinfer_error* crashing_init(const hwinfer_host_api* host, const hwinfer_option* options,
                                    size_t n_options, hwinfer_plugin** out) {
  (void)host;
  (void)options;
  (void)n_options;
  (void)out;
  raise(SIGSEGV);
  return abi_error(HWINFER_STATUS_INTERNAL, "still alive after SIGSEGV");
}
#endif

#if defined(HOSTILE_MANY_DEVICES)
static hwinfer_error* too_many_devices(hwinfer_plugin* plugin, uint32_t* out_count) {
  (void)plugin;
  *out_count = 0xFFFFFFFFu;
  return NULL;
}
#endif

#if defined(HOSTILE_DEVICE_OPEN_FAILS)
static hwinfer_error* refusing_open(hwinfer_plugin* plugin, uint32_t ordinal,
                                    const hwinfer_option* options, size_t n_options,
                                    hwinfer_device** out) {
  (void)plugin;
  (void)ordinal;
  (void)options;
  (void)n_options;
  (void)out;
  return abi_error(HWINFER_STATUS_UNAVAILABLE, "simulated device failure: the device is lost");
}
#endif

HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(uint32_t abi_major,
                                                          uint32_t host_max_minor,
                                                          const hwinfer_host_api* host,
                                                          const hwinfer_plugin_api** out_api) {
  static hwinfer_plugin_api api;
  (void)host_max_minor;
  (void)host;
#if defined(HOSTILE_ABORT_IN_QUERY)
  abort();
#elif defined(HOSTILE_EXIT_IN_QUERY)
  _exit(0);
#elif defined(HOSTILE_HANG_IN_QUERY)
  {
    volatile int spin = 1;
    while (spin) {
    }
  }
#endif
  if (out_api == NULL) return abi_error(HWINFER_STATUS_INVALID_ARGUMENT, "out_api is NULL");
  if (abi_major != HWINFER_ABI_MAJOR) {
    return abi_error(HWINFER_STATUS_UNSUPPORTED, "this plugin implements ABI major 1");
  }
  abi_fill_api(&api);
#if defined(HOSTILE_SEGV_IN_INIT)
  api.plugin_init = crashing_init;
#elif defined(HOSTILE_MANY_DEVICES)
  api.device_count = too_many_devices;
#elif defined(HOSTILE_DEVICE_OPEN_FAILS)
  api.device_open = refusing_open;
#endif
  *out_api = &api;
  return NULL;
}
