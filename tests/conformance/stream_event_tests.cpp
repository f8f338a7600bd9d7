// stream_event_tests.cpp — conformance of stream ordering and events: work on one stream runs in
// order; work after a Wait on an event recorded on another stream observes that stream's writes;
// D2H results land by an event's or a waiting stream's synchronize; event query and synchronize;
// device timestamps that are positive and monotone. Must not use
// host-side sleeps or timing to "make" ordering happen: every check follows from the ABI's rules.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "conformance_fixture.h"

namespace hwinfer::conformance {
namespace {

using StreamEventTest = ConformanceTest;

// Big enough that a copy takes a while on any device, so missing waits show up as races.
uint64_t BigCopyBytes(const DeviceInfo& info) {
  uint64_t bytes = 32ull << 20;
  if (info.max_allocation_bytes != 0) bytes = std::min(bytes, info.max_allocation_bytes / 4);
  if (info.memory_total_bytes != 0) bytes = std::min(bytes, info.memory_total_bytes / 16);
  return std::max<uint64_t>(bytes, 1ull << 20);
}

// Everything is enqueued before the only synchronize: H2D x -> a, D2D a -> b, H2D y -> a,
// D2H b -> host. In order, host == x; any reordering shows y or stale bytes.
TEST_P(StreamEventTest, WorkOnOneStreamRunsInOrder) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  constexpr uint64_t kSize = (1u << 20) + 13;
  const std::vector<uint8_t> x = RandomBytes(kSize, rng);
  const std::vector<uint8_t> y = RandomBytes(kSize, rng);
  ASSERT_OK_AND_ASSIGN(Buffer a, device().Allocate(kSize));
  ASSERT_OK_AND_ASSIGN(Buffer b, device().Allocate(kSize));
  std::vector<uint8_t> host(kSize, kPoisonByte);
  SyncOnExit drain(stream());
  ASSERT_OK(stream().CopyH2D(x.data(), a, 0, kSize));
  ASSERT_OK(stream().CopyD2D(a, 0, b, 0, kSize));
  ASSERT_OK(stream().CopyH2D(y.data(), a, 0, kSize));
  ASSERT_OK(stream().CopyD2H(b, 0, host.data(), kSize));
  ASSERT_OK(stream().Synchronize());
  EXPECT_TRUE(BytesEqual(host.data(), x.data(), kSize, "b read back after in-order copies"));
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> a_image, Download(stream(), a));
  EXPECT_TRUE(BytesEqual(a_image.data(), y.data(), kSize, "a after the last H2D"));
}

// Stream A: poison dst, fill src, big D2D src -> dst, record E. Stream B: wait E, D2H dst. B must
// see all of src. Repeated with fresh data, with no host synchronisation in between.
TEST_P(StreamEventTest, WaitOnEventOrdersWorkAcrossStreams) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const uint64_t size = BigCopyBytes(info());
  ASSERT_OK_AND_ASSIGN(Stream other, device().CreateStream());
  ASSERT_OK_AND_ASSIGN(Event written, device().CreateEvent());
  ASSERT_OK_AND_ASSIGN(Buffer src, device().Allocate(size));
  ASSERT_OK_AND_ASSIGN(Buffer dst, device().Allocate(size));
  const std::vector<uint8_t> poison(size, kPoisonByte);
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(testing::Message() << "round " << round << ", " << size << " bytes");
    const std::vector<uint8_t> data = RandomBytes(size, rng);
    std::vector<uint8_t> host(size, 0);
    SyncOnExit drain(stream()), drain_other(other);
    ASSERT_OK(stream().CopyH2D(poison.data(), dst, 0, size));
    ASSERT_OK(stream().CopyH2D(data.data(), src, 0, size));
    ASSERT_OK(stream().CopyD2D(src, 0, dst, 0, size));
    ASSERT_OK(written.Record(stream()));
    ASSERT_OK(other.Wait(written));
    ASSERT_OK(other.CopyD2H(dst, 0, host.data(), size));
    ASSERT_OK(other.Synchronize());
    EXPECT_TRUE(BytesEqual(host.data(), data.data(), size, "dst read on stream B after the wait"));
    ASSERT_OK(stream().Synchronize());  // |data| and |poison| must outlive A's copies
  }
}

// D2H is asynchronous on some backends; the host may read its destination after synchronizing an
// event recorded after the copy, or another stream that waited on such an event. A: H2D x -> a,
// D2H a -> first, H2D y -> a (after the copy in stream order), record E; E.Synchronize() ->
// first == x. Then A: D2H a -> second, record E; B waits E; B.Synchronize() -> second == y.
TEST_P(StreamEventTest, DeviceToHostLandsByEventOrWaitingStreamSynchronize) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const uint64_t size = BigCopyBytes(info()) + 5;
  const std::vector<uint8_t> x = RandomBytes(size, rng);
  const std::vector<uint8_t> y = RandomBytes(size, rng);
  ASSERT_OK_AND_ASSIGN(Stream other, device().CreateStream());
  ASSERT_OK_AND_ASSIGN(Event copied, device().CreateEvent());
  ASSERT_OK_AND_ASSIGN(Buffer a, device().Allocate(size));
  std::vector<uint8_t> first(size, kPoisonByte), second(size, kPoisonByte);
  SyncOnExit drain(stream()), drain_other(other);
  ASSERT_OK(stream().CopyH2D(x.data(), a, 0, size));
  ASSERT_OK(stream().CopyD2H(a, 0, first.data(), size));
  ASSERT_OK(stream().CopyH2D(y.data(), a, 0, size));
  ASSERT_OK(copied.Record(stream()));
  ASSERT_OK(copied.Synchronize());
  EXPECT_TRUE(BytesEqual(first.data(), x.data(), size, "D2H read after its event synchronized"));

  ASSERT_OK(stream().CopyD2H(a, 0, second.data(), size));
  ASSERT_OK(copied.Record(stream()));
  ASSERT_OK(other.Wait(copied));
  ASSERT_OK(other.Synchronize());
  EXPECT_TRUE(BytesEqual(second.data(), y.data(), size, "D2H read after a waiting stream synced"));
  ASSERT_OK(stream().Synchronize());
}

