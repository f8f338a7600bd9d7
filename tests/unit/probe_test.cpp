// probe_test.cpp — the measured-peak probe (hwinfer/probe.h): on the CPU backend every default
// weight dtype's matmul is timed through the kernel the executor issues for it (gemm or
// matmul_quantized, k in whole blocks); on the simulated backend, whose clock prices each kernel at
// the spec figure of its compute dtype, each dtype's probe lands on exactly its own figure (so the
// probe really runs that dtype's work); a dtype that cannot run is "not measured" with the reason
// and never fails the others. Small sizes: checks, not benchmarks.
#include "hwinfer/probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "hwinfer/plugin_loader.h"
#include "hwinfer/registry.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<Device> OpenCpu() {
  auto registry = Registry::FromSearchPaths({HWINFER_PLUGIN_BUILD_DIR});
  EXPECT_TRUE(registry.ok()) << registry.status().ToString();
  if (!registry.ok()) return nullptr;
  auto found = registry->Find("cpu:0");
  EXPECT_TRUE(found.ok()) << found.status().ToString();
  if (!found.ok()) return nullptr;
  auto device = registry->Open(**found);
  EXPECT_TRUE(device.ok()) << device.status().ToString();
  return device.ok() ? *device : nullptr;
}

ProbeOptions SmallProbe() {
  ProbeOptions options;
  options.bandwidth_bytes = 4 << 20;
  options.bandwidth_iterations = 1;
  options.gemm_size = 64;
  options.repetitions = 3;
  return options;
}

TEST(Probe, CpuMeasuresBandwidthAndTheMatmulOfEveryDefaultDtype) {
  std::shared_ptr<Device> device = OpenCpu();
  ASSERT_NE(device, nullptr);
  auto result = ProbeDevice(device, SmallProbe());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->read_bandwidth.measured);
  EXPECT_GT(result->read_bandwidth.value, 0);
  EXPECT_EQ(result->read_bandwidth.samples.size(), 3u);
  EXPECT_GT(result->copy_bandwidth.value, 0);

  const std::vector<uint32_t> dtypes = {HWINFER_DTYPE_F32,  HWINFER_DTYPE_F16,  HWINFER_DTYPE_BF16,
                                        HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0, HWINFER_DTYPE_Q4_K};
  EXPECT_EQ(DefaultMatmulProbeDtypes(), dtypes);
  ASSERT_EQ(result->matmul.size(), dtypes.size());
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const MatmulPeak& peak = result->matmul[i];
    SCOPED_TRACE(DtypeName(dtypes[i]));
    EXPECT_EQ(peak.weight_dtype, dtypes[i]);
    EXPECT_TRUE(peak.flops.measured) << peak.flops.reason;
    EXPECT_GT(peak.flops.value, 0);
    EXPECT_EQ(peak.flops.samples.size(), 3u);
    EXPECT_EQ(result->Matmul(dtypes[i]), &peak);
    // The kernel the executor issues for these weights, at a prefill shape.
    const bool plain = i < 3;
    EXPECT_EQ(peak.kernel, plain ? HWINFER_KERNEL_GEMM : HWINFER_KERNEL_MATMUL_QUANTIZED);
    EXPECT_EQ(peak.m, 64);
    EXPECT_EQ(peak.n, 64);
  }
  // k in whole blocks: 64 for the plain and 32-value types, 256 for a K-quant's super-block.
  EXPECT_EQ(result->Matmul(HWINFER_DTYPE_F32)->k, 64);
  EXPECT_EQ(result->Matmul(HWINFER_DTYPE_Q8_0)->k, 64);
  EXPECT_EQ(result->Matmul(HWINFER_DTYPE_Q4_K)->k, 256);
  EXPECT_EQ(result->Matmul(HWINFER_DTYPE_Q6_K), nullptr);  // not probed
}

TEST(Probe, ADtypeThatCannotRunIsNotMeasuredAndTheOthersStillAre) {
  std::shared_ptr<Device> device = OpenCpu();
  ASSERT_NE(device, nullptr);
  ProbeOptions options = SmallProbe();
  options.matmul_dtypes = {HWINFER_DTYPE_I32, HWINFER_DTYPE_Q8_0};
  auto result = ProbeDevice(device, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->matmul.size(), 2u);
  EXPECT_FALSE(result->matmul[0].flops.measured);
  EXPECT_EQ(result->matmul[0].flops.value, 0);
  EXPECT_THAT(result->matmul[0].flops.reason, HasSubstr("not a weight dtype: i32"));
  EXPECT_TRUE(result->matmul[1].flops.measured) << result->matmul[1].flops.reason;
}

// A simulated device whose spec FLOP/s differ per dtype (f32 1, f16 2, bf16 4, int8 8 TFLOP/s)
// and whose memory is fast enough that a 512^3 matmul is compute-bound at every one of them.
std::shared_ptr<Device> OpenSimWithDistinctPeaks() {
  const std::string path =
      ::testing::TempDir() + "/probe_distinct_peaks_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream file(path);
    file << "name: Distinct Peaks\npeak_bandwidth_gb_per_s: 1000\n"
            "peak_tflops:\n  f32: 1\n  f16: 2\n  bf16: 4\n  int8: 8\n";
  }
  auto plugin =
      Plugin::Load(std::string(HWINFER_PLUGIN_BUILD_DIR) + "/hwinfer-sim.so", {{"hardware", path}});
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  if (!plugin.ok()) return nullptr;
  auto device = (*plugin)->OpenDevice(0);
  EXPECT_TRUE(device.ok()) << device.status().ToString();
  return device.ok() ? *device : nullptr;
}

TEST(Probe, EachDtypesPeakIsTheFigureOfTheWorkThatDtypeDoes) {
  std::shared_ptr<Device> device = OpenSimWithDistinctPeaks();
  ASSERT_NE(device, nullptr);
  ProbeOptions options;
  options.gemm_size = 512;
  options.repetitions = 1;
  // 2 * 512^3 FLOP against at most 3 MiB of operands at 1000 GB/s (3 us): the compute time
  // (33.5 us at 8 TFLOP/s and up) decides, so each probe reads back its dtype's spec figure.
  const std::pair<uint32_t, double> expected[] = {
      {HWINFER_DTYPE_F32, 1e12},  {HWINFER_DTYPE_F16, 2e12},  {HWINFER_DTYPE_BF16, 4e12},
      {HWINFER_DTYPE_Q8_0, 8e12}, {HWINFER_DTYPE_Q4_0, 8e12}, {HWINFER_DTYPE_Q4_K, 8e12},
      {HWINFER_DTYPE_Q6_K, 8e12}};
  for (const auto& [dtype, flops] : expected) {
    const MatmulPeak peak = MeasureMatmulPeak(device, dtype, options);
    ASSERT_TRUE(peak.flops.measured) << DtypeName(dtype) << ": " << peak.flops.reason;
    EXPECT_NEAR(peak.flops.value / flops, 1.0, 1e-3)
        << DtypeName(dtype) << ": " << peak.flops.value << " FLOP/s";
  }
}

}  // namespace
}  // namespace hwinfer
