// llama_executor_split_test.cpp — the layers of one model split over several devices
// (LlamaExecutor::CreateSplit, docs/multi-device.md): two simulated devices give the one-device
// pseudo tokens (the residual stream and the KV writes pass the hand-off intact), the CPU and the
// GPU emulator give exactly the CPU's tokens on F16 weights with f16 and i8 KV caches, and bad
// layer counts or a device given twice are refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu_device.h"
#include "hwinfer/config.h"
#include "hwinfer/generate.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/registry.h"
#include "hwinfer/tensor_view.h"
#include "sim_devices.h"
#include "tiny_model.h"

namespace hwinfer {
namespace {

using testing_support::SmallOptions;
using testing_support::TinyModel;

// sim:0, sim:1 and sim:2 of one registry (the sim plugin with three devices).
std::vector<std::shared_ptr<Device>> SimulatedDevices() {
  return testing_support::SimulatedDevices(3);
}

// Three prompts of different lengths (chunked prefill at 32 tokens), 10 greedy tokens each.
std::vector<std::vector<int32_t>> Tokens(LlamaExecutor& executor) {
  const std::vector<std::vector<int32_t>> prompts = {
      {1, 450, 73, 310, 344, 338}, {1, 150, 318}, std::vector<int32_t>(40, 17)};
  auto generated = Generate(executor, prompts, 10, SamplingParams{});
  EXPECT_TRUE(generated.ok()) << generated.status().ToString();
  return generated.ok() ? generated->tokens : std::vector<std::vector<int32_t>>{};
}

TEST(LlamaExecutorSplit, TwoSimulatedDevicesGiveTheOneDevicePseudoTokens) {
  auto devices = SimulatedDevices();
  ASSERT_EQ(devices.size(), 3u);
  devices.pop_back();
  auto model = TinyModel();
  auto one = LlamaExecutor::Create(devices[0], model, SmallOptions());
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  const auto expected = Tokens(**one);
  auto split = LlamaExecutor::CreateSplit(devices, model, SmallOptions(), {1, 1});
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  const auto layers = (*split)->device_layers();
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].device->id(), "sim:0");
  EXPECT_EQ(layers[0].end_layer, 1);
  EXPECT_EQ(layers[1].first_layer, 1);
  EXPECT_EQ(layers[1].end_layer, 2);
  EXPECT_EQ(Tokens(**split), expected);
  // Both devices' kernels are counted, and a step takes both devices' time.
  EXPECT_GT((*split)->last_step().kernels, 0);
  EXPECT_EQ((*split)->decode_graphs_captured(), 0u);
}

TEST(LlamaExecutorSplit, CpuAndTheGpuEmulatorGiveTheCpuTokensExactlyOnF16) {
#ifndef HWINFER_GPUEMU_PLUGIN_DIR
  GTEST_SKIP() << "the GPU emulator plugin (tests/gpu-emu) is not built";
#else
  for (const uint32_t kv_dtype : {HWINFER_DTYPE_F16, HWINFER_DTYPE_I8}) {
    auto model = TinyModel();
    auto cpu = testing_support::CpuDevice();
    auto emulator = testing_support::OpenFirstDevice(HWINFER_GPUEMU_PLUGIN_DIR, "gpuemu");
    ASSERT_NE(cpu, nullptr);
    ASSERT_NE(emulator, nullptr);
    auto one = LlamaExecutor::Create(cpu, model, SmallOptions(kv_dtype));
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    const auto expected = Tokens(**one);
    auto split = LlamaExecutor::CreateSplit({cpu, emulator}, model, SmallOptions(kv_dtype));
    ASSERT_TRUE(split.ok()) << split.status().ToString();
    EXPECT_EQ(Tokens(**split), expected) << DtypeName(kv_dtype) << " KV";
    // The reverse order: the emulator runs the embedding, the CPU the output.
    auto reverse = LlamaExecutor::CreateSplit({emulator, cpu}, model, SmallOptions(kv_dtype));
    ASSERT_TRUE(reverse.ok()) << reverse.status().ToString();
    EXPECT_EQ(Tokens(**reverse), expected) << DtypeName(kv_dtype) << " KV, reversed";
  }
#endif
}

TEST(LlamaExecutorSplit, LayerCountsAndDevicesAreChecked) {
  auto devices = SimulatedDevices();
  ASSERT_EQ(devices.size(), 3u);
  auto model = TinyModel();
  auto expect_invalid = [&](const std::vector<std::shared_ptr<Device>>& list,
                            std::vector<int64_t> counts, const std::string& message) {
    auto split = LlamaExecutor::CreateSplit(list, model, SmallOptions(), std::move(counts));
    ASSERT_FALSE(split.ok()) << message;
    EXPECT_EQ(split.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(split.status().message().find(message), std::string::npos)
        << split.status().ToString();
  };
  const std::vector<std::shared_ptr<Device>> two = {devices[0], devices[1]};
  expect_invalid(two, {2, 1}, "the layer counts sum to 3; the model has 2 layers");
  expect_invalid(two, {0, 2}, "a layer count is 0; each must be >= 1");
  expect_invalid(two, {2}, "1 layer counts for 2 devices");
  expect_invalid(devices, {}, "3 devices for a model of 2 layers");
  expect_invalid({devices[0], devices[0]}, {}, "the layer split names sim:0 twice");
  // Without counts: in proportion to the devices' memory (equal here), every device >= 1 layer.
  auto even = LlamaExecutor::CreateSplit(two, model, SmallOptions());
  ASSERT_TRUE(even.ok()) << even.status().ToString();
  EXPECT_EQ((*even)->device_layers()[0].end_layer, 1);
}

}  // namespace
}  // namespace hwinfer
