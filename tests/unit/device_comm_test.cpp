// device_comm_test.cpp — device collectives (plugin ABI 1.4) on the CPU plugin, through DeviceComm:
// ranks as threads of this process sum their values (more than one shared-memory slot's worth, so
// in chunks) and every rank gets the same bits; a rank that never joins times the others out; ranks
// given different rank counts are refused; an abort ends a waiting all-reduce and the other rank
// sees the communicator broken; Guard turns a wait past its deadline into an error; the kit refuses
// bad arguments; the simulator has no collectives; the cuda plugin makes an id through the
// machine's NCCL (no GPU needed for that).
#include "hwinfer/device_comm.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "cpu_device.h"
#include "hwinfer/plugin_loader.h"
#include "sim_devices.h"

namespace hwinfer {
namespace {

// One rank's buffer of |count| F32 values on |device|, filled with |values|.
struct RankBuffer {
  Stream stream;
  Buffer buffer;
  float* data = nullptr;
};

RankBuffer MakeRankBuffer(const std::shared_ptr<Device>& device, const std::vector<float>& values) {
  RankBuffer rank;
  auto stream = device->CreateStream();
  EXPECT_TRUE(stream.ok()) << stream.status().ToString();
  auto buffer = device->Allocate(values.size() * sizeof(float));
  EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
  auto mapped = buffer->Map();
  EXPECT_TRUE(mapped.ok()) << mapped.status().ToString();
  rank.data = static_cast<float*>(*mapped);
  std::memcpy(rank.data, values.data(), values.size() * sizeof(float));
  rank.stream = std::move(*stream);
  rank.buffer = std::move(*buffer);
  return rank;
}

// |nranks| threads join the communicator |id| on |device|; each returns its Init's status.
std::vector<StatusOr<DeviceComm>> JoinAll(const std::shared_ptr<Device>& device,
                                          const hwinfer_comm_id& id, int nranks, int joining,
                                          double timeout_seconds) {
  std::vector<std::future<StatusOr<DeviceComm>>> joins;
  for (int r = 0; r < joining; ++r) {
    joins.push_back(std::async(std::launch::async, [&, r] {
      return DeviceComm::Init(device, id, nranks, r, timeout_seconds);
    }));
  }
  std::vector<StatusOr<DeviceComm>> comms;
  for (auto& join : joins) comms.push_back(join.get());
  return comms;
}

TEST(DeviceComm, ThreeRanksSumInChunksAndGetTheSameBits) {
  auto device = testing_support::CpuDevice();
  ASSERT_TRUE(DeviceComm::Supported(*device));
  auto id = DeviceComm::CreateId(*device);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  constexpr int kRanks = 3;
  auto comms = JoinAll(device, *id, kRanks, kRanks, 10.0);
  // 1 MiB slots hold 262144 values: 300000 values take two chunks. Rank r holds (r + 1) * 0.1 * i.
  constexpr size_t kCount = 300000;
  std::vector<RankBuffer> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(comms[r].ok()) << comms[r].status().ToString();
    std::vector<float> values(kCount);
    for (size_t i = 0; i < kCount; ++i)
      values[i] = 0.1f * static_cast<float>(r + 1) * static_cast<float>(i % 1000);
    ranks.push_back(MakeRankBuffer(device, values));
  }
  // Enqueued at an offset of 4 values, over the rest: the first 4 stay as they were.
  std::vector<std::future<Status>> runs;
  for (int r = 0; r < kRanks; ++r) {
    runs.push_back(std::async(std::launch::async, [&, r] {
      Status enqueued = comms[r]->AllReduceSum(ranks[r].stream, ranks[r].buffer, 16, kCount - 4);
      return enqueued.ok() ? ranks[r].stream.Synchronize() : enqueued;
    }));
  }
  for (auto& run : runs) ASSERT_TRUE(run.get().ok());
  for (size_t i = 4; i < kCount; ++i) {
    const float v = static_cast<float>(i % 1000);
    const float expected = (0.1f * 1.0f * v + 0.1f * 2.0f * v) + 0.1f * 3.0f * v;  // rank order
    ASSERT_EQ(ranks[0].data[i], expected) << i;
    ASSERT_EQ(std::memcmp(&ranks[1].data[i], &ranks[0].data[i], sizeof(float)), 0) << i;
    ASSERT_EQ(std::memcmp(&ranks[2].data[i], &ranks[0].data[i], sizeof(float)), 0) << i;
  }
  EXPECT_EQ(ranks[2].data[3], 0.1f * 3.0f * 3.0f);  // before the offset: untouched
  for (auto& comm : comms) EXPECT_TRUE(comm->PendingError().ok());
}

TEST(DeviceComm, ARankThatNeverJoinsTimesTheOthersOutNamingTheCount) {
  auto device = testing_support::CpuDevice();
  auto id = DeviceComm::CreateId(*device);
  ASSERT_TRUE(id.ok());
  const auto begin = std::chrono::steady_clock::now();
  auto comms = JoinAll(device, *id, 3, 2, 0.3);  // ranks 0 and 1 of 3
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  // The first rank past its deadline reports the count and breaks the group; a rank still
  // waiting then stops at once, naming that rank's abort.
  int timed_out = 0;
  for (auto& comm : comms) {
    ASSERT_FALSE(comm.ok());
    EXPECT_EQ(comm.status().code(), StatusCode::kUnavailable);
    const std::string& message = comm.status().message();
    if (message.find("of 3 ranks joined within 0.3") != std::string::npos) {
      ++timed_out;
    } else {
      EXPECT_NE(message.find("of 3 aborted the communicator"), std::string::npos) << message;
    }
  }
  EXPECT_GE(timed_out, 1);
  EXPECT_LT(waited, 10.0);
}

TEST(DeviceComm, RanksGivenDifferentRankCountsAreRefused) {
  auto device = testing_support::CpuDevice();
  auto id = DeviceComm::CreateId(*device);
  ASSERT_TRUE(id.ok());
  const auto begin = std::chrono::steady_clock::now();
  auto two =
      std::async(std::launch::async, [&] { return DeviceComm::Init(device, *id, 2, 0, 5.0); });
  auto three =
      std::async(std::launch::async, [&] { return DeviceComm::Init(device, *id, 3, 1, 5.0); });
  const Status first = two.get().status(), second = three.get().status();
  ASSERT_FALSE(first.ok());
  ASSERT_FALSE(second.ok());
  // The rank that came second finds the other count (in the segment's size or its header) and
  // breaks the group, so the first stops waiting long before its 5 s.
  const std::string messages = first.message() + " | " + second.message();
  EXPECT_TRUE(messages.find("different rank counts") != std::string::npos ||
              messages.find("the group was made for") != std::string::npos)
      << messages;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), 4.0);
}

