// plugin_entry.cpp — the vulkan plugin's one exported symbol (hwinfer_plugin_query, made by the
// plugin kit from VulkanBackend) and the plugin lifecycle: init opens the loader and the instance,
// ~hwinfer_plugin destroys them.
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
#include <utility>

#include "hwinfer/kit/plugin_api.h"
#include "hwinfer/kit/plugin_log.h"
#include "hwinfer/kit/plugin_options.h"
#include "vk_internal.h"

namespace hwinfer::vulkan {

namespace {

hwinfer_error* check_plugin_options(const hwinfer_option* options, size_t n_options) {
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

hwinfer_error* VulkanBackend::init(const hwinfer_host_api& host, const hwinfer_option* options,
                                   size_t n_options, std::unique_ptr<hwinfer_plugin>* out) {
  if (hwinfer_error* error = check_plugin_options(options, n_options)) return error;
  auto plugin = std::make_unique<hwinfer_plugin>();
  plugin->host = &host;  // enumerate_devices logs through it
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
    log_message(&host, loader_ok ? HWINFER_LOG_INFO : HWINFER_LOG_WARNING, "no devices: %s",
                plugin->unavailable_reason.c_str());
  }
  plugin->device_count = static_cast<uint32_t>(plugin->devices.size());
  *out = std::move(plugin);
  return nullptr;
}

}  // namespace hwinfer::vulkan

hwinfer_plugin::~hwinfer_plugin() {
  if (instance != VK_NULL_HANDLE && vk.vkDestroyInstance != nullptr) {
    vk.vkDestroyInstance(instance, nullptr);
  }
  hwinfer::vulkan::close_loader(&vk);
}

HWINFER_KIT_PLUGIN(hwinfer::vulkan::VulkanBackend);
