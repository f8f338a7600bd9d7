// buffer_tests.cpp — conformance of buffer allocation, mapping and freeing: several sizes (1 byte,
// odd sizes, over a MiB) in both memory kinds, map where mappable, size 0 and sizes above the
// device's max_allocation_bytes rejected, and the reported alignment honoured. Must not assume
// any backend's layout beyond what plugin.h promises.
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "conformance_fixture.h"

namespace hwinfer::conformance {
namespace {

using BufferTest = ConformanceTest;

const uint64_t kSizes[] = {1, 3, 64, 4096, 4097, (1u << 20) + 13};

const char* KindName(MemoryKind kind) {
  return kind == MemoryKind::kDevice ? "device" : "host-visible";
}

// Allocates every size in |kind| (all alive at once), fills each with its own random bytes and
// reads each back: the buffers are as large as asked and do not overlap.
void AllocateWriteReadBack(Device& device, Stream& stream, MemoryKind kind) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed << ", memory " << KindName(kind));
  std::mt19937_64 rng(seed);
  std::vector<Buffer> buffers;
  std::vector<std::vector<uint8_t>> contents;
  contents.reserve(std::size(kSizes));
  SyncOnExit drain(stream);
  for (uint64_t size : kSizes) {
    ASSERT_OK_AND_ASSIGN(Buffer buffer, device.Allocate(size, kind));
    EXPECT_NE(buffer.handle(), nullptr) << size << " bytes";
    EXPECT_EQ(buffer.size_bytes(), size);
    EXPECT_EQ(buffer.kind(), kind);
    contents.push_back(RandomBytes(size, rng));
    ASSERT_OK(stream.CopyH2D(contents.back().data(), buffer, 0, size));
    buffers.push_back(std::move(buffer));
  }
  ASSERT_OK(stream.Synchronize());
  for (size_t i = 0; i < buffers.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> back, Download(stream, buffers[i]));
    ASSERT_EQ(back.size(), contents[i].size());
    EXPECT_TRUE(BytesEqual(back.data(), contents[i].data(), back.size(),
                           std::to_string(kSizes[i]) + "-byte buffer read back"));
  }
}

TEST_P(BufferTest, AllocatesDeviceMemoryAtSeveralSizes) {
  AllocateWriteReadBack(device(), stream(), MemoryKind::kDevice);
}

TEST_P(BufferTest, AllocatesHostVisibleMemoryAtSeveralSizes) {
  AllocateWriteReadBack(device(), stream(), MemoryKind::kHostVisible);
}

// Host-visible memory maps; what the host writes through the pointer the device copies out, and
// what the device copies in the host reads through the pointer (after synchronising).
TEST_P(BufferTest, AllocateMapFree) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (uint64_t size : kSizes) {
    SCOPED_TRACE(testing::Message() << size << " bytes");
    ASSERT_OK_AND_ASSIGN(Buffer buffer, device().Allocate(size, MemoryKind::kHostVisible));
    ASSERT_OK_AND_ASSIGN(void* mapped, buffer.Map());
    ASSERT_NE(mapped, nullptr);
    auto* bytes = static_cast<uint8_t*>(mapped);

    const std::vector<uint8_t> written = RandomBytes(size, rng);
    std::memcpy(bytes, written.data(), size);
    ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> copied_out, Download(stream(), buffer));
    EXPECT_TRUE(BytesEqual(copied_out.data(), written.data(), size, "host write, device copy"));

    const std::vector<uint8_t> copied_in = RandomBytes(size, rng);
    ASSERT_OK(Upload(stream(), buffer, copied_in));
    EXPECT_TRUE(BytesEqual(bytes, copied_in.data(), size, "device copy, host read"));

    ASSERT_OK_AND_ASSIGN(void* again, buffer.Map());
    EXPECT_EQ(again, mapped) << "mapping the same buffer twice gave two pointers";
  }
}

