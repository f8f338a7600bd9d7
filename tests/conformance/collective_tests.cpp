// collective_tests.cpp — conformance of the device collectives (plugin.h ABI 1.4): a one-rank
// communicator's all-reduce leaves its range bitwise as it was and nothing outside it; two ranks
// on the device under test (threads, a stream and a buffer each) get the sum, the same bits on
// both; an abort ends an all-reduce that waits for a rank that never comes, and the communicator
// then reports an error; a join short of ranks fails within its timeout; a misaligned or
// out-of-range all-reduce is refused. Every test skips with the reason where the plugin has no
// collectives; the two-rank tests skip where the plugin refuses two ranks on one device (NCCL
// does: one GPU per rank).
#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <string>
#include <vector>

#include "conformance_fixture.h"
#include "hwinfer/device_comm.h"

namespace hwinfer::conformance {
namespace {

using CollectiveTest = ConformanceTest;

// True when |device|'s plugin has the six slots; otherwise records a skip with the reason.
bool RequireComms(const Device& device) {
  if (DeviceComm::Supported(device)) return true;
  [&] {
    GTEST_SKIP() << device.id()
                 << " has no device collectives: its plugin leaves the six slots (comm_create_id "
                    ".. comm_destroy) NULL";
  }();
  return false;
}

std::vector<float> RandomFloats(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

std::vector<uint8_t> Bytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Joins |nranks| ranks of one fresh communicator on |device| from as many threads; empty with a
// skip recorded when the plugin refuses them (e.g. two ranks on one GPU).
std::vector<DeviceComm> JoinOnOneDevice(const std::shared_ptr<Device>& device, int nranks) {
  StatusOr<hwinfer_comm_id> id = DeviceComm::CreateId(*device);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  if (!id.ok()) return {};
  std::vector<std::future<StatusOr<DeviceComm>>> joins;
  for (int r = 0; r < nranks; ++r) {
    joins.push_back(std::async(std::launch::async,
                               [&, r] { return DeviceComm::Init(device, *id, nranks, r, 30.0); }));
  }
  std::vector<DeviceComm> comms;
  Status refused;
  for (auto& join : joins) {
    StatusOr<DeviceComm> comm = join.get();
    if (comm.ok()) {
      comms.push_back(std::move(*comm));
    } else if (refused.ok()) {
      refused = comm.status();
    }
  }
  if (!refused.ok()) {
    comms.clear();
    [&] {
      GTEST_SKIP() << device->id() << " refuses " << nranks
                   << " ranks of one communicator on one device: " << refused.ToString();
    }();
  }
  return comms;
}

TEST_P(CollectiveTest, OneRankLeavesItsRangeAsItWasAndNothingElseMoves) {
  if (!RequireComms(device())) return;
  std::vector<DeviceComm> comms = JoinOnOneDevice(shared_device(), 1);
  if (comms.empty()) return;
  std::mt19937_64 rng(TestSeed());
  const std::vector<float> values = RandomFloats(1000, rng);
  ASSERT_OK_AND_ASSIGN(Buffer buffer, device().Allocate(values.size() * sizeof(float)));
  SyncOnExit sync(stream());
  ASSERT_TRUE(Upload(stream(), buffer, Bytes(values)).ok());
  ASSERT_TRUE(comms[0].AllReduceSum(stream(), buffer, 40, 900).ok());  // values [10, 910)
  ASSERT_TRUE(stream().Synchronize().ok());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> after, Download(stream(), buffer));
  EXPECT_EQ(after, Bytes(values));
  EXPECT_TRUE(comms[0].PendingError().ok());
}

TEST_P(CollectiveTest, TwoRanksOnTheDeviceGetTheSumWithTheSameBits) {
  if (!RequireComms(device())) return;
  std::vector<DeviceComm> comms = JoinOnOneDevice(shared_device(), 2);
  if (comms.empty()) return;
  std::mt19937_64 rng(TestSeed());
  constexpr size_t kCount = 5000;
  std::vector<std::vector<float>> inputs = {RandomFloats(kCount, rng), RandomFloats(kCount, rng)};
  std::vector<std::future<StatusOr<std::vector<uint8_t>>>> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(std::async(std::launch::async, [&, r]() -> StatusOr<std::vector<uint8_t>> {
      HWINFER_ASSIGN_OR_RETURN(Stream own, device().CreateStream());
      HWINFER_ASSIGN_OR_RETURN(Buffer buffer, device().Allocate(kCount * sizeof(float)));
      HWINFER_RETURN_IF_ERROR(Upload(own, buffer, Bytes(inputs[r])));
      HWINFER_RETURN_IF_ERROR(comms[r].AllReduceSum(own, buffer, 0, kCount));
      HWINFER_RETURN_IF_ERROR(own.Synchronize());
      return Download(own, buffer);
    }));
  }
  std::vector<std::vector<uint8_t>> results;
  for (auto& rank : ranks) {
    StatusOr<std::vector<uint8_t>> result = rank.get();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    results.push_back(std::move(*result));
  }
  EXPECT_EQ(results[0], results[1]) << "the ranks got different bits";
  std::vector<float> sum(kCount);
  std::memcpy(sum.data(), results[0].data(), results[0].size());
  for (size_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(sum[i], inputs[0][i] + inputs[1][i]) << "value " << i;  // one add: exact either way
  }
}

TEST_P(CollectiveTest, AnAbortEndsAnAllReduceThatWaitsForAMissingRank) {
  if (!RequireComms(device())) return;
  std::vector<DeviceComm> comms = JoinOnOneDevice(shared_device(), 2);
  if (comms.empty()) return;
  ASSERT_OK_AND_ASSIGN(Buffer buffer, device().Allocate(256));
  SyncOnExit sync(stream());
  ASSERT_TRUE(comms[0].AllReduceSum(stream(), buffer, 0, 64).ok());  // rank 1 never enqueues
  const auto begin = std::chrono::steady_clock::now();
  const Status guarded =
      comms[0].Guard([&] { return stream().Synchronize(); }, 0.2, "the lone all-reduce");
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(guarded.code(), StatusCode::kUnavailable) << guarded.ToString();
  EXPECT_LT(waited, 30.0) << "comm_abort did not end the waiting all-reduce";
  EXPECT_FALSE(comms[0].PendingError().ok()) << "an aborted communicator must report an error";
  EXPECT_TRUE(stream().Synchronize().ok()) << "the stream's error was returned once already";
}

TEST_P(CollectiveTest, AJoinShortOfRanksFailsWithinItsTimeout) {
  if (!RequireComms(device())) return;
  ASSERT_OK_AND_ASSIGN(hwinfer_comm_id id, DeviceComm::CreateId(device()));
  const auto begin = std::chrono::steady_clock::now();
  StatusOr<DeviceComm> alone = DeviceComm::Init(shared_device(), id, 2, 0, 0.3);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_FALSE(alone.ok()) << "rank 0 of 2 joined without rank 1";
  EXPECT_LT(waited, 30.0) << "comm_init did not keep to its timeout";
}

TEST_P(CollectiveTest, MisalignedOrOutOfRangeAllReducesAreRefused) {
  if (!RequireComms(device())) return;
  std::vector<DeviceComm> comms = JoinOnOneDevice(shared_device(), 1);
  if (comms.empty()) return;
  ASSERT_OK_AND_ASSIGN(Buffer buffer, device().Allocate(64));
  EXPECT_EQ(comms[0].AllReduceSum(stream(), buffer, 2, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(comms[0].AllReduceSum(stream(), buffer, 32, 9).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(stream().Synchronize().ok());
}

INSTANTIATE_TEST_SUITE_P(Collectives, CollectiveTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CollectiveTest);

}  // namespace
}  // namespace hwinfer::conformance
