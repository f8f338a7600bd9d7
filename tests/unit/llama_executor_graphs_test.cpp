// llama_executor_graphs_test.cpp — the executor's decode graphs (ExecutorOptions::decode_graphs)
// and its use of the fused rope_kv_append, on the GPU emulator plugin (tests/gpu-emu), which
// captures and replays graphs the way the CUDA and HIP plugins do, and on the CPU plugin, which
// cannot capture. The same steps run with graphs and without must give bit-identical logits:
// replaying a graph launches exactly the kernels a direct step launches, on the same buffers.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "cpu_device.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/registry.h"

namespace hwinfer {
namespace {

using testing_support::OpenFirstDevice;

std::string DataFile(const std::string& name) {
  return std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + name;
}

std::unique_ptr<LlamaExecutor> MakeExecutor(std::shared_ptr<Device> device, bool decode_graphs,
                                            uint32_t kv_dtype = HWINFER_DTYPE_F16) {
  auto model = LlamaModel::Open(DataFile("tiny-llama-f16.gguf"));
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok() || device == nullptr) return nullptr;
  ExecutorOptions options;
  options.max_sequences = 3;
  options.max_batch_tokens = 32;
  options.kv_block_size = 4;
  options.kv_dtype = kv_dtype;
  options.decode_graphs = decode_graphs;
  auto executor = LlamaExecutor::Create(device, *model, options);
  EXPECT_TRUE(executor.ok()) << executor.status().ToString();
  return executor.ok() ? std::move(*executor) : nullptr;
}

// Largest |logit| difference allowed between the Vulkan (lavapipe) and CPU plugins on
// tiny-llama-f16 over RunScript's steps: 4.1e-5 measured (2026-12-01), 25x margin.
constexpr float kVulkanLogitTolerance = 1e-3f;

struct StepRecord {
  std::vector<std::vector<float>> logits;
  bool replayed = false;
  bool captured = false;
  int64_t kernels = 0;
  double bytes = 0;
};

// Prefills three prompts, then decodes with batches of 3, 2 (one sequence released), 3 (a new
// sequence joins after its own prefill) and 2 sequences, feeding each sequence the argmax of its
// last logits; returns every step's logits and stats.
std::vector<StepRecord> RunScript(LlamaExecutor& executor) {
  std::vector<StepRecord> records;
  auto step = [&](const std::vector<SequenceChunk>& batch) {
    auto result = executor.Step(batch);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    StepRecord record;
    if (result.ok()) record.logits = *result;
    record.replayed = executor.last_step().graph_replayed;
    record.captured = executor.last_step().graph_captured;
    record.kernels = executor.last_step().kernels;
    record.bytes = executor.last_step().cost.bytes;
    records.push_back(record);
    return record.logits;
  };
  auto argmax = [](const std::vector<float>& row) {
    return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
  };
  std::map<SequenceId, int32_t> next;
  auto prefill = [&](SequenceId id, std::vector<int32_t> prompt) {
    const auto logits = step({{id, std::move(prompt), true}});
    if (!logits.empty()) next[id] = argmax(logits.front());
  };
  auto decode = [&](const std::vector<SequenceId>& ids) {
    std::vector<SequenceChunk> batch;
    for (SequenceId id : ids) batch.push_back({id, {next[id]}, true});
    const auto logits = step(batch);
    for (size_t i = 0; i < logits.size(); ++i) next[ids[i]] = argmax(logits[i]);
  };
  prefill(1, {1, 5, 9, 13, 17});
  prefill(2, {2, 7});
  prefill(3, {3, 1, 4, 1, 5, 9, 2});
  for (int i = 0; i < 3; ++i) decode({1, 2, 3});
  EXPECT_TRUE(executor.Release(2).ok());
  for (int i = 0; i < 3; ++i) decode({1, 3});
  prefill(4, {400, 401, 402});
  for (int i = 0; i < 2; ++i) decode({4, 1, 3});
  decode({3, 4});
  return records;
}

class ExecutorGraphsOnGpuEmu : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef HWINFER_GPUEMU_PLUGIN_DIR
    GTEST_SKIP() << "the GPU emulator plugin (tests/gpu-emu) is not built";
#endif
  }
  static std::shared_ptr<Device> Emulator() {
#ifdef HWINFER_GPUEMU_PLUGIN_DIR
    return OpenFirstDevice(HWINFER_GPUEMU_PLUGIN_DIR, "gpuemu");
#else
    return nullptr;
#endif
  }
};

