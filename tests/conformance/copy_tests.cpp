// copy_tests.cpp — conformance of H2D, D2H and D2D copies: odd sizes (1, 3, 4, 4097, 1 MiB + 13)
// at odd offsets (0, 1, 7, 63) in both memory kinds, with the destination poisoned first and the
// guard bands around the copied range checked untouched; size-0 copies are no-ops; ranges outside
// a buffer (including offset + size overflowing 64 bits) are OUT_OF_RANGE at enqueue and write
// nothing. Must not rely on mapping: everything is observed through copies.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "conformance_fixture.h"

namespace hwinfer::conformance {
namespace {

using CopyTest = ConformanceTest;

const uint64_t kSizes[] = {1, 3, 4, 4097, (1u << 20) + 13};
const uint64_t kOffsets[] = {0, 1, 7, 63};
constexpr uint64_t kGuard = 64;  // poisoned bytes after every destination range
const MemoryKind kKinds[] = {MemoryKind::kDevice, MemoryKind::kHostVisible};

std::string Describe(const char* what, uint64_t size, uint64_t offset, MemoryKind kind) {
  return std::string(what) + " of " + std::to_string(size) + " bytes at offset " +
         std::to_string(offset) + (kind == MemoryKind::kDevice ? " (device" : " (host-visible") +
         " memory)";
}

// Checks |image| (a whole destination buffer) holds |data| at |offset| and poison elsewhere.
void ExpectPlacedInPoison(const std::vector<uint8_t>& image, const std::vector<uint8_t>& data,
                          uint64_t offset, const std::string& what) {
  ASSERT_GE(image.size(), offset + data.size());
  EXPECT_TRUE(BytesAre(image.data(), offset, kPoisonByte, what + ": guard before"));
  EXPECT_TRUE(BytesEqual(image.data() + offset, data.data(), data.size(), what + ": data"));
  const uint64_t end = offset + data.size();
  EXPECT_TRUE(
      BytesAre(image.data() + end, image.size() - end, kPoisonByte, what + ": guard after"));
}

TEST_P(CopyTest, HostToDeviceAtOddSizesAndOffsets) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (MemoryKind kind : kKinds) {
    for (uint64_t size : kSizes) {
      for (uint64_t offset : kOffsets) {
        const std::string what = Describe("H2D", size, offset, kind);
        ASSERT_OK_AND_ASSIGN(Buffer dst, FilledBuffer(device(), stream(), offset + size + kGuard,
                                                      kPoisonByte, kind));
        // The host source starts at an odd address too.
        std::vector<uint8_t> staging(size + 1);
        const std::vector<uint8_t> data = RandomBytes(size, rng);
        std::copy(data.begin(), data.end(), staging.begin() + 1);
        ASSERT_OK(stream().CopyH2D(staging.data() + 1, dst, offset, size));
        ASSERT_OK(stream().Synchronize());
        ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> image, Download(stream(), dst));
        ExpectPlacedInPoison(image, data, offset, what);
        if (HasFailure()) return;  // the first broken combination is enough to show
      }
    }
  }
}

