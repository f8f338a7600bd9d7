// probe_tests.cpp — conformance of the bandwidth-probe kernel: READ, COPY and WRITE each give a
// positive, finite rate through hwinfer::MeasureBandwidth (small sizes: this is a check, not a
// benchmark); a COPY probe really copies src to dst; every probe stays inside its views. Must not
// judge how fast a device is.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "conformance_fixture.h"
#include "hwinfer/probe.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer::conformance {
namespace {

using ProbeTest = ConformanceTest;

const char* ModeName(uint32_t mode) {
  switch (mode) {
    case HWINFER_PROBE_READ:
      return "READ";
    case HWINFER_PROBE_COPY:
      return "COPY";
    case HWINFER_PROBE_WRITE:
      return "WRITE";
    default:
      return "?";
  }
}

void ExpectPositiveRate(const std::shared_ptr<Device>& device, uint32_t mode) {
  ProbeOptions options;
  options.bandwidth_bytes = 1u << 20;
  options.bandwidth_iterations = 2;
  options.repetitions = 3;
  auto measured = MeasureBandwidth(device, mode, options);
  ASSERT_TRUE(measured.ok()) << ModeName(mode) << " probe: " << measured.status().ToString();
  if (!measured->measured) {
    GTEST_SKIP() << device->id() << " does not support the " << ModeName(mode)
                 << " bandwidth probe: " << measured->reason;
  }
  EXPECT_TRUE(std::isfinite(measured->value) && measured->value > 0)
      << ModeName(mode) << " rate " << measured->value << " bytes/s";
  ASSERT_EQ(measured->samples.size(), 3u);
  for (double sample : measured->samples) {
    EXPECT_TRUE(std::isfinite(sample) && sample > 0) << ModeName(mode) << " sample " << sample;
  }
}

TEST_P(ProbeTest, ReadBandwidthIsPositive) {
  ExpectPositiveRate(shared_device(), HWINFER_PROBE_READ);
}
TEST_P(ProbeTest, CopyBandwidthIsPositive) {
  ExpectPositiveRate(shared_device(), HWINFER_PROBE_COPY);
}
TEST_P(ProbeTest, WriteBandwidthIsPositive) {
  ExpectPositiveRate(shared_device(), HWINFER_PROBE_WRITE);
}

// One probe launch over views that sit inside larger buffers: kFront poisoned bytes before each
// view and kBack after, all of which must stay untouched.
constexpr uint64_t kFront = 64;
constexpr uint64_t kBack = 64;
constexpr uint64_t kProbeBytes = 65536 + 13;

struct ProbeBuffers {
  Buffer src, dst, sink;
  std::vector<uint8_t> src_image;  // what src holds (random data inside poison)
};

hwinfer_bandwidth_probe_desc ProbeDesc(uint32_t mode, uint32_t iterations,
                                       const ProbeBuffers& buffers) {
  hwinfer_bandwidth_probe_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_BANDWIDTH_PROBE;
  desc.mode = mode;
  desc.iterations = iterations;
  desc.size_bytes = kProbeBytes;
  const auto size = static_cast<int64_t>(kProbeBytes);
  desc.src = mode == HWINFER_PROBE_WRITE
                 ? NoView()
                 : ContiguousView(buffers.src, kFront, HWINFER_DTYPE_I8, {size});
  desc.dst = mode == HWINFER_PROBE_READ
                 ? NoView()
                 : ContiguousView(buffers.dst, kFront, HWINFER_DTYPE_I8, {size});
  desc.sink = ContiguousView(buffers.sink, kFront, HWINFER_DTYPE_I8, {64});
  return desc;
}

// Launches |mode| (|iterations| passes) and checks: src unchanged; the guards of dst and sink
// untouched; for COPY, dst == src; for READ, dst (not given) untouched.
void RunProbeAndCheckViews(Device& device, Stream& stream, uint32_t mode, uint32_t iterations) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed << ", " << ModeName(mode) << " probe, "
                                  << iterations << " iteration(s), " << kProbeBytes << " bytes");
  std::mt19937_64 rng(seed);
  ProbeBuffers buffers;
  const uint64_t total = kFront + kProbeBytes + kBack;
  buffers.src_image.assign(total, kPoisonByte);
  const std::vector<uint8_t> data = RandomBytes(kProbeBytes, rng);
  std::copy(data.begin(), data.end(), buffers.src_image.begin() + kFront);
  ASSERT_OK_AND_ASSIGN(buffers.src, device.Allocate(total));
  ASSERT_OK(Upload(stream, buffers.src, buffers.src_image));
  ASSERT_OK_AND_ASSIGN(buffers.dst, FilledBuffer(device, stream, total, kPoisonByte));
  ASSERT_OK_AND_ASSIGN(buffers.sink,
                       FilledBuffer(device, stream, kFront + 64 + kBack, kPoisonByte));

  const hwinfer_bandwidth_probe_desc desc = ProbeDesc(mode, iterations, buffers);
  if (!RequireKernel(device, AsKernelDesc(desc))) return;
  ASSERT_OK(stream.Launch(AsKernelDesc(desc)));
  ASSERT_OK(stream.Synchronize());

  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> src_after, Download(stream, buffers.src));
  EXPECT_TRUE(BytesEqual(src_after.data(), buffers.src_image.data(), total, "src (read only)"));
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> dst_after, Download(stream, buffers.dst));
  EXPECT_TRUE(BytesAre(dst_after.data(), kFront, kPoisonByte, "guard before dst"));
  EXPECT_TRUE(
      BytesAre(dst_after.data() + kFront + kProbeBytes, kBack, kPoisonByte, "guard after dst"));
  if (mode == HWINFER_PROBE_COPY) {
    EXPECT_TRUE(BytesEqual(dst_after.data() + kFront, data.data(), kProbeBytes, "dst after COPY"));
  } else if (mode == HWINFER_PROBE_READ) {
    EXPECT_TRUE(BytesAre(dst_after.data(), total, kPoisonByte, "dst (not given to READ)"));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> sink_after, Download(stream, buffers.sink));
  EXPECT_TRUE(BytesAre(sink_after.data(), kFront, kPoisonByte, "guard before sink"));
  EXPECT_TRUE(BytesAre(sink_after.data() + kFront + 64, kBack, kPoisonByte, "guard after sink"));
}

TEST_P(ProbeTest, CopyProbeCopiesSrcToDst) {
  RunProbeAndCheckViews(device(), stream(), HWINFER_PROBE_COPY, 1);
  if (HasFatalFailure() || IsSkipped()) return;
  RunProbeAndCheckViews(device(), stream(), HWINFER_PROBE_COPY, 3);
}

TEST_P(ProbeTest, ReadProbeStaysInsideItsViews) {
  RunProbeAndCheckViews(device(), stream(), HWINFER_PROBE_READ, 2);
}

TEST_P(ProbeTest, WriteProbeStaysInsideItsViews) {
  RunProbeAndCheckViews(device(), stream(), HWINFER_PROBE_WRITE, 2);
}

INSTANTIATE_TEST_SUITE_P(Probes, ProbeTest, testing::ValuesIn(BackendParams()), BackendParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ProbeTest);

}  // namespace
}  // namespace hwinfer::conformance
