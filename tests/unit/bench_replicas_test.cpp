// bench_replicas_test.cpp — one benchmark over several devices (docs/multi-device.md): two
// simulated devices on one virtual clock give every request the tokens a one-device run gives
// it, route by the stated rules, finish a loaded workload sooner than one device, pool their
// utilisation as sum(bytes) / sum(time x peak), refuse a device given twice or simulated and
// real devices together, and lose no request when a device fails mid-run (the sim's
// fail_after_kernels device option).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hwinfer/bench_runner.h"
#include "hwinfer/config.h"
#include "hwinfer/registry.h"
#include "hwinfer/workload.h"

namespace hwinfer {
namespace {

// The devices |ids| of one registry whose sim plugin models two identical devices; sim:I fails
// after |fail_after|[I] kernels (0: never; the sim's device option fail_after_kernels).
std::vector<std::shared_ptr<Device>> OpenDevices(const std::vector<std::string>& ids,
                                                 const std::vector<int> fail_after = {0, 0}) {
  std::string yaml = std::string("plugin_paths: [") + HWINFER_PLUGIN_BUILD_DIR +
                     "]\nbackends:\n  - name: sim\n    options: {devices: 2}\n    devices:\n";
  for (size_t i = 0; i < fail_after.size(); ++i) {
    yaml += "      - select: " + std::to_string(i) + "\n";
    if (fail_after[i] > 0) {
      yaml += "        options: {fail_after_kernels: " + std::to_string(fail_after[i]) + "}\n";
    }
  }
  yaml += "  - name: cpu\n";
  auto config = ParseRuntimeConfig(yaml, "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  auto registry = std::make_shared<Registry>();
  if (config.ok()) {
    auto built = Registry::FromConfig(*config);
    EXPECT_TRUE(built.ok()) << built.status().ToString();
    if (built.ok()) *registry = std::move(*built);
  }
  std::vector<std::shared_ptr<Device>> devices;
  for (const std::string& id : ids) {
    auto found = registry->Find(id);
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    if (!found.ok()) return {};
    auto device = registry->Open(**found);
    EXPECT_TRUE(device.ok()) << device.status().ToString();
    if (device.ok()) devices.push_back(*device);
  }
  return devices;
}

// 16 requests at once on the tiny model: prompts 4..40 tokens, outputs 1..12.
BenchConfig LoadedConfig() {
  BenchConfig config;
  config.file = "test";
  config.model.path = std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/tiny-llama-f16.gguf";
  config.workload.num_requests = 16;
  config.workload.input = {LengthDistribution::Kind::kUniform, 0, 4, 40};
  config.workload.output = {LengthDistribution::Kind::kUniform, 0, 1, 12};
  config.workload.seed = 11;
  config.scheduler.max_batch_tokens = 32;
  config.scheduler.max_sequences = 2;
  return config;
}

BenchRunOptions FixedPeaks() {
  BenchRunOptions options;
  options.measured_bandwidth_bytes_per_s = 1e10;
  options.measured_flops = 1e11;
  return options;
}

// The workload's request ids in arrival order, as RunBench draws them.
std::vector<WorkloadRequest> Workload(const BenchConfig& config) {
  auto workload = GenerateWorkload(config.workload, 512, 512);
  EXPECT_TRUE(workload.ok()) << workload.status().ToString();
  return workload.ok() ? *workload : std::vector<WorkloadRequest>{};
}

TEST(BenchReplicas, TwoSimulatedDevicesGiveEveryRequestItsOneDeviceTokens) {
  const BenchConfig config = LoadedConfig();
  auto one = RunBench(config, OpenDevices({"sim:0"}), FixedPeaks());
  auto two = RunBench(config, OpenDevices({"sim:0", "sim:1"}), FixedPeaks());
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->outputs, one->outputs);
  EXPECT_EQ(two->summary.completed, 16);
  ASSERT_EQ(two->devices.size(), 2u);
  // Every request ran on one device, and each device's summary counts exactly its requests.
  int64_t on[2] = {0, 0};
  for (const int d : two->request_devices) {
    ASSERT_TRUE(d == 0 || d == 1) << d;
    ++on[d];
  }
  for (int d = 0; d < 2; ++d) {
    EXPECT_GT(on[d], 0) << "device " << d << " got no request";
    EXPECT_EQ(two->devices[static_cast<size_t>(d)].requests, on[d]);
    EXPECT_EQ(two->devices[static_cast<size_t>(d)].summary.completed, on[d]);
  }
  EXPECT_EQ(
      two->devices[0].summary.total_output_tokens + two->devices[1].summary.total_output_tokens,
      two->summary.total_output_tokens);
  EXPECT_EQ(two->devices[0].summary.steps + two->devices[1].summary.steps, two->summary.steps);
  const nlohmann::json& j = two->json;
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][1]["env"]["device_id"], "sim:1");
  EXPECT_EQ(j["scheduler"]["routing"], "least_tokens");
  EXPECT_EQ(j["request_devices"].size(), 16u);
}

