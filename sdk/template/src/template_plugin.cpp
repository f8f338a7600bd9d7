// template_plugin.cpp — the plugin's entry point: the one exported symbol (hwinfer_plugin_query),
// the API table it hands the host, and plugin_init / plugin_destroy.
//
// TEMPLATE: replace `template` with your backend's name. This file is where ABI negotiation lives;
// keep it small. It must not export anything but hwinfer_plugin_query, must not keep per-instance
// state in globals, and must never abort, throw or print (errors are values, logs go to the host).
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>

#include "template_internal.h"

namespace hwinfer_template {

void log_message(const hwinfer_plugin* plugin, uint32_t level, const char* format, ...) {
  if (plugin == nullptr || plugin->host == nullptr) return;
  const hwinfer_host_api* host = plugin->host;
  // The struct_size rule applies to what the HOST gives us too: read a field only when the host's
  // struct is large enough to contain it (an older host may have a shorter hwinfer_host_api).
  if (host->struct_size < offsetof(hwinfer_host_api, log) + sizeof(host->log)) return;
  if (host->log == nullptr) return;
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  host->log(host->host_context, level, "template", message);
}

hwinfer_error* reject_unknown_options(const hwinfer_option* options, size_t n_options,
                                      const char* what) {
  if (n_options > 0 && options == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s: %zu options but no array", what,
                              n_options);
  }
  // DRIVER: accept your own keys here (e.g. "threads", "queue_priority") and copy their values;
  // the host's strings are only valid during this call. Anything you do not know is an error
  // naming the key, so a typo in a user's config is reported instead of silently ignored.
  if (n_options > 0) {
    const char* key = options[0].key != nullptr ? options[0].key : "(null)";
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s: unknown option '%s' (the template plugin takes no options)",
                              what, key);
  }
  return nullptr;
}

hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                           size_t n_options, hwinfer_plugin** out) {
  if (out == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "plugin_init: out is NULL");
  }
  if (hwinfer_error* error = reject_unknown_options(options, n_options, "plugin_init")) {
    return error;
  }
  // DRIVER: load and initialise your driver here (cuInit, vkCreateInstance...). If the driver is
  // missing, return UNAVAILABLE with a message the user can act on ("libcuda.so.1 not found:
  // install the NVIDIA driver"); the host shows it verbatim. A working driver with no hardware is
  // not an error: succeed here and report zero devices from device_count. On failure free
  // everything and leave *out alone.
  // Never throw: `new (std::nothrow)` returns NULL instead of throwing std::bad_alloc.
  hwinfer_plugin* plugin = new (std::nothrow) hwinfer_plugin();
  if (plugin == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "plugin_init: out of memory");
  }
  plugin->host = host;
  *out = plugin;
  log_message(plugin, HWINFER_LOG_DEBUG, "initialised (host ABI %u.%u)",
              host != nullptr ? host->abi_major : 0u, host != nullptr ? host->abi_minor : 0u);
  return nullptr;
}

void plugin_destroy(hwinfer_plugin* plugin) {
  if (plugin == nullptr) return;
  // DRIVER: stop every thread you started and release the driver. After this returns the host may
  // dlclose the library, so nothing of ours may still be running.
  if (plugin->device_is_open.load()) {
    log_message(plugin, HWINFER_LOG_WARNING, "plugin_destroy: the device is still open");
  }
  delete plugin;
}

namespace {

// The API table, filled once. Every slot the template does not implement stays NULL, which the ABI
// defines as "not provided" (the host then reports the feature as unsupported).
hwinfer_plugin_api make_api_table() {
  hwinfer_plugin_api api;
  std::memset(&api, 0, sizeof(api));
  api.struct_size = sizeof(api);      // tells the host which fields we know (append-only rule)
  api.abi_major = HWINFER_ABI_MAJOR;  // the header we were compiled against
  api.abi_minor = HWINFER_ABI_MINOR;
  api.name = "template";  // the backend name in configs (`backends: [{name: template}]`)
  api.version = "0.1.0";

  api.plugin_init = plugin_init;
  api.plugin_destroy = plugin_destroy;

  api.device_count = device_count;
  api.device_get_info = device_get_info;
  api.device_open = device_open;
  api.device_close = device_close;

  api.buffer_alloc = buffer_alloc;
  api.buffer_free = buffer_free;
  api.buffer_map = buffer_map;
  api.buffer_import_host = buffer_import_host;  // leave NULL if your device cannot import

  api.stream_create = stream_create;
  api.stream_destroy = stream_destroy;
  api.stream_synchronize = stream_synchronize;
  api.copy_h2d = copy_h2d;
  api.copy_d2h = copy_d2h;
  api.copy_d2d = copy_d2d;

  api.event_create = event_create;
  api.event_destroy = event_destroy;
  api.event_record = event_record;
  api.stream_wait_event = stream_wait_event;
  api.event_synchronize = event_synchronize;
  api.event_query = event_query;
  api.event_elapsed_ns = event_elapsed_ns;

  api.kernel_query = kernel_query;
  api.kernels = kernel_table();
  return api;
}

}  // namespace
}  // namespace hwinfer_template

// The one exported symbol. The host passes the ABI major it speaks and the newest minor it
// understands. A plugin that kept several table layouts would return the newest one whose minor is
// <= |host_max_minor|; the template has one table, and the struct_size rule lets any host of the
// same major read it (an older host ignores fields past its own struct size).
extern "C" HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(
    uint32_t abi_major, uint32_t host_max_minor, const hwinfer_host_api* host,
    const hwinfer_plugin_api** out_api) {
  (void)host_max_minor;
  (void)host;  // kept by plugin_init, which receives the same pointer
  if (out_api == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "hwinfer_plugin_query: out_api is NULL");
  }
  if (abi_major != HWINFER_ABI_MAJOR) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "the template plugin implements ABI major %u only; the host asked "
                              "for major %u",
                              HWINFER_ABI_MAJOR, abi_major);
  }
  // A function-local static is initialised once, thread-safely, and lives until dlclose.
  static const hwinfer_plugin_api api = hwinfer_template::make_api_table();
  *out_api = &api;
  return nullptr;
}
