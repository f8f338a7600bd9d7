// serving_replicas_test.cpp — several serving engines behind one front (hwinfer/serving_replicas.h)
// on two simulated devices: round robin alternates the engines, request ids name their engine,
// every request finishes with the tokens one engine gives it, each device's metrics count its own
// requests, and a device given twice is refused.
#include "hwinfer/serving_replicas.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "hwinfer/config.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/registry.h"

namespace hwinfer {
namespace {

const std::string kModel = std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/tiny-llama-f16.gguf";

struct Rig {
  Registry registry;
  std::vector<std::shared_ptr<Device>> devices;
  std::shared_ptr<const LlamaModel> model;
};

// sim:0 and sim:1 (the sim plugin with two devices) and the tiny model.
std::unique_ptr<Rig> MakeRig() {
  auto rig = std::make_unique<Rig>();
  auto config = ParseRuntimeConfig(std::string("plugin_paths: [") + HWINFER_PLUGIN_BUILD_DIR +
                                       "]\nbackends:\n  - name: sim\n    options: {devices: 2}\n",
                                   "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  if (!config.ok()) return nullptr;
  auto registry = Registry::FromConfig(*config);
  EXPECT_TRUE(registry.ok()) << registry.status().ToString();
  if (!registry.ok()) return nullptr;
  rig->registry = std::move(*registry);
  for (const char* id : {"sim:0", "sim:1"}) {
    auto found = rig->registry.Find(id);
    EXPECT_TRUE(found.ok());
    if (!found.ok()) return nullptr;
    auto device = rig->registry.Open(**found);
    EXPECT_TRUE(device.ok());
    if (!device.ok()) return nullptr;
    rig->devices.push_back(*device);
  }
  auto model = LlamaModel::Open(kModel);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return nullptr;
  rig->model = *model;
  return rig;
}

EngineOptions SmallEngine() {
  EngineOptions options;
  options.executor.kv_cache_tokens = 1024;
  return options;
}

// The tokens of |stream| to its end (bounded), and how it ended.
std::pair<std::vector<int32_t>, FinishReason> Drain(RequestStream& stream) {
  std::vector<int32_t> tokens;
  FinishReason finish = FinishReason::kNone;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (finish == FinishReason::kNone && std::chrono::steady_clock::now() < deadline) {
    StreamUpdate update = stream.Wait(std::chrono::milliseconds(100));
    tokens.insert(tokens.end(), update.tokens.begin(), update.tokens.end());
    finish = update.finish;
  }
  return {tokens, finish};
}

TEST(ServingReplicas, RoundRobinAlternatesAndIdsNameTheirEngine) {
  auto rig = MakeRig();
  ASSERT_NE(rig, nullptr);
  auto replicas = ServingReplicas::Create(rig->devices, rig->model, SmallEngine(), {},
                                          ReplicaRouting::kRoundRobin);
  ASSERT_TRUE(replicas.ok()) << replicas.status().ToString();
  EXPECT_EQ((*replicas)->DeviceIds(), "sim:0, sim:1");
  std::vector<int32_t> first_tokens;
  for (int i = 0; i < 6; ++i) {
    ServeRequest request;
    request.prompt = {1, 45, 73, 310};
    request.max_tokens = 5;
    auto stream = (*replicas)->Submit(request);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    EXPECT_EQ((*replicas)->EngineOf((*stream)->id()), i % 2) << "request " << i;
    const auto [tokens, finish] = Drain(**stream);
    EXPECT_EQ(finish, FinishReason::kLength);
    ASSERT_EQ(tokens.size(), 5u);
    if (i == 0) first_tokens = tokens;
    EXPECT_EQ(tokens, first_tokens) << "request " << i << " on engine " << i % 2;
  }
  const auto metrics = (*replicas)->Metrics();
  ASSERT_EQ(metrics.size(), 2u);
  for (const auto& [device, m] : metrics) {
    EXPECT_EQ(m.request_success.at("length"), 3) << device;
    EXPECT_EQ(m.generation_tokens, 15) << device;
  }
  EXPECT_EQ(metrics[1].first, "sim:1");
}

TEST(ServingReplicas, BadRequestsAreRefusedOnceAndADeviceTwiceIsRefused) {
  auto rig = MakeRig();
  ASSERT_NE(rig, nullptr);
  auto replicas = ServingReplicas::Create(rig->devices, rig->model, SmallEngine());
  ASSERT_TRUE(replicas.ok()) << replicas.status().ToString();
  ServeRequest empty;
  auto refused = (*replicas)->Submit(empty);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "the prompt is empty");
  ServeRequest too_long;
  too_long.prompt = {1, 2, 3};
  too_long.max_tokens = 100000;
  auto over = (*replicas)->Submit(too_long);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(over.status().message().find("sim:0: "), std::string::npos) << over.status().ToString();
  auto twice =
      ServingReplicas::Create({rig->devices[0], rig->devices[0]}, rig->model, SmallEngine());
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("device sim:0 is given twice"), std::string::npos);
}

}  // namespace
}  // namespace hwinfer
