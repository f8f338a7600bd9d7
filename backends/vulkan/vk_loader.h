// vk_loader.h — the Vulkan entry points the plugin uses, resolved at run time from a dlopen()ed
// loader (libvulkan.so.1, or $HWINFER_VULKAN_LOADER) through vkGetInstanceProcAddr and
// vkGetDeviceProcAddr. The plugin is compiled with VK_NO_PROTOTYPES and never links libvulkan, so
// a machine without a loader still loads it (and gets zero devices with the reason).
//
// Must not call anything but the resolved pointers; must not print.
#ifndef HWINFER_BACKENDS_VULKAN_VK_LOADER_H_
#define HWINFER_BACKENDS_VULKAN_VK_LOADER_H_

#include <vulkan/vulkan_core.h>

#include <string>
#include <vector>

namespace hwinfer::vulkan {

// Global (no instance) and instance-level functions.
#define HWINFER_VK_INSTANCE_FUNCTIONS(X)      \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceMemoryProperties2)     \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

// Device-level functions (timeline semaphore calls are resolved by core name, then with KHR).
#define HWINFER_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                   \
  X(vkGetDeviceQueue)                  \
  X(vkDeviceWaitIdle)                  \
  X(vkQueueSubmit)                     \
  X(vkCreateBuffer)                    \
  X(vkDestroyBuffer)                   \
  X(vkGetBufferMemoryRequirements)     \
  X(vkAllocateMemory)                  \
  X(vkFreeMemory)                      \
  X(vkMapMemory)                       \
  X(vkBindBufferMemory)                \
  X(vkCreateCommandPool)               \
  X(vkDestroyCommandPool)              \
  X(vkAllocateCommandBuffers)          \
  X(vkFreeCommandBuffers)              \
  X(vkBeginCommandBuffer)              \
  X(vkEndCommandBuffer)                \
  X(vkCmdCopyBuffer)                   \
  X(vkCmdFillBuffer)                   \
  X(vkCmdPipelineBarrier)              \
  X(vkCmdBindPipeline)                 \
  X(vkCmdBindDescriptorSets)           \
  X(vkCmdPushConstants)                \
  X(vkCmdDispatch)                     \
  X(vkCmdWriteTimestamp)               \
  X(vkCmdResetQueryPool)               \
  X(vkCreateSemaphore)                 \
  X(vkDestroySemaphore)                \
  X(vkCreateQueryPool)                 \
  X(vkDestroyQueryPool)                \
  X(vkGetQueryPoolResults)             \
  X(vkCreateShaderModule)              \
  X(vkDestroyShaderModule)             \
  X(vkCreateDescriptorSetLayout)       \
  X(vkDestroyDescriptorSetLayout)      \
  X(vkCreatePipelineLayout)            \
  X(vkDestroyPipelineLayout)           \
  X(vkCreateComputePipelines)          \
  X(vkDestroyPipeline)                 \
  X(vkCreateDescriptorPool)            \
  X(vkDestroyDescriptorPool)           \
  X(vkAllocateDescriptorSets)          \
  X(vkUpdateDescriptorSets)

#define HWINFER_VK_DECLARE(name) PFN_##name name = nullptr;

// The loader library and the instance-level table.
struct InstanceFunctions {
  void* library = nullptr;  // dlopen handle of the loader
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;  // NULL: a 1.0 loader
  HWINFER_VK_INSTANCE_FUNCTIONS(HWINFER_VK_DECLARE)
};

struct DeviceFunctions {
  HWINFER_VK_DEVICE_FUNCTIONS(HWINFER_VK_DECLARE)
  PFN_vkGetSemaphoreCounterValue vkGetSemaphoreCounterValue = nullptr;
  PFN_vkWaitSemaphores vkWaitSemaphores = nullptr;
};

// The loader file to open: $HWINFER_VULKAN_LOADER when set and non-empty, else libvulkan.so.1.
std::string loader_file();

// dlopen()s |file| and resolves vkGetInstanceProcAddr and the global functions. False with
// |*why| set when the file cannot be opened or lacks the entry point.
bool open_loader(const std::string& file, InstanceFunctions* out, std::string* why);

// Resolves the instance-level table for |instance|. False with |*why| naming the missing function.
bool load_instance_functions(VkInstance instance, InstanceFunctions* table, std::string* why);

// Resolves the device-level table for |device|. False with |*why| naming the missing function.
bool load_device_functions(const InstanceFunctions& instance, VkDevice device, DeviceFunctions* out,
                           std::string* why);

// dlclose()s the loader (no-op when not open).
void close_loader(InstanceFunctions* table);

// The shared libraries mapped in the process now (their paths), for pin_libraries_loaded_since.
std::vector<std::string> loaded_libraries();
// Marks every library mapped now but not in |before| (the ICDs and their dependencies that
// vkCreateInstance brought in) as never to be unloaded (RTLD_NOLOAD | RTLD_NODELETE). Drivers
// are commonly not safe to unload (threads, atexit handlers; Mesa's lavapipe keeps global state),
// and a leak checker can only attribute allocations to a library that is still mapped. The loader
// itself is opened with RTLD_NODELETE for the same reason.
void pin_libraries_loaded_since(const std::vector<std::string>& before);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", ... or "VkResult <n>".
std::string result_name(VkResult result);

}  // namespace hwinfer::vulkan

#endif  // HWINFER_BACKENDS_VULKAN_VK_LOADER_H_
