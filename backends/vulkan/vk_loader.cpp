// vk_loader.cpp — see vk_loader.h. The only file that calls dlopen/dlsym.
#include "vk_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>

namespace hwinfer::vulkan {

std::string loader_file() {
  const char* file = std::getenv("HWINFER_VULKAN_LOADER");
  return file != nullptr && file[0] != '\0' ? file : "libvulkan.so.1";
}

bool open_loader(const std::string& file, InstanceFunctions* out, std::string* why) {
  void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* error = dlerror();
    *why = "cannot load the Vulkan loader '" + file + "': " + (error != nullptr ? error : "?");
    return false;
  }
  auto get_instance_proc_addr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
  if (get_instance_proc_addr == nullptr) {
    dlclose(library);
    *why = "the Vulkan loader '" + file + "' has no vkGetInstanceProcAddr";
    return false;
  }
  out->library = library;
  out->vkGetInstanceProcAddr = get_instance_proc_addr;
  out->vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(
      get_instance_proc_addr(VK_NULL_HANDLE, "vkCreateInstance"));
  out->vkEnumerateInstanceVersion = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      get_instance_proc_addr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  if (out->vkCreateInstance == nullptr) {
    close_loader(out);
    *why = "the Vulkan loader '" + file + "' has no vkCreateInstance";
    return false;
  }
  return true;
}

bool load_instance_functions(VkInstance instance, InstanceFunctions* table, std::string* why) {
#define HWINFER_VK_LOAD_INSTANCE(name)                                                       \
  table->name = reinterpret_cast<PFN_##name>(table->vkGetInstanceProcAddr(instance, #name)); \
  if (table->name == nullptr) {                                                              \
    *why = "the Vulkan instance has no " #name " (a Vulkan 1.1 loader is required)";         \
    return false;                                                                            \
  }
  HWINFER_VK_INSTANCE_FUNCTIONS(HWINFER_VK_LOAD_INSTANCE)
#undef HWINFER_VK_LOAD_INSTANCE
  return true;
}

bool load_device_functions(const InstanceFunctions& instance, VkDevice device, DeviceFunctions* out,
                           std::string* why) {
#define HWINFER_VK_LOAD_DEVICE(name)                                                     \
  out->name = reinterpret_cast<PFN_##name>(instance.vkGetDeviceProcAddr(device, #name)); \
  if (out->name == nullptr) {                                                            \
    *why = "the Vulkan device has no " #name;                                            \
    return false;                                                                        \
  }
  HWINFER_VK_DEVICE_FUNCTIONS(HWINFER_VK_LOAD_DEVICE)
#undef HWINFER_VK_LOAD_DEVICE
  auto resolve = [&](const char* core, const char* khr) {
    PFN_vkVoidFunction f = instance.vkGetDeviceProcAddr(device, core);
    return f != nullptr ? f : instance.vkGetDeviceProcAddr(device, khr);
  };
  out->vkGetSemaphoreCounterValue = reinterpret_cast<PFN_vkGetSemaphoreCounterValue>(
      resolve("vkGetSemaphoreCounterValue", "vkGetSemaphoreCounterValueKHR"));
  out->vkWaitSemaphores =
      reinterpret_cast<PFN_vkWaitSemaphores>(resolve("vkWaitSemaphores", "vkWaitSemaphoresKHR"));
  if (out->vkGetSemaphoreCounterValue == nullptr || out->vkWaitSemaphores == nullptr) {
    *why = "the Vulkan device has no timeline semaphore entry points";
    return false;
  }
  return true;
}

void close_loader(InstanceFunctions* table) {
  if (table->library != nullptr) dlclose(table->library);
  *table = InstanceFunctions{};
}

std::string result_name(VkResult result) {
  switch (result) {
#define HWINFER_VK_RESULT(name) \
  case name:                    \
    return #name;
    HWINFER_VK_RESULT(VK_SUCCESS)
    HWINFER_VK_RESULT(VK_NOT_READY)
    HWINFER_VK_RESULT(VK_TIMEOUT)
    HWINFER_VK_RESULT(VK_INCOMPLETE)
    HWINFER_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    HWINFER_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    HWINFER_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    HWINFER_VK_RESULT(VK_ERROR_DEVICE_LOST)
    HWINFER_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    HWINFER_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    HWINFER_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    HWINFER_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    HWINFER_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    HWINFER_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    HWINFER_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    HWINFER_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    HWINFER_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
#undef HWINFER_VK_RESULT
    default:
      return "VkResult " + std::to_string(static_cast<int>(result));
  }
}

std::vector<std::string> loaded_libraries() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        }
        return 0;
      },
      &names);
  std::sort(names.begin(), names.end());
  return names;
}

void pin_libraries_loaded_since(const std::vector<std::string>& before) {
  for (const std::string& name : loaded_libraries()) {
    if (std::binary_search(before.begin(), before.end(), name)) continue;
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) {
      dlclose(handle);  // drops the reference just taken; NODELETE stays
    }
  }
}

}  // namespace hwinfer::vulkan