TEST(DeviceComm, AnAbortEndsAWaitingAllReduceAndBreaksItForTheOtherRank) {
  auto device = testing_support::CpuDevice();
  auto id = DeviceComm::CreateId(*device);
  ASSERT_TRUE(id.ok());
  auto comms = JoinAll(device, *id, 2, 2, 10.0);
  ASSERT_TRUE(comms[0].ok() && comms[1].ok());
  RankBuffer rank0 = MakeRankBuffer(device, std::vector<float>(64, 1.0f));
  // Rank 0 enqueues; rank 1 never does: rank 0's stream waits until the abort.
  ASSERT_TRUE(comms[0]->AllReduceSum(rank0.stream, rank0.buffer, 0, 64).ok());
  auto synchronized = std::async(std::launch::async, [&] { return rank0.stream.Synchronize(); });
  EXPECT_EQ(synchronized.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  comms[0]->Abort();
  const Status waited = synchronized.get();
  EXPECT_EQ(waited.code(), StatusCode::kUnavailable);
  EXPECT_NE(waited.message().find("rank 0 aborted the communicator"), std::string::npos)
      << waited.message();
  const Status seen = comms[1]->PendingError();
  EXPECT_EQ(seen.code(), StatusCode::kUnavailable);
  EXPECT_NE(seen.message().find("rank 0 of 2 aborted the communicator"), std::string::npos)
      << seen.message();
}

TEST(DeviceComm, GuardAbortsAWaitPastItsDeadlineAndSaysWhat) {
  auto device = testing_support::CpuDevice();
  auto id = DeviceComm::CreateId(*device);
  ASSERT_TRUE(id.ok());
  auto comms = JoinAll(device, *id, 2, 2, 10.0);
  ASSERT_TRUE(comms[0].ok() && comms[1].ok());
  RankBuffer rank0 = MakeRankBuffer(device, std::vector<float>(8, 1.0f));
  ASSERT_TRUE(comms[0]->AllReduceSum(rank0.stream, rank0.buffer, 0, 8).ok());
  const Status guarded =
      comms[0]->Guard([&] { return rank0.stream.Synchronize(); }, 0.2, "the test's all-reduce");
  EXPECT_EQ(guarded.code(), StatusCode::kUnavailable);
  EXPECT_NE(guarded.message().find("rank 0 of 2: the test's all-reduce did not finish within "
                                   "0.2 s (another rank is gone or stuck); the device "
                                   "communicator was aborted"),
            std::string::npos)
      << guarded.message();
  // A healthy wait passes through: both ranks take part.
  auto id2 = DeviceComm::CreateId(*device);
  ASSERT_TRUE(id2.ok());
  auto healthy = JoinAll(device, *id2, 1, 1, 10.0);
  ASSERT_TRUE(healthy[0].ok());
  ASSERT_TRUE(healthy[0]->AllReduceSum(rank0.stream, rank0.buffer, 0, 8).ok());
  EXPECT_TRUE(healthy[0]->Guard([&] { return rank0.stream.Synchronize(); }, 5.0, "one rank").ok());
}

TEST(DeviceComm, TheKitRefusesBadArgumentsAndForeignIds) {
  auto device = testing_support::CpuDevice();
  const hwinfer_plugin_api& api = device->plugin().api();
  auto id = DeviceComm::CreateId(*device);
  ASSERT_TRUE(id.ok());
  auto comms = JoinAll(device, *id, 1, 1, 10.0);
  ASSERT_TRUE(comms[0].ok());
  RankBuffer rank = MakeRankBuffer(device, std::vector<float>(8, 1.0f));
  const Status misaligned = comms[0]->AllReduceSum(rank.stream, rank.buffer, 2, 4);
  EXPECT_EQ(misaligned.code(), StatusCode::kInvalidArgument) << misaligned.ToString();
  const Status past_end = comms[0]->AllReduceSum(rank.stream, rank.buffer, 16, 8);
  EXPECT_EQ(past_end.code(), StatusCode::kOutOfRange) << past_end.ToString();
  hwinfer_comm_id foreign{};  // not made by the cpu plugin
  hwinfer_comm* comm = nullptr;
  const Status refused = ConsumePluginError(
      api.comm_init(device->handle(), &foreign, 1, 0, 1000000, &comm), "comm_init");
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("not made by the cpu plugin"), std::string::npos);
  const Status bad_rank =
      ConsumePluginError(api.comm_init(device->handle(), &*id, 2, 2, 1000000, &comm), "comm_init");
  EXPECT_EQ(bad_rank.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

TEST(DeviceComm, TheSimulatorHasNoCollectives) {
  auto devices = testing_support::SimulatedDevices(1);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_FALSE(DeviceComm::Supported(*devices[0]));
  auto id = DeviceComm::CreateId(*devices[0]);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(id.status().message().find("has no device collectives"), std::string::npos);
}

// The cuda plugin's collectives are NCCL, dlopen'd at the first id (vendor_comm.cpp): with no GPU
// here an id is as far as it goes, and that needs the real libnccl.so.2 found and every entry the
// plugin uses resolved (ncclGetUniqueId needs no GPU). Where the library is absent, the refusal
// names the files tried. Plain builds only: NCCL's bootstrap thread outlives the test, which the
// sanitizers' leak check would report as NCCL's.
TEST(DeviceComm, TheCudaPluginMakesAnIdThroughTheMachinesNccl) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "libnccl is not loaded under the sanitizers";
#else
  StatusOr<std::string> file = FindPluginFile("cuda", {HWINFER_PLUGIN_BUILD_DIR});
  if (!file.ok()) GTEST_SKIP() << "the cuda plugin is not built: " << file.status().ToString();
  StatusOr<std::shared_ptr<Plugin>> loaded = Plugin::Load(*file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::shared_ptr<Plugin>& plugin = *loaded;
  if (plugin->api().comm_create_id == nullptr) {
    GTEST_SKIP() << "the cuda plugin was built without nccl.h (no device collectives)";
  }
  hwinfer_comm_id first{}, second{};
  hwinfer_error* made = plugin->api().comm_create_id(plugin->handle(), &first);
  void* nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (nccl == nullptr) {
    ASSERT_NE(made, nullptr) << "an id without libnccl.so.2";
    const std::string message = made->message;
    made->destroy(made);
    EXPECT_EQ(message.find("cuda comm_create_id: NCCL is not loaded: tried"), 0u) << message;
    EXPECT_NE(message.find("libnccl.so.2"), std::string::npos) << message;
    return;
  }
  dlclose(nccl);
  ASSERT_EQ(made, nullptr) << made->message;
  made = plugin->api().comm_create_id(plugin->handle(), &second);
  ASSERT_EQ(made, nullptr) << made->message;
  const hwinfer_comm_id zero{};
  EXPECT_NE(std::memcmp(first.bytes, zero.bytes, sizeof(zero.bytes)), 0) << "an empty id";
  EXPECT_NE(std::memcmp(first.bytes, second.bytes, sizeof(first.bytes)), 0) << "the same id twice";
#endif
}

}  // namespace
}  // namespace hwinfer
