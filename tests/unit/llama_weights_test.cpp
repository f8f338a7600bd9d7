// llama_weights_test.cpp — LlamaWeights::Place on a device whose largest allocation is smaller
// than the model's tensor data: one buffer per tensor, the same logits as the one-buffer placement
// on the same device, and a tensor larger than the limit refused with its name and the limit.
// The limit is lowered in the core's copy of the device info (Device::mutable_info), so these run
// on the tiny test model; tests/cli/over_one_allocation.sh loads a model that is really larger
// than lavapipe's maxStorageBufferRange. On the Vulkan plugin (the CPU plugin imports the file
// mapping and never uploads).
#include "hwinfer/llama_weights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cpu_device.h"
#include "hwinfer/llama_executor.h"
#include "tiny_model.h"

namespace hwinfer {
namespace {

using testing_support::OpenFirstDevice;

const std::vector<int32_t> kPrompt = {1, 5, 9, 13, 17};

std::shared_ptr<const LlamaModel> TinyModel() {
  return testing_support::TinyModel("tiny-llama-f32.gguf");
}

uint64_t LargestTensorBytes(const LlamaModel& model) {
  uint64_t largest = 0;
  for (const GgufTensorInfo& t : model.file().tensors()) largest = std::max(largest, t.size_bytes);
  return largest;
}

// The logits of the prompt's last position on |device|.
std::vector<float> FirstLogits(const std::shared_ptr<Device>& device,
                               std::shared_ptr<const LlamaModel> model) {
  auto executor = LlamaExecutor::Create(device, std::move(model));
  EXPECT_TRUE(executor.ok()) << executor.status().ToString();
  if (!executor.ok()) return {};
  auto step = (*executor)->Step({{0, kPrompt, true}});
  EXPECT_TRUE(step.ok()) << step.status().ToString();
  return step.ok() ? step->front() : std::vector<float>{};
}

TEST(LlamaWeightsOverOneAllocation, EachTensorGetsItsOwnBufferAndTheLogitsStayTheSame) {
#ifndef HWINFER_HAVE_VULKAN_PLUGIN
  GTEST_SKIP() << "the Vulkan plugin is not built";
#endif
  auto model = TinyModel();
  ASSERT_NE(model, nullptr);
  auto device = OpenFirstDevice(HWINFER_PLUGIN_BUILD_DIR, "vulkan");
  ASSERT_NE(device, nullptr);
  const std::vector<float> one_buffer = FirstLogits(device, model);

  const uint64_t section = model->file().file_size_bytes() - model->file().data_offset_bytes();
  const uint64_t limit = LargestTensorBytes(*model);
  ASSERT_LT(limit, section) << "the model must have more than one tensor's worth of data";
  device->mutable_info().max_allocation_bytes = limit;
  {
    auto stream = device->CreateStream();
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    auto weights = LlamaWeights::Place(device, model, *stream);
    ASSERT_TRUE(weights.ok()) << weights.status().ToString();
    EXPECT_TRUE((*weights)->per_tensor_buffers());
    std::set<hwinfer_buffer*> buffers;
    for (const LlamaLayerWeights& l : (*weights)->layers) {
      for (const DeviceTensor* t :
           {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down}) {
        EXPECT_EQ(t->offset_bytes, 0u);
        buffers.insert(t->buffer);
      }
    }
    EXPECT_EQ(buffers.size(), 9 * (*weights)->layers.size()) << "one buffer per layer tensor";
  }
  const std::vector<float> per_tensor = FirstLogits(device, model);
  ASSERT_FALSE(per_tensor.empty());
  EXPECT_EQ(per_tensor, one_buffer) << "the same kernels on the same bytes";
}

TEST(LlamaWeightsOverOneAllocation, ATensorLargerThanTheLimitIsNamed) {
#ifndef HWINFER_HAVE_VULKAN_PLUGIN
  GTEST_SKIP() << "the Vulkan plugin is not built";
#endif
  auto model = TinyModel();
  ASSERT_NE(model, nullptr);
  auto device = OpenFirstDevice(HWINFER_PLUGIN_BUILD_DIR, "vulkan");
  ASSERT_NE(device, nullptr);
  const uint64_t limit = LargestTensorBytes(*model) - 1;
  device->mutable_info().max_allocation_bytes = limit;
  auto stream = device->CreateStream();
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  auto weights = LlamaWeights::Place(device, model, *stream);
  ASSERT_FALSE(weights.ok());
  EXPECT_EQ(weights.status().code(), StatusCode::kOutOfMemory);
  const std::string message = weights.status().message();
  bool names_one = false;  // the first tensor placed that is over the limit
  for (const GgufTensorInfo& t : model->file().tensors()) {
    if (t.size_bytes > limit && message.find("tensor " + t.name + " ") != std::string::npos) {
      names_one = true;
    }
  }
  EXPECT_TRUE(names_one) << message;
  EXPECT_NE(message.find(std::to_string(limit) + " bytes"), std::string::npos) << message;
}

}  // namespace
}  // namespace hwinfer