// Device memory either maps (devices whose memory is host memory) with the same coherence as
// host-visible memory, or refuses with FAILED_PRECONDITION; nothing else.
TEST_P(BufferTest, MapOfDeviceMemoryWorksOrIsFailedPrecondition) {
  ASSERT_OK_AND_ASSIGN(Buffer buffer, device().Allocate(4097, MemoryKind::kDevice));
  auto mapped = buffer.Map();
  if (!mapped.ok()) {
    EXPECT_EQ(mapped.status().code(), StatusCode::kFailedPrecondition)
        << mapped.status().ToString();
    return;
  }
  ASSERT_NE(*mapped, nullptr);
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> written = RandomBytes(4097, rng);
  std::memcpy(*mapped, written.data(), written.size());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> back, Download(stream(), buffer));
  EXPECT_TRUE(BytesEqual(back.data(), written.data(), back.size(), "mapped device memory"));
}

TEST_P(BufferTest, ZeroSizeAllocationIsInvalidArgument) {
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kHostVisible}) {
    auto buffer = device().Allocate(0, kind);
    ASSERT_FALSE(buffer.ok()) << "a 0-byte " << KindName(kind) << " allocation succeeded";
    EXPECT_EQ(buffer.status().code(), StatusCode::kInvalidArgument) << buffer.status().ToString();
  }
}

TEST_P(BufferTest, UnknownMemoryKindIsUnsupported) {
  auto buffer = device().Allocate(64, static_cast<MemoryKind>(0x7fffffffu));
  ASSERT_FALSE(buffer.ok()) << "an allocation of an unknown memory kind succeeded";
  EXPECT_EQ(buffer.status().code(), StatusCode::kUnsupported) << buffer.status().ToString();
}

// The memory the device reports free is known (a device with memory but "0 bytes free" before the
// suite has allocated anything misleads every user sizing a KV cache) and never more than total.
TEST_P(BufferTest, ReportsFreeMemoryWithinTotal) {
  const DeviceInfo& reported = info();
  if (reported.memory_total_bytes == 0) GTEST_SKIP() << backend().label() << " reports no memory";
  EXPECT_GT(reported.memory_free_bytes, 0u) << "of " << reported.memory_total_bytes << " total";
  EXPECT_LE(reported.memory_free_bytes, reported.memory_total_bytes);
}

TEST_P(BufferTest, AllocationAboveMaxAllocationIsRejected) {
  const uint64_t max_bytes = info().max_allocation_bytes;
  if (max_bytes == 0 || max_bytes == UINT64_MAX) {
    GTEST_SKIP() << backend().label() << " reports no max_allocation_bytes";
  }
  auto buffer = device().Allocate(max_bytes + 1, MemoryKind::kDevice);
  ASSERT_FALSE(buffer.ok()) << "allocating max_allocation_bytes + 1 (" << max_bytes + 1
                            << ") succeeded";
  EXPECT_EQ(buffer.status().code(), StatusCode::kOutOfMemory) << buffer.status().ToString();
}

// Every buffer is aligned to DeviceInfo::alignment_bytes (a power of two). Observable through
// Map(), so this checks every buffer that maps, in both kinds, interleaving odd sizes so that a
// bump allocator that forgot to round up would be caught.
TEST_P(BufferTest, AllocationsHonourReportedAlignment) {
  const uint64_t alignment = info().alignment_bytes;
  if (alignment == 0) GTEST_SKIP() << backend().label() << " reports alignment_bytes 0 (unknown)";
  ASSERT_EQ(alignment & (alignment - 1), 0u)
      << "alignment_bytes " << alignment << " is not a power of two";
  std::vector<Buffer> buffers;
  int checked = 0;
  for (int round = 0; round < 4; ++round) {
    for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kHostVisible}) {
      for (uint64_t size : {1ull, 3ull, 13ull, 4097ull}) {
        ASSERT_OK_AND_ASSIGN(Buffer buffer, device().Allocate(size, kind));
        auto mapped = buffer.Map();
        if (mapped.ok()) {
          const auto address = reinterpret_cast<uintptr_t>(*mapped);
          EXPECT_EQ(address % alignment, 0u)
              << KindName(kind) << " buffer of " << size << " bytes at " << *mapped
              << " is not aligned to " << alignment;
          ++checked;
        }
        buffers.push_back(std::move(buffer));
      }
    }
  }
  if (checked == 0) {
    GTEST_SKIP() << "no buffer of " << backend().label()
                 << " maps, so alignment cannot be observed from the host";
  }
}

INSTANTIATE_TEST_SUITE_P(Buffers, BufferTest, testing::ValuesIn(BackendParams()), BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BufferTest);

}  // namespace
}  // namespace hwinfer::conformance