TEST_P(StreamEventTest, EventQueryAndSynchronize) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  ASSERT_OK_AND_ASSIGN(Event event, device().CreateEvent());
  ASSERT_OK_AND_ASSIGN(bool complete, event.IsComplete());
  EXPECT_TRUE(complete) << "a never-recorded event must query as complete";
  EXPECT_OK(event.Synchronize());  // and synchronize at once

  const uint64_t size = BigCopyBytes(info());
  const std::vector<uint8_t> data = RandomBytes(size, rng);
  ASSERT_OK_AND_ASSIGN(Buffer src, device().Allocate(size));
  ASSERT_OK_AND_ASSIGN(Buffer dst, FilledBuffer(device(), stream(), size, kPoisonByte));
  SyncOnExit drain(stream());
  ASSERT_OK(stream().CopyH2D(data.data(), src, 0, size));
  ASSERT_OK(stream().CopyD2D(src, 0, dst, 0, size));
  ASSERT_OK(event.Record(stream()));
  ASSERT_OK(event.IsComplete().status());  // either answer, but no error and no blocking
  ASSERT_OK(event.Synchronize());
  ASSERT_OK_AND_ASSIGN(complete, event.IsComplete());
  EXPECT_TRUE(complete) << "the event is not complete after Synchronize()";

  // Synchronize() on the event waited for the copies: another stream, with no wait, sees them.
  ASSERT_OK_AND_ASSIGN(Stream other, device().CreateStream());
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> image, Download(other, dst));
  EXPECT_TRUE(BytesEqual(image.data(), data.data(), size, "dst after the event completed"));
}

TEST_P(StreamEventTest, WaitOnNeverRecordedEventIsNoOp) {
  ASSERT_OK_AND_ASSIGN(Event event, device().CreateEvent());
  ASSERT_OK(stream().Wait(event));
  ASSERT_OK_AND_ASSIGN(Buffer buffer, FilledBuffer(device(), stream(), 4097, 0x3c));
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> image, Download(stream(), buffer));
  EXPECT_TRUE(BytesAre(image.data(), image.size(), 0x3c, "buffer written after the wait"));
}

// e1 -> big copy -> e2 -> big copy -> e3: elapsed(e1, e2) > 0, elapsed(e2, e3) > 0 and
// elapsed(e1, e3) >= both.
TEST_P(StreamEventTest, ElapsedTimeIsPositiveAndMonotone) {
  const uint64_t size = BigCopyBytes(info());
  ASSERT_OK_AND_ASSIGN(Buffer src, FilledBuffer(device(), stream(), size, 0x5a));
  ASSERT_OK_AND_ASSIGN(Buffer dst, device().Allocate(size));
  ASSERT_OK_AND_ASSIGN(Event e1, device().CreateEvent());
  ASSERT_OK_AND_ASSIGN(Event e2, device().CreateEvent());
  ASSERT_OK_AND_ASSIGN(Event e3, device().CreateEvent());
  SyncOnExit drain(stream());
  ASSERT_OK(e1.Record(stream()));
  ASSERT_OK(stream().CopyD2D(src, 0, dst, 0, size));
  ASSERT_OK(e2.Record(stream()));
  ASSERT_OK(stream().CopyD2D(dst, 0, src, 0, size));
  ASSERT_OK(e3.Record(stream()));
  ASSERT_OK(stream().Synchronize());
  ASSERT_OK_AND_ASSIGN(uint64_t t12, Event::ElapsedNs(e1, e2));
  ASSERT_OK_AND_ASSIGN(uint64_t t23, Event::ElapsedNs(e2, e3));
  ASSERT_OK_AND_ASSIGN(uint64_t t13, Event::ElapsedNs(e1, e3));
  EXPECT_GT(t12, 0u) << "a " << size << "-byte copy took no device time";
  EXPECT_GT(t23, 0u) << "a " << size << "-byte copy took no device time";
  EXPECT_GE(t13, t12);
  EXPECT_GE(t13, t23);
  // Timestamps of one stream add up (allowing 1 us of rounding per pair).
  EXPECT_LE(t13, t12 + t23 + 1000) << "t12 " << t12 << " ns, t23 " << t23 << " ns";
}

INSTANTIATE_TEST_SUITE_P(Streams, StreamEventTest, testing::ValuesIn(BackendParams()),
                         BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StreamEventTest);

}  // namespace
}  // namespace hwinfer::conformance
