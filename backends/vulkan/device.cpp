// device.cpp — physical-device enumeration (identity and properties, read once at plugin_init),
// device_get_info (memory free re-read per call: VK_EXT_memory_budget, else the device-local heaps
// minus what this plugin holds), and device open/close (one VkDevice with one compute queue and
// timeline semaphores enabled).
//
// Must not open a VkDevice for enumeration; must not report spec peaks (the core's hardware files
// give them).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "device_requirements.h"
#include "dispatch.h"
#include "hwinfer/kit/plugin_options.h"
#include "vk_internal.h"

namespace hwinfer::vulkan {

namespace {

const char* vendor_name(uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x1010:
      return "Imagination";
    case 0x106B:
      return "Apple";
    case VK_VENDOR_ID_MESA:
      return "Mesa";
    default:
      return nullptr;
  }
}

uint32_t device_type(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return HWINFER_DEVICE_TYPE_CPU;  // lavapipe, SwiftShader
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return HWINFER_DEVICE_TYPE_DISCRETE_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return HWINFER_DEVICE_TYPE_INTEGRATED_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return HWINFER_DEVICE_TYPE_VIRTUAL;
    default:
      return HWINFER_DEVICE_TYPE_OTHER;
  }
}

bool has_extension(const std::vector<VkExtensionProperties>& extensions, const char* name) {
  return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

// Sum of the device-local heaps' budget minus usage (VK_EXT_memory_budget); without the extension
// an estimate: the device-local heaps' size minus the memory this plugin holds on the device.
uint64_t memory_free_bytes(const hwinfer_plugin& plugin, const PhysicalDevice& device) {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{};
  budget.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
  VkPhysicalDeviceMemoryProperties2 memory{};
  memory.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
  if (device.has_memory_budget) memory.pNext = &budget;
  plugin.vk.vkGetPhysicalDeviceMemoryProperties2(device.handle, &memory);
  uint64_t free_bytes = 0, heap_bytes = 0;
  for (uint32_t h = 0; h < memory.memoryProperties.memoryHeapCount; ++h) {
    if ((memory.memoryProperties.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) == 0)
      continue;
    heap_bytes += memory.memoryProperties.memoryHeaps[h].size;
    if (budget.heapBudget[h] > budget.heapUsage[h])
      free_bytes += budget.heapBudget[h] - budget.heapUsage[h];
  }
  if (device.has_memory_budget) return free_bytes;
  const uint64_t held = device.allocated_bytes->load();
  return heap_bytes > held ? heap_bytes - held : 0;
}

// Reads one physical device; false (with |*why|) when it does not qualify.
bool describe(hwinfer_plugin* plugin, VkPhysicalDevice handle, PhysicalDevice* out,
              std::string* why) {
  const InstanceFunctions& vk = plugin->vk;
  VkPhysicalDeviceProperties basic{};
  vk.vkGetPhysicalDeviceProperties(handle, &basic);
  out->handle = handle;
  out->api_version = basic.apiVersion;
  if (basic.apiVersion < VK_API_VERSION_1_1) {
    *why = "Vulkan 1.0 only (1.1 is required)";
    return false;
  }
  uint32_t n_extensions = 0;
  vk.vkEnumerateDeviceExtensionProperties(handle, nullptr, &n_extensions, nullptr);
  std::vector<VkExtensionProperties> extensions(n_extensions);
  vk.vkEnumerateDeviceExtensionProperties(handle, nullptr, &n_extensions, extensions.data());
  extensions.resize(n_extensions);
  const bool is_1_2 = basic.apiVersion >= VK_API_VERSION_1_2;
  const bool has_driver_properties =
      is_1_2 || has_extension(extensions, "VK_KHR_driver_properties");
  const bool has_pci = has_extension(extensions, "VK_EXT_pci_bus_info");
  out->has_memory_budget = has_extension(extensions, "VK_EXT_memory_budget");
  out->timeline_via_extension = !is_1_2;
  if (!is_1_2 && !has_extension(extensions, "VK_KHR_timeline_semaphore")) {
    *why = "no timeline semaphores (Vulkan 1.2 or VK_KHR_timeline_semaphore is required)";
    return false;
  }

  // Features: timeline semaphores, and what later kernels will want (logged).
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
  VkPhysicalDevice16BitStorageFeatures storage16{};
  storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  storage16.pNext = &timeline;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &storage16;
  vk.vkGetPhysicalDeviceFeatures2(handle, &features);
  DeviceFacts facts;
  facts.timeline_semaphore = timeline.timelineSemaphore == VK_TRUE;

  // Properties: IDs, driver, subgroup, PCI address, integer dot product.
  VkPhysicalDeviceIDProperties ids{};
  ids.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  subgroup.pNext = &ids;
  VkPhysicalDeviceMaintenance3Properties maintenance3{};
  maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  maintenance3.pNext = &subgroup;
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
  pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
  void* chain = &maintenance3;
  if (has_driver_properties) {
    driver.pNext = chain;
    chain = &driver;
  }
  if (has_pci) {
    pci.pNext = chain;
    chain = &pci;
  }
  VkPhysicalDeviceProperties2 properties{};
  properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  properties.pNext = chain;
  vk.vkGetPhysicalDeviceProperties2(handle, &properties);
  const VkPhysicalDeviceLimits& limits = properties.properties.limits;

  // A queue family with compute (transfers come with it).
  uint32_t n_families = 0;
  vk.vkGetPhysicalDeviceQueueFamilyProperties(handle, &n_families, nullptr);
  std::vector<VkQueueFamilyProperties> families(n_families);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(handle, &n_families, families.data());
  for (uint32_t f = 0; f < n_families; ++f) {
    if ((families[f].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0 && families[f].queueCount > 0) {
      out->queue_family = f;
      out->timestamp_valid_bits = families[f].timestampValidBits;
      facts.compute_queue = true;
      break;
    }
  }
  facts.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  facts.max_workgroup_size_x = limits.maxComputeWorkGroupSize[0];
  facts.max_stage_storage_buffers = limits.maxPerStageDescriptorStorageBuffers;
  facts.max_set_storage_buffers = limits.maxDescriptorSetStorageBuffers;
  *why = unmet_requirement(facts);
  if (!why->empty()) return false;

  out->min_storage_offset_alignment = std::max<uint64_t>(1, limits.minStorageBufferOffsetAlignment);
  out->max_storage_buffer_range = limits.maxStorageBufferRange;
  out->max_memory_allocation = maintenance3.maxMemoryAllocationSize;
  std::copy(limits.maxComputeWorkGroupCount, limits.maxComputeWorkGroupCount + 3,
            out->max_workgroup_count);
  out->timestamp_period_ns = limits.timestampPeriod;

  hwinfer_device_info& info = out->info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  info.device_type = device_type(basic.deviceType);
  hwinfer_copy_string(info.name, sizeof(info.name), basic.deviceName);
  if (const char* vendor = vendor_name(basic.vendorID)) {
    hwinfer_copy_string(info.vendor, sizeof(info.vendor), vendor);
  } else {
    std::snprintf(info.vendor, sizeof(info.vendor), "0x%04" PRIx32, basic.vendorID);
  }
  const std::string api = std::to_string(VK_API_VERSION_MAJOR(basic.apiVersion)) + "." +
                          std::to_string(VK_API_VERSION_MINOR(basic.apiVersion)) + "." +
                          std::to_string(VK_API_VERSION_PATCH(basic.apiVersion));
  std::string driver_text;
  if (has_driver_properties) {
    driver_text = std::string(driver.driverName) + " " + driver.driverInfo;
  } else {
    char version[32];
    std::snprintf(version, sizeof(version), "0x%08" PRIx32, basic.driverVersion);
    driver_text = std::string("driver ") + version;
  }
  driver_text += " (Vulkan " + api + ")";
  hwinfer_copy_string(info.driver, sizeof(info.driver), driver_text.c_str());
  std::memcpy(info.uuid, ids.deviceUUID, sizeof(info.uuid));
  if (has_pci) {
    std::snprintf(info.pci_address, sizeof(info.pci_address), "%04x:%02x:%02x.%x", pci.pciDomain,
                  pci.pciBus, pci.pciDevice, pci.pciFunction);
  }
  VkPhysicalDeviceMemoryProperties memory{};
  vk.vkGetPhysicalDeviceMemoryProperties(handle, &memory);
  for (uint32_t h = 0; h < memory.memoryHeapCount; ++h) {
    if ((memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0) {
      info.memory_total_bytes += memory.memoryHeaps[h].size;
    }
  }
  info.max_allocation_bytes = out->max_storage_buffer_range;
  if (out->max_memory_allocation > 0) {
    info.max_allocation_bytes = std::min(info.max_allocation_bytes, out->max_memory_allocation);
  }
  info.alignment_bytes = std::max<uint64_t>(out->min_storage_offset_alignment, 256);
  info.compute_units = 0;  // Vulkan does not say

  log_message(plugin->host, HWINFER_LOG_DEBUG,
              "%s: subgroup size %" PRIu32
              ", 16-bit storage %s, min storage offset alignment %" PRIu64
              ", max storage buffer range %" PRIu64 ", timestamp bits %" PRIu32 " (%g ns/tick)",
              info.name, subgroup.subgroupSize,
              storage16.storageBuffer16BitAccess == VK_TRUE ? "yes" : "no",
              out->min_storage_offset_alignment, out->max_storage_buffer_range,
              out->timestamp_valid_bits, static_cast<double>(out->timestamp_period_ns));
  log_message(plugin->host, HWINFER_LOG_DEBUG, "%s: integer dot product %s", info.name,
              has_extension(extensions, "VK_KHR_shader_integer_dot_product") ? "yes" : "no");
  return true;
}

}  // namespace

void enumerate_devices(hwinfer_plugin* plugin) {
  uint32_t n = 0;
  VkResult result = plugin->vk.vkEnumeratePhysicalDevices(plugin->instance, &n, nullptr);
  if (result != VK_SUCCESS) {
    plugin->unavailable_reason = "vkEnumeratePhysicalDevices failed: " + result_name(result);
    return;
  }
  std::vector<VkPhysicalDevice> handles(n);
  result = plugin->vk.vkEnumeratePhysicalDevices(plugin->instance, &n, handles.data());
  if (result != VK_SUCCESS && result != VK_INCOMPLETE) {
    plugin->unavailable_reason = "vkEnumeratePhysicalDevices failed: " + result_name(result);
    return;
  }
  handles.resize(n);
  std::string skipped;
  for (VkPhysicalDevice handle : handles) {
    PhysicalDevice device;
    std::string why;
    if (describe(plugin, handle, &device, &why)) {
      plugin->devices.push_back(device);
    } else {
      VkPhysicalDeviceProperties basic{};
      plugin->vk.vkGetPhysicalDeviceProperties(handle, &basic);
      log_message(plugin->host, HWINFER_LOG_INFO, "skipping device '%s': %s", basic.deviceName,
                  why.c_str());
      skipped += (skipped.empty() ? "" : "; ") + std::string(basic.deviceName) + ": " + why;
    }
  }
  if (plugin->devices.empty()) {
    plugin->unavailable_reason = n == 0 ? "the Vulkan loader reports no physical device"
                                        : "no usable Vulkan device (" + skipped + ")";
  }
}

hwinfer_error* VulkanBackend::device_info(const hwinfer_plugin& plugin, uint32_t ordinal,
                                          hwinfer_device_info& info) {
  const PhysicalDevice& device = plugin.devices[ordinal];
  info = device.info;
  info.memory_free_bytes = memory_free_bytes(plugin, device);
  return nullptr;
}

namespace {

// Picks a memory type index for |required| flags (and |preferred| when one has them too).
int32_t pick_memory_type(const VkPhysicalDeviceMemoryProperties& memory,
                         VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  int32_t fallback = -1;
  for (uint32_t t = 0; t < memory.memoryTypeCount; ++t) {
    const VkMemoryPropertyFlags flags = memory.memoryTypes[t].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return static_cast<int32_t>(t);
    if (fallback < 0) fallback = static_cast<int32_t>(t);
  }
  return fallback;
}

hwinfer_error* create_device(hwinfer_device* device) {
  const PhysicalDevice& physical = *device->physical;
  const InstanceFunctions& vk = device->plugin->vk;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{};
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = physical.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
  timeline.timelineSemaphore = VK_TRUE;
  const char* timeline_extension = "VK_KHR_timeline_semaphore";
  VkDeviceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  create.pNext = &timeline;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  if (physical.timeline_via_extension) {
    create.enabledExtensionCount = 1;
    create.ppEnabledExtensionNames = &timeline_extension;
  }
  VkResult result = vk.vkCreateDevice(physical.handle, &create, nullptr, &device->device);
  if (result != VK_SUCCESS) {
    device->device = VK_NULL_HANDLE;
    return vk_error(result, "device_open", "vkCreateDevice");
  }
  std::string why;
  if (!load_device_functions(vk, device->device, &device->fn, &why)) {
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "vulkan device_open: %s", why.c_str());
  }
  device->fn.vkGetDeviceQueue(device->device, physical.queue_family, 0, &device->queue);

  VkPhysicalDeviceMemoryProperties memory{};
  vk.vkGetPhysicalDeviceMemoryProperties(physical.handle, &memory);
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  device->device_memory_type = pick_memory_type(memory, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  if (device->device_memory_type < 0) device->device_memory_type = pick_memory_type(memory, 0, 0);
  device->host_memory_type = pick_memory_type(memory, host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (device->host_memory_type < 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE,
                              "vulkan device_open: '%s' has no host-visible coherent memory type",
                              physical.info.name);
  }
  device->alignment_bytes = physical.info.alignment_bytes;
  return nullptr;
}

void destroy_device(hwinfer_device* device) {
  if (device->device != VK_NULL_HANDLE) {
    if (device->fn.vkDeviceWaitIdle != nullptr) device->fn.vkDeviceWaitIdle(device->device);
    destroy_pipelines(device);
    finish_host_copies(device, /*discard=*/true);  // left only by a failed wait
    release_memory_pools(device);
    if (device->fn.vkDestroyDevice != nullptr) {
      device->fn.vkDestroyDevice(device->device, nullptr);
    } else {
      // Function table incomplete: resolve vkDestroyDevice directly.
      auto destroy = reinterpret_cast<PFN_vkDestroyDevice>(
          device->plugin->vk.vkGetDeviceProcAddr(device->device, "vkDestroyDevice"));
      if (destroy != nullptr) destroy(device->device, nullptr);
    }
  }
}

}  // namespace

hwinfer_error* VulkanBackend::open_device(hwinfer_plugin& plugin, uint32_t ordinal,
                                          const hwinfer_option* options, size_t n_options,
                                          std::unique_ptr<hwinfer_device>* out) {
  for (size_t i = 0; i < n_options; ++i) {
    const hwinfer_option& option = options[i];
    HWINFER_KIT_RETURN_IF_ERROR(backend::check_option(kPluginName, "device_open", option, i));
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "vulkan device_open: unknown option '%s' (value '%s'); the vulkan "
                              "plugin has no device options yet",
                              option.key, option.value);
  }
  auto device = std::make_unique<hwinfer_device>();
  device->plugin = &plugin;
  device->ordinal = ordinal;
  device->physical = &plugin.devices[ordinal];
  device->max_allocation_bytes = device->physical->info.max_allocation_bytes;
  if (hwinfer_error* error = create_device(device.get())) {
    destroy_device(device.get());
    return error;
  }
  *out = std::move(device);
  return nullptr;
}

void VulkanBackend::close_device(hwinfer_device& device) { destroy_device(&device); }

}  // namespace hwinfer::vulkan
