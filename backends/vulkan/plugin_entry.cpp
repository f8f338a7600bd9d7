// plugin_entry.cpp — the vulkan plugin's one exported symbol (hwinfer_plugin_query), its static
// API table, and the plugin lifecycle: plugin_init opens the loader and the instance.
//
// No loader, no instance or no qualifying device is not an error: plugin_init succeeds, the plugin
// reports zero devices, and the reason goes to the host's log (WARNING when the loader or the
// instance is missing, so `hwinfer devices` shows it; INFO when the loader has no device).
//
// Options (plugin_init): none yet; any key is INVALID_ARGUMENT.
// Must not print, abort or throw across the ABI.
#include <cstdarg>
#include <memory>
#include <string>
#include <type_traits>

#include "hwinfer/kit/plugin_log.h"
#include "hwinfer/kit/plugin_options.h"
#include "hwinfer/kit/plugin_query.h"
#include "vk_internal.h"

namespace hwinfer::vulkan {

namespace {

const hwinfer_plugin_api kApi = {
    .struct_size = sizeof(hwinfer_plugin_api),
    .abi_major = HWINFER_ABI_MAJOR,
    .abi_minor = HWINFER_ABI_MINOR,
    .reserved0 = 0,
    .name = kPluginName,
    .version = HWINFER_VULKAN_PLUGIN_VERSION,
    .plugin_init = &plugin_init,
    .plugin_destroy = &plugin_destroy,
    .device_count = &device_count,
    .device_get_info = &device_get_info,
    .device_open = &device_open,
    .device_close = &device_close,
    .buffer_alloc = &buffer_alloc,
    .buffer_free = &buffer_free,
    .buffer_map = &buffer_map,
    .buffer_import_host = nullptr,  // not yet (VK_EXT_external_memory_host)
    .stream_create = &stream_create,
    .stream_destroy = &stream_destroy,
    .stream_synchronize = &stream_synchronize,
    .copy_h2d = &copy_h2d,
    .copy_d2h = &copy_d2h,
    .copy_d2d = &copy_d2d,
    .event_create = &event_create,
    .event_destroy = &event_destroy,
    .event_record = &event_record,
    .stream_wait_event = &stream_wait_event,
    .event_synchronize = &event_synchronize,
    .event_query = &event_query,
    .event_elapsed_ns = &event_elapsed_ns,
    .kernel_query = &kernel_query,
    .kernels = nullptr,  // set by hwinfer_plugin_query (kernel_table() lives in kernels.cpp)
    .stream_begin_capture = nullptr,  // graphs (ABI 1.1): not provided
    .stream_end_capture = nullptr,
    .graph_launch = nullptr,
    .graph_destroy = nullptr,
};

hwinfer_error* check_plugin_options(const hwinfer_option* options, size_t n_options) {
  if (hwinfer_error* error =
          backend::check_option_array(kPluginName, "plugin_init", options, n_options)) {
    return error;
  }
  for (size_t i = 0; i < n_options; ++i) {
    if (hwinfer_error* error = backend::check_option(kPluginName, "plugin_init", options[i], i)) {
      return error;
    }
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "vulkan plugin_init: unknown option '%s' (value '%s'); the vulkan "
                              "plugin has no plugin options yet",
                              options[i].key, options[i].value);
  }
  return nullptr;
}

// Opens the loader and creates the instance; on failure leaves plugin->unavailable_reason set.
void open_instance(hwinfer_plugin* plugin) {
  std::string why;
  if (!open_loader(loader_file(), &plugin->vk, &why)) {
    plugin->unavailable_reason = why;
    return;
  }
  uint32_t instance_version = VK_API_VERSION_1_0;
  if (plugin->vk.vkEnumerateInstanceVersion != nullptr) {
    plugin->vk.vkEnumerateInstanceVersion(&instance_version);
  }
  if (instance_version < VK_API_VERSION_1_1) {
    plugin->unavailable_reason = "the Vulkan loader '" + loader_file() +
                                 "' implements Vulkan 1.0 only; hwinfer needs 1.1 or newer";
    return;
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "hwinfer";
  app.pEngineName = "hwinfer";
  app.apiVersion = instance_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
  VkInstanceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  create.pApplicationInfo = &app;
  const std::vector<std::string> before = loaded_libraries();
  const VkResult result = plugin->vk.vkCreateInstance(&create, nullptr, &plugin->instance);
  pin_libraries_loaded_since(before);
  if (result != VK_SUCCESS) {
    plugin->instance = VK_NULL_HANDLE;
    plugin->unavailable_reason = "vkCreateInstance failed: " + result_name(result);
    return;
  }
  if (!load_instance_functions(plugin->instance, &plugin->vk, &why)) {
    plugin->unavailable_reason = why;
    return;
  }
  enumerate_devices(plugin);
}

}  // namespace

void log_message(const hwinfer_host_api* host, uint32_t level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  backend::vlog_message(host, level, kPluginName, format, args);
  va_end(args);
}

hwinfer_error* vk_error(VkResult result, const char* what, const char* call) {
  const uint32_t code =
      result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY
          ? HWINFER_STATUS_OUT_OF_MEMORY
          : HWINFER_STATUS_INTERNAL;
  return hwinfer_make_error(code, "vulkan %s: %s failed: %s", what, call,
                            result_name(result).c_str());
}

hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                           size_t n_options, hwinfer_plugin** out) {
  return guarded("plugin_init", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(host, "plugin_init: host")) return error;
    if (hwinfer_error* error = require_non_null(out, "plugin_init: out")) return error;
    if (hwinfer_error* error = check_plugin_options(options, n_options)) return error;
    auto plugin = std::make_unique<hwinfer_plugin>();
    plugin->host = host;
    open_instance(plugin.get());
    if (plugin->devices.empty()) {
      if (plugin->unavailable_reason.empty()) {
        plugin->unavailable_reason =
            "the Vulkan loader found no device with Vulkan 1.1, a compute "
            "queue and timeline semaphores";
      }
      // A missing loader or instance is worth a warning (the user may expect a GPU); a loader
      // without devices is an ordinary machine.
      const bool loader_ok = plugin->instance != VK_NULL_HANDLE;
      log_message(host, loader_ok ? HWINFER_LOG_INFO : HWINFER_LOG_WARNING, "no devices: %s",
                  plugin->unavailable_reason.c_str());
    }
    plugin->open.assign(plugin->devices.size(), false);
    *out = plugin.release();
    return nullptr;
  });
}