TEST_F(ExecutorGraphsOnGpuEmu, ReplayedDecodeStepsGiveBitIdenticalLogits) {
  for (uint32_t kv_dtype : {HWINFER_DTYPE_F16, HWINFER_DTYPE_I8}) {
    SCOPED_TRACE(kv_dtype == HWINFER_DTYPE_I8 ? "i8 KV" : "f16 KV");
    auto device = Emulator();
    ASSERT_NE(device, nullptr);
    ASSERT_TRUE(device->SupportsGraphs()) << "the emulator captures graphs like the CUDA plugin";
    auto with_graphs = MakeExecutor(device, true, kv_dtype);
    auto without = MakeExecutor(device, false, kv_dtype);
    ASSERT_NE(with_graphs, nullptr);
    ASSERT_NE(without, nullptr);
    const std::vector<StepRecord> replayed = RunScript(*with_graphs);
    const std::vector<StepRecord> direct = RunScript(*without);
    ASSERT_EQ(replayed.size(), direct.size());
    int replays = 0, captures = 0;
    for (size_t s = 0; s < replayed.size(); ++s) {
      SCOPED_TRACE("step " + std::to_string(s));
      EXPECT_EQ(replayed[s].logits, direct[s].logits) << "bit-identical logits";
      EXPECT_FALSE(direct[s].replayed);
      EXPECT_EQ(replayed[s].kernels, direct[s].kernels) << "the replay counts every kernel";
      EXPECT_EQ(replayed[s].bytes, direct[s].bytes) << "and its bytes";
      replays += replayed[s].replayed ? 1 : 0;
      captures += replayed[s].captured ? 1 : 0;
    }
    // 4 prefill steps run directly; the 9 decode steps replay graphs of 3 and 2 sequences.
    EXPECT_EQ(replays, 9);
    EXPECT_EQ(captures, 2);
    EXPECT_EQ(with_graphs->decode_graphs_captured(), 2u);
    EXPECT_EQ(without->decode_graphs_captured(), 0u);
  }
}

// A decode step where a sequence wants no logits, or mixed with a prefill, runs directly.
TEST_F(ExecutorGraphsOnGpuEmu, OnlyAllDecodeStepsThatWantEveryLogitReplay) {
  auto executor = MakeExecutor(Emulator(), true);
  ASSERT_NE(executor, nullptr);
  ASSERT_TRUE(executor->Step({{1, {1, 2, 3}, true}, {2, {4, 5}, true}}).ok());
  ASSERT_TRUE(executor->Step({{1, {6}, true}, {2, {7}, false}}).ok());
  EXPECT_FALSE(executor->last_step().graph_replayed) << "a decode row without logits";
  ASSERT_TRUE(executor->Step({{1, {8}, true}, {3, {9, 10}, true}}).ok());
  EXPECT_FALSE(executor->last_step().graph_replayed) << "decode mixed with a prefill";
  ASSERT_TRUE(executor->Step({{1, {11}, true}, {2, {12}, true}}).ok());
  EXPECT_TRUE(executor->last_step().graph_replayed);
  EXPECT_TRUE(executor->last_step().graph_captured);
  EXPECT_EQ(executor->decode_graphs_captured(), 1u);
}

// Bad input to a replayed step is refused before anything is enqueued, and the graph still
// replays afterwards.
TEST_F(ExecutorGraphsOnGpuEmu, ABadStepLeavesTheGraphsUsable) {
  auto executor = MakeExecutor(Emulator(), true);
  ASSERT_NE(executor, nullptr);
  ASSERT_TRUE(executor->Step({{1, {1, 2, 3}, true}}).ok());
  ASSERT_TRUE(executor->Step({{1, {4}, true}}).ok());
  EXPECT_TRUE(executor->last_step().graph_captured);
  EXPECT_FALSE(executor->Step({{1, {-5}, true}}).ok());
  auto after = executor->Step({{1, {5}, true}});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE(executor->last_step().graph_replayed);
  EXPECT_FALSE(executor->last_step().graph_captured);
}