TEST(BenchReplicas, TwoDevicesFinishALoadedWorkloadSooner) {
  const BenchConfig config = LoadedConfig();
  auto one = RunBench(config, OpenDevices({"sim:0"}), FixedPeaks());
  auto two = RunBench(config, OpenDevices({"sim:0", "sim:1"}), FixedPeaks());
  ASSERT_TRUE(one.ok() && two.ok());
  // Both devices work at once on the one virtual clock: the same work in less time.
  EXPECT_GT(two->summary.output_throughput, 1.5 * one->summary.output_throughput)
      << two->summary.duration_s << " s vs " << one->summary.duration_s << " s";
  EXPECT_LT(two->summary.e2el_ms.mean, one->summary.e2el_ms.mean);
}

TEST(BenchReplicas, RunsOnTheVirtualClockAreDeterministic) {
  const BenchConfig config = LoadedConfig();
  auto a = RunBench(config, OpenDevices({"sim:0", "sim:1"}), FixedPeaks());
  auto b = RunBench(config, OpenDevices({"sim:0", "sim:1"}), FixedPeaks());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->request_devices, b->request_devices);
  EXPECT_EQ(SummaryToJson(a->summary), SummaryToJson(b->summary));
}

TEST(BenchReplicas, RoundRobinTakesTheDevicesInTurn) {
  BenchConfig config = LoadedConfig();
  config.routing = ReplicaRouting::kRoundRobin;
  auto result = RunBench(config, OpenDevices({"sim:0", "sim:1"}), FixedPeaks());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  int expected = 0;
  for (const WorkloadRequest& w : Workload(config)) {
    EXPECT_EQ(result->request_devices[static_cast<size_t>(w.id)], expected) << "request " << w.id;
    expected = 1 - expected;
  }
}

TEST(BenchReplicas, LeastTokensSendsEachArrivalToTheLessLoadedDevice) {
  // All 16 arrive at t = 0, before any step: each goes where the outstanding prompt + output
  // tokens routed so far are fewer (ties to device 0).
  const BenchConfig config = LoadedConfig();
  auto result = RunBench(config, OpenDevices({"sim:0", "sim:1"}), FixedPeaks());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  int64_t load[2] = {0, 0};
  for (const WorkloadRequest& w : Workload(config)) {
    const int to = load[1] < load[0] ? 1 : 0;
    EXPECT_EQ(result->request_devices[static_cast<size_t>(w.id)], to) << "request " << w.id;
    load[to] += w.input_len + w.output_len;
  }
}

TEST(BenchReplicas, PooledUtilisationIsBytesOverTimeTimesPeak) {
  const BenchConfig config = LoadedConfig();
  BenchRunOptions options = FixedPeaks();
  auto result = RunBench(config, OpenDevices({"sim:0", "sim:1"}), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  double bytes = 0, offered = 0;
  for (const DeviceResult& d : result->devices) {
    bytes += d.summary.decode.bytes;
    offered += d.summary.decode.time_s * options.measured_bandwidth_bytes_per_s;
  }
  ASSERT_GT(offered, 0);
  EXPECT_NEAR(result->summary.decode.mbu_measured, bytes / offered, 1e-12);
  EXPECT_DOUBLE_EQ(result->summary.peaks.measured_bandwidth_bytes_per_s,
                   2 * options.measured_bandwidth_bytes_per_s);
}

TEST(BenchReplicas, ADeviceGivenTwiceIsRefused) {
  auto devices = OpenDevices({"sim:0"});
  ASSERT_EQ(devices.size(), 1u);
  devices.push_back(devices.front());
  auto result = RunBench(LoadedConfig(), devices, FixedPeaks());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("names sim:0 twice"), std::string::npos)
      << result.status().ToString();
}