TEST_P(CopyTest, DeviceToHostAtOddSizesAndOffsets) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (MemoryKind kind : kKinds) {
    for (uint64_t size : kSizes) {
      for (uint64_t offset : kOffsets) {
        const std::string what = Describe("D2H", size, offset, kind);
        const std::vector<uint8_t> source = RandomBytes(offset + size + kGuard, rng);
        ASSERT_OK_AND_ASSIGN(Buffer src, device().Allocate(source.size(), kind));
        ASSERT_OK(Upload(stream(), src, source));
        // Host destination: kGuard + 1 poisoned bytes, the range (odd address), kGuard poisoned.
        std::vector<uint8_t> host(kGuard + 1 + size + kGuard, kPoisonByte);
        ASSERT_OK(stream().CopyD2H(src, offset, host.data() + kGuard + 1, size));
        ASSERT_OK(stream().Synchronize());
        const std::vector<uint8_t> expected(source.begin() + static_cast<ptrdiff_t>(offset),
                                            source.begin() + static_cast<ptrdiff_t>(offset + size));
        ExpectPlacedInPoison(host, expected, kGuard + 1, what);
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(CopyTest, DeviceToDeviceAtOddSizesAndOffsets) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (MemoryKind src_kind : kKinds) {
    for (MemoryKind dst_kind : kKinds) {
      for (uint64_t size : kSizes) {
        for (size_t o = 0; o < std::size(kOffsets); ++o) {
          const uint64_t src_offset = kOffsets[o];
          const uint64_t dst_offset = kOffsets[(o + 1) % std::size(kOffsets)];
          const std::string what =
              Describe("D2D", size, dst_offset, dst_kind) + " from offset " +
              std::to_string(src_offset) +
              (src_kind == MemoryKind::kDevice ? " of device memory" : " of host-visible memory");
          const std::vector<uint8_t> source = RandomBytes(src_offset + size + kGuard, rng);
          ASSERT_OK_AND_ASSIGN(Buffer src, device().Allocate(source.size(), src_kind));
          ASSERT_OK(Upload(stream(), src, source));
          ASSERT_OK_AND_ASSIGN(
              Buffer dst,
              FilledBuffer(device(), stream(), dst_offset + size + kGuard, kPoisonByte, dst_kind));
          ASSERT_OK(stream().CopyD2D(src, src_offset, dst, dst_offset, size));
          ASSERT_OK(stream().Synchronize());
          ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> image, Download(stream(), dst));
          const std::vector<uint8_t> expected(
              source.begin() + static_cast<ptrdiff_t>(src_offset),
              source.begin() + static_cast<ptrdiff_t>(src_offset + size));
          ExpectPlacedInPoison(image, expected, dst_offset, what);
          // The source is read, never written.
          ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> source_after, Download(stream(), src));
          EXPECT_TRUE(BytesEqual(source_after.data(), source.data(), source.size(),
                                 what + ": source after the copy"));
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Source and destination may be the same buffer when the ranges do not overlap.
TEST_P(CopyTest, DeviceToDeviceWithinOneBuffer) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  constexpr uint64_t kSize = 4097, kFrom = 7, kTo = 4097 + 63;
  std::vector<uint8_t> expected = RandomBytes(kTo + kSize + kGuard, rng);
  ASSERT_OK_AND_ASSIGN(Buffer buffer, device().Allocate(expected.size()));
  ASSERT_OK(Upload(stream(), buffer, expected));
  ASSERT_OK(stream().CopyD2D(buffer, kFrom, buffer, kTo, kSize));
  ASSERT_OK(stream().Synchronize());
  std::copy(expected.begin() + kFrom, expected.begin() + kFrom + kSize, expected.begin() + kTo);
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> image, Download(stream(), buffer));
  EXPECT_TRUE(BytesEqual(image.data(), expected.data(), image.size(), "buffer after the copy"));
}

TEST_P(CopyTest, ZeroSizeCopiesAreNoOps) {
  ASSERT_OK_AND_ASSIGN(Buffer a, FilledBuffer(device(), stream(), 64, kPoisonByte));
  ASSERT_OK_AND_ASSIGN(Buffer b, FilledBuffer(device(), stream(), 64, kPoisonByte));
  std::vector<uint8_t> host(64, 0x11);
  SyncOnExit drain(stream());
  for (uint64_t offset : {0ull, 5ull}) {
    EXPECT_OK(stream().CopyH2D(host.data(), a, offset, 0));
    EXPECT_OK(stream().CopyD2H(a, offset, host.data(), 0));
    EXPECT_OK(stream().CopyD2D(a, offset, b, offset, 0));
  }
  ASSERT_OK(stream().Synchronize());
  EXPECT_TRUE(BytesAre(host.data(), host.size(), 0x11, "host memory after 0-byte D2H copies"));
  for (const Buffer* buffer : {&a, &b}) {
    ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> image, Download(stream(), *buffer));
    EXPECT_TRUE(BytesAre(image.data(), image.size(), kPoisonByte, "buffer after 0-byte copies"));
  }
}

// [offset, offset + size) outside the buffer is OUT_OF_RANGE when the copy is enqueued, writes
// nothing, and leaves the stream usable.
TEST_P(CopyTest, OutOfRangeCopiesAreRejected) {
  constexpr uint64_t kSize = 4096;
  ASSERT_OK_AND_ASSIGN(Buffer a, FilledBuffer(device(), stream(), kSize, kPoisonByte));
  ASSERT_OK_AND_ASSIGN(Buffer b, FilledBuffer(device(), stream(), kSize, kPoisonByte));
  std::vector<uint8_t> host(2 * kSize, 0x11);
  SyncOnExit drain(stream());
  struct Range {
    uint64_t offset, size;
  };
  const Range bad[] = {
      {kSize - 3, 4},            // one byte past the end
      {0, kSize + 1},            // longer than the buffer
      {kSize, 1},                // starts at the end
      {kSize + 100, 1},          // starts past the end
      {UINT64_MAX, 2},           // offset + size wraps around to 1
      {1, UINT64_MAX},           // so does this
      {1ull << 63, 1ull << 63},  // and this, to 0
  };
  for (const Range& range : bad) {
    SCOPED_TRACE(testing::Message() << "offset " << range.offset << ", size " << range.size
                                    << ", buffer " << kSize << " bytes");
    // Copies larger than the host memory are never enqueued by a conforming plugin; the host
    // pointer is only dereferenced if the range check is missing.
    Status h2d = stream().CopyH2D(host.data(), a, range.offset, range.size);
    EXPECT_EQ(h2d.code(), StatusCode::kOutOfRange) << "H2D: " << h2d.ToString();
    Status d2h = stream().CopyD2H(a, range.offset, host.data(), range.size);
    EXPECT_EQ(d2h.code(), StatusCode::kOutOfRange) << "D2H: " << d2h.ToString();
    Status d2d_src = stream().CopyD2D(a, range.offset, b, 0, range.size);
    EXPECT_EQ(d2d_src.code(), StatusCode::kOutOfRange)
        << "D2D (source range): " << d2d_src.ToString();
    Status d2d_dst = stream().CopyD2D(a, 0, b, range.offset, range.size);
    EXPECT_EQ(d2d_dst.code(), StatusCode::kOutOfRange)
        << "D2D (destination range): " << d2d_dst.ToString();
    if (testing::Test::HasFailure()) break;  // one broken range check is enough to show
  }
  EXPECT_OK(stream().Synchronize());
  EXPECT_TRUE(BytesAre(host.data(), host.size(), 0x11, "host memory after rejected D2H copies"));
  for (const Buffer* buffer : {&a, &b}) {
    ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> image, Download(stream(), *buffer));
    EXPECT_TRUE(BytesAre(image.data(), image.size(), kPoisonByte, "buffer after rejected copies"));
  }
}

INSTANTIATE_TEST_SUITE_P(Copies, CopyTest, testing::ValuesIn(BackendParams()), BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CopyTest);

}  // namespace
}  // namespace hwinfer::conformance
