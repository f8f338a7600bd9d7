// tensor_parallel_test.cpp — tensor parallelism (LlamaExecutor::CreateTensorParallel, Follow;
// docs/multi-device.md section 3) with ranks as threads of this process (MakeLocalCollectives):
// the collectives themselves, TP=2 giving TP=1's greedy tokens on F16 weights (and on Q8_0, whose
// wo and w_down are split inside rows by whole blocks), TP=4 over 2 KV heads (each KV head held by
// two ranks), each rank's share of the bytes, a degree that does not divide the heads refused on
// every rank, a rank that cannot open its model
// reported by every rank, and a rank that hangs mid-step turned into an error within the deadline
// instead of a hang. Every token test runs twice: all-reduces through host memory and on the
// devices (the CPU plugin's shared-memory communicator, plugin ABI 1.4).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cpu_device.h"
#include "hwinfer/collective.h"
#include "hwinfer/generate.h"
#include "hwinfer/llama_executor.h"
#include "sim_devices.h"
#include "tiny_model.h"

namespace hwinfer {
namespace {

using testing_support::SmallOptions;
using testing_support::TinyModel;

// Three prompts of different lengths (chunked prefill at 32 tokens, shared blocks of none), 10
// greedy tokens each.
const std::vector<std::vector<int32_t>>& Prompts() {
  static const std::vector<std::vector<int32_t>> prompts = {
      {1, 450, 73, 310, 344, 338}, {1, 150, 318}, std::vector<int32_t>(40, 17)};
  return prompts;
}

std::vector<std::vector<int32_t>> OneDeviceTokens(const std::string& model_name,
                                                  uint32_t kv_dtype) {
  auto executor = LlamaExecutor::Create(testing_support::CpuDevice(), TinyModel(model_name),
                                        SmallOptions(kv_dtype));
  EXPECT_TRUE(executor.ok()) << executor.status().ToString();
  if (!executor.ok()) return {};
  auto generated = Generate(**executor, Prompts(), 10, SamplingParams{});
  EXPECT_TRUE(generated.ok()) << generated.status().ToString();
  return generated.ok() ? generated->tokens : std::vector<std::vector<int32_t>>{};
}

// What rank 0 saw of a tensor-parallel generation.
struct TpRun {
  Status rank0, follower;
  std::vector<std::vector<int32_t>> tokens;
  std::vector<RankStepStats> last_ranks;  // the last step's per-rank stats
  double bytes_per_token = 0;             // rank 0's kv_bytes_per_token
  bool device_all_reduces = false;        // rank 0's executor summed on the devices
};

// Generates Prompts() with |ranks| thread ranks on the CPU, rank 0 sampling.
TpRun RunTensorParallel(int ranks, const std::string& model_name, uint32_t kv_dtype,
                        TpCollectives collectives = TpCollectives::kAuto) {
  auto group = MakeLocalCollectives(ranks, 30.0);
  auto device = testing_support::CpuDevice();
  auto model = TinyModel(model_name);
  std::vector<std::future<Status>> followers;
  for (int r = 1; r < ranks; ++r) {
    followers.push_back(std::async(std::launch::async, [&, r] {
      return LlamaExecutor::FollowTensorParallel(group[r], device, model);
    }));
  }
  TpRun run;
  {
    ExecutorOptions options = SmallOptions(kv_dtype);
    options.tp_collectives = collectives;
    auto executor = LlamaExecutor::CreateTensorParallel(device, model, options, group[0]);
    run.rank0 = executor.status();
    if (executor.ok()) {
      run.device_all_reduces = (*executor)->device_all_reduces();
      auto generated = Generate(**executor, Prompts(), 10, SamplingParams{});
      run.rank0 = generated.status();
      if (generated.ok()) run.tokens = generated->tokens;
      run.last_ranks = (*executor)->last_step().ranks;
      run.bytes_per_token = (*executor)->kv_bytes_per_token();
    }
  }  // rank 0's executor stops the followers' steps
  if (run.rank0.ok()) run.rank0 = LlamaExecutor::EndTensorParallel(*group[0]);
  for (auto& follower : followers) {
    const Status status = follower.get();
    if (!status.ok() && run.follower.ok()) run.follower = status;
  }
  return run;
}

// RunTensorParallel with every rank succeeding and rank 0's tokens equal to one device's, with
// the all-reduces through host memory and then on the devices; returns the second run.
TpRun ExpectOneDeviceTokens(int ranks, const std::string& model_name, uint32_t kv_dtype) {
  const auto expected = OneDeviceTokens(model_name, kv_dtype);
  EXPECT_EQ(expected.size(), 3u);
  TpRun run;
  for (TpCollectives collectives : {TpCollectives::kHost, TpCollectives::kDevice}) {
    SCOPED_TRACE(TpCollectivesName(collectives));
    run = RunTensorParallel(ranks, model_name, kv_dtype, collectives);
    EXPECT_TRUE(run.rank0.ok()) << run.rank0.ToString();
    EXPECT_TRUE(run.follower.ok()) << run.follower.ToString();
    EXPECT_EQ(run.tokens, expected);
    EXPECT_EQ(run.device_all_reduces, collectives == TpCollectives::kDevice);
  }
  return run;
}

TEST(TensorParallel, AutoSumsOnTheCpuDevicesAndHostModeThroughHostMemory) {
  EXPECT_TRUE(RunTensorParallel(2, "tiny-llama-f16.gguf", HWINFER_DTYPE_F16).device_all_reduces);
  EXPECT_FALSE(RunTensorParallel(2, "tiny-llama-f16.gguf", HWINFER_DTYPE_F16, TpCollectives::kHost)
                   .device_all_reduces);
}

TEST(LocalCollective, SumsBroadcastsAndGathersAcrossThreeThreads) {
  auto group = MakeLocalCollectives(3, 30.0);
  std::vector<std::future<std::vector<float>>> results;
  for (int r = 0; r < 3; ++r) {
    results.push_back(std::async(std::launch::async, [&, r] {
      std::vector<float> sum = {1.0f * static_cast<float>(r), 10.0f};
      EXPECT_TRUE(group[r]->AllReduceSum(sum.data(), 2, "sum").ok());
      int32_t value = r == 0 ? 42 : -1;
      EXPECT_TRUE(group[r]->Broadcast(&value, sizeof(value), "broadcast", r != 0).ok());
      int32_t gathered[3] = {};
      const int32_t mine = 100 + r;
      EXPECT_TRUE(group[r]->AllGather(&mine, sizeof(mine), gathered, "gather").ok());
      return std::vector<float>{sum[0], sum[1], static_cast<float>(value),
                                static_cast<float>(gathered[0]), static_cast<float>(gathered[2])};
    }));
  }
  for (auto& result : results) {
    EXPECT_EQ(result.get(), (std::vector<float>{3.0f, 30.0f, 42.0f, 100.0f, 102.0f}));
  }
}

TEST(LocalCollective, AMissingRankFailsTheCallAfterTheDeadlineNamingIt) {
  auto group = MakeLocalCollectives(2, 0.2);
  float value = 1.0f;
  const Status status = group[0]->AllReduceSum(&value, 1, "the all-reduce after layer 3's ffn");
  ASSERT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("rank 0 of 2"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("layer 3's ffn"), std::string::npos) << status.message();
  // The group is broken: a later call fails at once, on the other rank too.
  EXPECT_EQ(group[1]->AllReduceSum(&value, 1, "late").code(), StatusCode::kUnavailable);
}

TEST(TensorParallel, TwoRanksGiveTheOneDeviceTokensOnF16) {
  const TpRun run = ExpectOneDeviceTokens(2, "tiny-llama-f16.gguf", HWINFER_DTYPE_F16);
  // Each rank holds half the KV heads: half the KV bytes per token.
  // K and V x 2 layers x 2 KV heads x 32 values x 2 bytes = 512 per token, over 2 ranks.
  EXPECT_DOUBLE_EQ(run.bytes_per_token, 256.0);
  ASSERT_EQ(run.last_ranks.size(), 2u);
  for (const RankStepStats& rank : run.last_ranks) {
    EXPECT_GT(rank.cost.bytes, 0);
    EXPECT_GT(rank.device_seconds, 0);
    EXPECT_GE(rank.comm_seconds, 0);
    EXPECT_LE(rank.comm_seconds, rank.device_seconds * 1.5 + 1e-3);
  }
  // Rank 0 also reads the output projection; the follower only its share of the layers.
  EXPECT_GT(run.last_ranks[0].cost.bytes, run.last_ranks[1].cost.bytes);
}

TEST(TensorParallel, TwoRanksGiveTheOneDeviceTokensOnQ8WithI8Kv) {
  ExpectOneDeviceTokens(2, "tiny-llama-q8_0.gguf", HWINFER_DTYPE_I8);
}

TEST(TensorParallel, FourRanksOverTwoKvHeadsHoldACopyEachAndGiveTheOneDeviceTokens) {
  // 8 query heads, 2 KV heads: ranks 0 and 1 use KV head 0, ranks 2 and 3 KV head 1.
  const TpRun run = ExpectOneDeviceTokens(4, "tiny-llama-f16.gguf", HWINFER_DTYPE_F16);
  // One KV head per rank: 256 of the model's 512 bytes per token.
  EXPECT_DOUBLE_EQ(run.bytes_per_token, 256.0);
  EXPECT_EQ(run.last_ranks.size(), 4u);
}

TEST(TensorParallel, ADegreeThatDoesNotDivideTheHeadsIsRefusedOnEveryRank) {
  // The tiny model has 8 heads, 2 KV heads and an FFN width of 768.
  const TpRun run = RunTensorParallel(3, "tiny-llama-f16.gguf", HWINFER_DTYPE_F16);
  ASSERT_EQ(run.rank0.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(run.rank0.message().find("tensor parallelism of 3 does not fit random-llama: the "
                                     "degree must divide its 8 attention heads"),
            std::string::npos)
      << run.rank0.message();
  EXPECT_EQ(run.follower.code(), StatusCode::kInvalidArgument);
}

TEST(TensorParallel, ARankThatCannotOpenItsModelIsReportedOnEveryRank) {
  auto group = MakeLocalCollectives(2, 30.0);
  auto follower = std::async(std::launch::async, [&] {
    return LlamaExecutor::FailTensorParallel(*group[1], NotFound("model.gguf: no such file"));
  });
  auto executor = LlamaExecutor::CreateTensorParallel(testing_support::CpuDevice(), TinyModel(),
                                                      SmallOptions(), group[0]);
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(executor.status().message(), "rank 1: model.gguf: no such file");
  EXPECT_EQ(follower.get().message(), "rank 1: model.gguf: no such file");
}

TEST(TensorParallel, SimulatedRanksAddTheModelledAllReducesToTheirVirtualTime) {
  // NVLink-like: 400 GB/s, 2 us per hop. Two ranks on sim:0 and sim:1.
  InterconnectSpec link;
  link.bandwidth_bytes_per_s = 400e9;
  link.latency_s = 2e-6;
  auto group = MakeLocalCollectives(2, 30.0, link);
  auto devices = testing_support::SimulatedDevices(2);
  ASSERT_EQ(devices.size(), 2u);
  auto model = TinyModel();
  auto follower = std::async(std::launch::async, [&] {
    return LlamaExecutor::FollowTensorParallel(group[1], devices[1], model);
  });
  {
    auto executor =
        LlamaExecutor::CreateTensorParallel(devices[0], model, SmallOptions(), group[0]);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    auto step = (*executor)->Step({{1, {1, 450, 73}, true}});
    ASSERT_TRUE(step.ok()) << step.status().ToString();
    // 2 layers x 2 all-reduces of [3 tokens, 256] F32 rows.
    const double each = link.AllReduceSeconds(2, 3 * 256 * 4);
    const StepStats& stats = (*executor)->last_step();
    EXPECT_NEAR(stats.comm_seconds, 4 * each, 1e-12);
    ASSERT_EQ(stats.ranks.size(), 2u);
    for (const RankStepStats& rank : stats.ranks) {
      EXPECT_NEAR(rank.comm_seconds, 4 * each, 1e-12);
      EXPECT_GT(rank.device_seconds, rank.comm_seconds);  // the kernels' virtual time and them
    }
  }
  ASSERT_TRUE(LlamaExecutor::EndTensorParallel(*group[0]).ok());
  EXPECT_TRUE(follower.get().ok());
}

// A rank that passes every call through to |inner| except the one a subclass holds back, which
// waits in WaitForRelease() until the test calls release.set_value().
class HeldRank : public Collective {
 public:
  explicit HeldRank(std::shared_ptr<Collective> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  double deadline_seconds() const override { return inner_->deadline_seconds(); }
  Status AllReduceSum(float* data, int64_t count, const std::string& what) override {
    return inner_->AllReduceSum(data, count, what);
  }
  Status Broadcast(void* data, int64_t bytes, const std::string& what, bool idle) override {
    return inner_->Broadcast(data, bytes, what, idle);
  }
  Status AllGather(const void* data, int64_t bytes, void* out, const std::string& what) override {
    return inner_->AllGather(data, bytes, out, what);
  }
  std::promise<void> release;

 protected:
  void WaitForRelease() { released_.wait(); }

 private:
  std::shared_ptr<Collective> inner_;
  std::shared_future<void> released_ = release.get_future().share();
};

// A rank that hangs inside a step: it takes part in everything but the all-reduces, where it
// waits until the test releases it.
class HangingRank : public HeldRank {
 public:
  using HeldRank::HeldRank;
  Status AllReduceSum(float*, int64_t, const std::string&) override {
    WaitForRelease();
    return Unavailable("released");
  }
};

TEST(TensorParallel, ARankThatHangsFailsRankZerosStepWithinTheDeadline) {
  auto group = MakeLocalCollectives(2, 0.5);
  auto hanging = std::make_shared<HangingRank>(group[1]);
  auto device = testing_support::CpuDevice();
  auto model = TinyModel();
  auto follower = std::async(std::launch::async, [&] {
    return LlamaExecutor::FollowTensorParallel(hanging, device, model);
  });
  {
    ExecutorOptions options = SmallOptions();
    options.tp_collectives = TpCollectives::kHost;
    auto executor = LlamaExecutor::CreateTensorParallel(device, model, options, group[0]);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    auto step = (*executor)->Step({{1, {1, 450, 73}, true}});
    ASSERT_FALSE(step.ok());
    EXPECT_EQ(step.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(step.status().message().find("rank 0 of 2: no answer from the other ranks within "
                                           "0.5 s in the all-reduce after layer 0's attention"),
              std::string::npos)
        << step.status().message();
  }
  hanging->release.set_value();
  EXPECT_EQ(follower.get().code(), StatusCode::kUnavailable);
}

// A rank that receives a step's plan and then stops (stuck before its device all-reduces): the
// broadcast of the first step's plan ("rank 0's step plan") returns only when the test releases
// it.
class StuckAfterThePlan : public HeldRank {
 public:
  using HeldRank::HeldRank;
  Status Broadcast(void* data, int64_t bytes, const std::string& what, bool idle) override {
    Status status = HeldRank::Broadcast(data, bytes, what, idle);
    if (what == "rank 0's step plan" && ++plan_parts_ == 1) WaitForRelease();
    return status;
  }

 private:
  int plan_parts_ = 0;
};

TEST(TensorParallel, ARankStuckBeforeItsDeviceAllReducesFailsTheStepWithinTheDeadline) {
  auto group = MakeLocalCollectives(2, 0.5);
  auto stuck = std::make_shared<StuckAfterThePlan>(group[1]);
  auto device = testing_support::CpuDevice();
  auto model = TinyModel();
  auto follower = std::async(std::launch::async, [&] {
    return LlamaExecutor::FollowTensorParallel(stuck, device, model);
  });
  {
    ExecutorOptions options = SmallOptions();
    options.tp_collectives = TpCollectives::kDevice;
    auto executor = LlamaExecutor::CreateTensorParallel(device, model, options, group[0]);
    ASSERT_TRUE(executor.ok()) << executor.status().ToString();
    ASSERT_TRUE((*executor)->device_all_reduces());
    const auto begin = std::chrono::steady_clock::now();
    auto step = (*executor)->Step({{1, {1, 450, 73}, true}});
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    ASSERT_FALSE(step.ok());
    EXPECT_EQ(step.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(step.status().message().find("rank 0 of 2: the device all-reduces of step 1 on "
                                           "cpu:0 did not finish within 0.5 s"),
              std::string::npos)
        << step.status().message();
    EXPECT_LT(waited, 20.0);  // bounded: not a hang (the deadline is 0.5 s)
    stuck->release.set_value();
  }
  // The released rank runs its step on the aborted communicator: it fails, naming rank 0.
  const Status followed = follower.get();
  EXPECT_EQ(followed.code(), StatusCode::kUnavailable);
  EXPECT_NE(followed.message().find("rank 0 of 2 aborted the communicator"), std::string::npos)
      << followed.message();
}

TEST(TensorParallel, DeviceCollectivesOnAPluginWithoutThemAreRefusedOnEveryRank) {
  auto group = MakeLocalCollectives(2, 30.0);
  auto devices = testing_support::SimulatedDevices(2);
  ASSERT_EQ(devices.size(), 2u);
  auto model = TinyModel();
  auto follower = std::async(std::launch::async, [&] {
    return LlamaExecutor::FollowTensorParallel(group[1], devices[1], model);
  });
  ExecutorOptions options = SmallOptions();
  options.tp_collectives = TpCollectives::kDevice;
  auto executor = LlamaExecutor::CreateTensorParallel(devices[0], model, options, group[0]);
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(executor.status().message().find(
                "--tp-collectives device: rank 0: sim:0: plugin 'sim' has no device collectives"),
            std::string::npos)
      << executor.status().message();
  EXPECT_EQ(follower.get().code(), StatusCode::kUnsupported);
}

TEST(TensorParallel, TheCollectivesModeParsesItsThreeNames) {
  for (TpCollectives mode : {TpCollectives::kAuto, TpCollectives::kHost, TpCollectives::kDevice}) {
    auto parsed = ParseTpCollectives(TpCollectivesName(mode));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, mode);
  }
  auto bad = ParseTpCollectives("nccl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'nccl': expected auto, host"), std::string::npos);
}

}  // namespace
}  // namespace hwinfer