// A device that offers graphs but fails to capture (the emulator's HWINFER_GPUEMU_CAPTURE_FAULT
// spoils every capture) costs nothing but the graphs: the executor runs the same steps directly,
// with the same logits.
TEST_F(ExecutorGraphsOnGpuEmu, AFailedCaptureFallsBackToDirectLaunches) {
  auto device = Emulator();
  ASSERT_NE(device, nullptr);
  auto direct = MakeExecutor(device, false);
  auto faulty = MakeExecutor(device, true);
  ASSERT_NE(direct, nullptr);
  ASSERT_NE(faulty, nullptr);
  const std::vector<StepRecord> expected = RunScript(*direct);
  ASSERT_EQ(setenv("HWINFER_GPUEMU_CAPTURE_FAULT", "1", 1), 0);
  const std::vector<StepRecord> fallen_back = RunScript(*faulty);
  ASSERT_EQ(unsetenv("HWINFER_GPUEMU_CAPTURE_FAULT"), 0);
  ASSERT_EQ(fallen_back.size(), expected.size());
  for (size_t s = 0; s < expected.size(); ++s) {
    EXPECT_EQ(fallen_back[s].logits, expected[s].logits) << "step " << s;
    EXPECT_FALSE(fallen_back[s].replayed) << "step " << s;
  }
  EXPECT_EQ(faulty->decode_graphs_captured(), 0u);
}

// The CPU plugin has no graph slots: decode_graphs changes nothing there.
TEST(ExecutorGraphsOnCpu, WithoutGraphSlotsEveryStepRunsDirectly) {
  auto device = OpenFirstDevice(HWINFER_PLUGIN_BUILD_DIR, "cpu");
  ASSERT_NE(device, nullptr);
  EXPECT_FALSE(device->SupportsGraphs());
  auto executor = MakeExecutor(device, true);
  ASSERT_NE(executor, nullptr);
  EXPECT_TRUE(executor->fuses_rope_kv_append()) << "the CPU plugin has the fused kernel";
  for (const StepRecord& record : RunScript(*executor)) EXPECT_FALSE(record.replayed);
  EXPECT_EQ(executor->decode_graphs_captured(), 0u);
}

// The Vulkan plugin refuses the fused rope_kv_append (its slot is NULL): the executor asks for
// rope and kv_append instead at Create and runs them; its logits follow the CPU plugin's (which
// fuses) within F16 rounding, step for step, and it launches one kernel more per layer.
TEST(ExecutorFusionOnVulkan, ADeviceWithoutTheFusedKernelRunsRopeThenKvAppend) {
#ifndef HWINFER_HAVE_VULKAN_PLUGIN
  GTEST_SKIP() << "the Vulkan plugin is not built";
#endif
  auto vulkan = OpenFirstDevice(HWINFER_PLUGIN_BUILD_DIR, "vulkan");
  auto cpu = OpenFirstDevice(HWINFER_PLUGIN_BUILD_DIR, "cpu");
  ASSERT_NE(vulkan, nullptr);
  ASSERT_NE(cpu, nullptr);
  auto unfused = MakeExecutor(vulkan, true);
  auto fused = MakeExecutor(cpu, true);
  ASSERT_NE(unfused, nullptr);
  ASSERT_NE(fused, nullptr);
  EXPECT_FALSE(unfused->fuses_rope_kv_append());
  EXPECT_TRUE(fused->fuses_rope_kv_append());
  const int64_t n_layers = fused->model().shape().n_layers;
  const std::vector<StepRecord> a = RunScript(*unfused);
  const std::vector<StepRecord> b = RunScript(*fused);
  ASSERT_EQ(a.size(), b.size());
  for (size_t s = 0; s < a.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s));
    EXPECT_EQ(a[s].kernels, b[s].kernels + n_layers) << "rope and kv_append instead of one";
    ASSERT_EQ(a[s].logits.size(), b[s].logits.size());
    for (size_t r = 0; r < a[s].logits.size(); ++r) {
      ASSERT_EQ(a[s].logits[r].size(), b[s].logits[r].size());
      float worst = 0;
      for (size_t i = 0; i < a[s].logits[r].size(); ++i) {
        worst = std::max(worst, std::abs(a[s].logits[r][i] - b[s].logits[r][i]));
      }
      EXPECT_LT(worst, kVulkanLogitTolerance) << "row " << r;
    }
  }
}

}  // namespace
}  // namespace hwinfer