void plugin_destroy(hwinfer_plugin* plugin) {
  if (plugin == nullptr) return;
  try {
    for (size_t i = 0; i < plugin->open.size(); ++i) {
      if (plugin->open[i]) {
        log_message(plugin->host, HWINFER_LOG_WARNING,
                    "plugin_destroy: device %zu is still open; the host must close it first", i);
      }
    }
    if (plugin->instance != VK_NULL_HANDLE && plugin->vk.vkDestroyInstance != nullptr) {
      plugin->vk.vkDestroyInstance(plugin->instance, nullptr);
    }
    close_loader(&plugin->vk);
    delete plugin;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

}  // namespace hwinfer::vulkan

extern "C" HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(
    uint32_t abi_major, uint32_t host_max_minor, const hwinfer_host_api* host,
    const hwinfer_plugin_api** out_api) {
  (void)host_max_minor;  // minor 0 is the oldest there is
  (void)host;            // plugin_init receives it again
  if (hwinfer_error* error =
          hwinfer::backend::check_plugin_query(hwinfer::vulkan::kPluginName, abi_major, out_api)) {
    return error;
  }
  static const hwinfer_plugin_api api = [] {
    hwinfer_plugin_api table = hwinfer::vulkan::kApi;
    table.kernels = hwinfer::vulkan::kernel_table();
    return table;
  }();
  *out_api = &api;
  return nullptr;
}

static_assert(std::is_same_v<decltype(&hwinfer_plugin_query), hwinfer_plugin_query_fn>,
              "hwinfer_plugin_query must match plugin.h's hwinfer_plugin_query_fn");
