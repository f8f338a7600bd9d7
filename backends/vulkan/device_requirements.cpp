// device_requirements.cpp — unmet_requirement(): the first requirement of device_requirements.h
// a device misses, named by its Vulkan feature or limit.
#include "device_requirements.h"

namespace hwinfer::vulkan {

std::string unmet_requirement(const DeviceFacts& facts) {
  if (!facts.timeline_semaphore) return "the timelineSemaphore feature is off";
  if (!facts.compute_queue) return "no compute queue";
  if (facts.max_workgroup_invocations < kShaderWorkgroupSize) {
    return "maxComputeWorkGroupInvocations is " + std::to_string(facts.max_workgroup_invocations) +
           "; the shaders need " + std::to_string(kShaderWorkgroupSize);
  }
  if (facts.max_workgroup_size_x < kShaderWorkgroupSize) {
    return "maxComputeWorkGroupSize[0] is " + std::to_string(facts.max_workgroup_size_x) +
           "; the shaders need " + std::to_string(kShaderWorkgroupSize);
  }
  if (facts.max_stage_storage_buffers < kShaderMaxStorageBuffers) {
    return "maxPerStageDescriptorStorageBuffers is " +
           std::to_string(facts.max_stage_storage_buffers) + "; the shaders need " +
           std::to_string(kShaderMaxStorageBuffers);
  }
  if (facts.max_set_storage_buffers < kShaderMaxStorageBuffers) {
    return "maxDescriptorSetStorageBuffers is " + std::to_string(facts.max_set_storage_buffers) +
           "; the shaders need " + std::to_string(kShaderMaxStorageBuffers);
  }
  return "";
}

}  // namespace hwinfer::vulkan
