// device_requirements.h — what a Vulkan device must have for this plugin's shaders to run, as one
// pure function over plain facts (so a device lacking a feature is testable without one). A device
// that fails is skipped at plugin_init with the reason, naming the Vulkan feature or limit.
//
// The shaders deliberately need nothing optional beyond timeline semaphores: 16-bit and 8-bit
// values go through 32-bit words (no storageBuffer16BitAccess / storageBuffer8BitAccess), no
// subgroup operations, no integer-dot extension, and each shader's shared memory stays within
// Vulkan's guaranteed 16 KiB. Two limits are above Vulkan's minimum: the workgroup size and the
// storage buffers one shader binds (every GPU has them; some embedded devices do not).
// Must not include Vulkan headers (the unit tests compile it without them).
#ifndef HWINFER_BACKENDS_VULKAN_DEVICE_REQUIREMENTS_H_
#define HWINFER_BACKENDS_VULKAN_DEVICE_REQUIREMENTS_H_

#include <cstdint>
#include <string>

namespace hwinfer::vulkan {

constexpr uint32_t kShaderWorkgroupSize = 256;  // HWINFER_WORKGROUP_SIZE of shaders/common.glsl
// The most storage buffers one shader binds (attention_prefill: 12); dispatch.cpp refuses more.
constexpr uint32_t kShaderMaxStorageBuffers = 12;

struct DeviceFacts {
  bool timeline_semaphore = false;         // VkPhysicalDeviceTimelineSemaphoreFeatures
  bool compute_queue = false;              // a queue family with VK_QUEUE_COMPUTE_BIT
  uint32_t max_workgroup_invocations = 0;  // maxComputeWorkGroupInvocations (Vulkan minimum 128)
  uint32_t max_workgroup_size_x = 0;       // maxComputeWorkGroupSize[0] (Vulkan minimum 128)
  uint32_t max_stage_storage_buffers = 0;  // maxPerStageDescriptorStorageBuffers (minimum 4)
  uint32_t max_set_storage_buffers = 0;    // maxDescriptorSetStorageBuffers (minimum 24)
};

// "" when the device can run every shader; else what it lacks, e.g. "maxComputeWorkGroupInvocations
// is 128; the shaders need 256".
std::string unmet_requirement(const DeviceFacts& facts);

}  // namespace hwinfer::vulkan

#endif  // HWINFER_BACKENDS_VULKAN_DEVICE_REQUIREMENTS_H_