TEST(BenchReplicas, SimulatedAndRealDevicesTogetherAreRefused) {
  auto result = RunBench(LoadedConfig(), OpenDevices({"sim:0", "cpu:0"}), FixedPeaks());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("mixes the simulated device sim:0"), std::string::npos)
      << result.status().ToString();
  auto none = RunBench(LoadedConfig(), std::vector<std::shared_ptr<Device>>{}, FixedPeaks());
  EXPECT_FALSE(none.ok());
}

TEST(BenchReplicas, ALayerSplitRunsOneModelOverBothDevices) {
  BenchConfig config = LoadedConfig();
  auto one = RunBench(config, OpenDevices({"sim:0"}), FixedPeaks());
  config.split_layers = true;
  config.layer_split = {1, 1};
  auto split = RunBench(config, OpenDevices({"sim:0", "sim:1"}), FixedPeaks());
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(split->outputs, one->outputs);
  ASSERT_EQ(split->devices.size(), 1u);
  EXPECT_EQ(split->devices[0].device_id, "sim:0+sim:1");
  for (const int d : split->request_devices) EXPECT_EQ(d, 0);
  const nlohmann::json& parts = split->json["devices"][0]["layer_split"];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1]["device_id"], "sim:1");
  EXPECT_EQ(parts[1]["first_layer"], 1);
  EXPECT_GT(parts[1]["seconds"].get<double>(), 0);
  EXPECT_EQ(split->json["scheduler"]["split"], "layers");
  // The same peaks on both devices: their time-weighted mean is that peak.
  EXPECT_DOUBLE_EQ(split->summary.peaks.measured_bandwidth_bytes_per_s, 1e10);
  // A pipeline without overlap is no faster than one device of the same hardware.
  EXPECT_GE(split->summary.duration_s, 0.95 * one->summary.duration_s);
}

// sim:1 fails after this many kernels: a few steps into the run, while it has requests running
// and requests waiting.
constexpr int kFailAfterKernels = 150;

TEST(BenchReplicas, AFailedDeviceLeavesTheRunAndNoRequestIsLost) {
  const BenchConfig config = LoadedConfig();
  auto one = RunBench(config, OpenDevices({"sim:0"}), FixedPeaks());
  auto result =
      RunBench(config, OpenDevices({"sim:0", "sim:1"}, {0, kFailAfterKernels}), FixedPeaks());
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->summary.completed + result->summary.failed, 16);
  // Only the requests sim:1 was running fail (at most max_sequences of them); the ones it had
  // never scheduled ran on sim:0.
  EXPECT_GT(result->summary.failed, 0);
  EXPECT_LE(result->summary.failed, config.scheduler.max_sequences);
  for (size_t id = 0; id < result->requests.size(); ++id) {
    const RequestRecord& r = result->requests[id];
    if (r.failed) {
      EXPECT_EQ(result->request_devices[id], 1) << "request " << id;
      EXPECT_NE(r.error.find("device sim:1 failed at step"), std::string::npos) << r.error;
      EXPECT_NE(r.error.find("simulated device failure"), std::string::npos) << r.error;
    } else {
      EXPECT_EQ(result->outputs[id], one->outputs[id]) << "request " << id;
    }
  }
  EXPECT_NE(result->devices[1].failure.find("simulated device failure"), std::string::npos);
  EXPECT_TRUE(result->devices[0].failure.empty());
  EXPECT_GT(result->devices[0].requests, result->devices[1].requests);
  EXPECT_EQ(result->json["devices"][1]["failure"], result->devices[1].failure);
}

TEST(BenchReplicas, EveryDeviceFailingEndsEveryRequestWithAReason) {
  auto result = RunBench(LoadedConfig(),
                         OpenDevices({"sim:0", "sim:1"}, {kFailAfterKernels, kFailAfterKernels}),
                         FixedPeaks());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->summary.completed + result->summary.failed, 16);
  int64_t left_without_device = 0;
  for (const RequestRecord& r : result->requests) {
    if (!r.failed) continue;
    EXPECT_NE(r.error.find("simulated device failure"), std::string::npos) << r.error;
    if (r.error.find("no device left to run it") != std::string::npos) ++left_without_device;
  }
  EXPECT_GT(left_without_device, 0);
}

TEST(BenchReplicas, TheOnlyDeviceFailingEndsTheRunWithItsError) {
  auto result = RunBench(LoadedConfig(), OpenDevices({"sim:0"}, {kFailAfterKernels}), FixedPeaks());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("simulated device failure"), std::string::npos)
      << result.status().ToString();
}

}  // namespace
}  // namespace hwinfer
