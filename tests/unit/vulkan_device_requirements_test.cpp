// vulkan_device_requirements_test.cpp — a Vulkan device lacking what the plugin's shaders need is
// skipped with a reason naming the missing feature or limit
// (backends/vulkan/device_requirements.h); lavapipe in CI has everything, so the lacking devices
// are described here as facts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device_requirements.h"

namespace hwinfer::vulkan {
namespace {

using ::testing::HasSubstr;

DeviceFacts Capable() {
  DeviceFacts facts;
  facts.timeline_semaphore = true;
  facts.compute_queue = true;
  facts.max_workgroup_invocations = 1024;
  facts.max_workgroup_size_x = 1024;
  facts.max_stage_storage_buffers = 16;
  facts.max_set_storage_buffers = 96;
  return facts;
}

TEST(VulkanDeviceRequirements, ACapableDeviceHasNoneUnmet) {
  EXPECT_EQ(unmet_requirement(Capable()), "");
  DeviceFacts exactly = Capable();
  exactly.max_workgroup_invocations = kShaderWorkgroupSize;
  exactly.max_workgroup_size_x = kShaderWorkgroupSize;
  EXPECT_EQ(unmet_requirement(exactly), "");
}

TEST(VulkanDeviceRequirements, EachMissingFeatureOrLimitIsNamed) {
  DeviceFacts no_timeline = Capable();
  no_timeline.timeline_semaphore = false;
  EXPECT_THAT(unmet_requirement(no_timeline), HasSubstr("timelineSemaphore"));

  DeviceFacts no_compute = Capable();
  no_compute.compute_queue = false;
  EXPECT_THAT(unmet_requirement(no_compute), HasSubstr("compute queue"));

  DeviceFacts small_groups = Capable();
  small_groups.max_workgroup_invocations = 128;  // Vulkan's minimum
  EXPECT_EQ(unmet_requirement(small_groups),
            "maxComputeWorkGroupInvocations is 128; the shaders need 256");

  DeviceFacts narrow = Capable();
  narrow.max_workgroup_size_x = 128;
  EXPECT_EQ(unmet_requirement(narrow), "maxComputeWorkGroupSize[0] is 128; the shaders need 256");

  DeviceFacts few_bindings = Capable();
  few_bindings.max_stage_storage_buffers = 8;
  EXPECT_EQ(unmet_requirement(few_bindings),
            "maxPerStageDescriptorStorageBuffers is 8; the shaders need 12");

  DeviceFacts small_sets = Capable();
  small_sets.max_set_storage_buffers = 4;
  EXPECT_THAT(unmet_requirement(small_sets), HasSubstr("maxDescriptorSetStorageBuffers is 4"));
}

}  // namespace
}  // namespace hwinfer::vulkan
