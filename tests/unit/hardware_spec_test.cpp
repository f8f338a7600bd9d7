// hardware_spec_test.cpp — pins configs/hardware/*.yaml loading: every shipped file parses, the
// datasheet figures come out in SI units (bytes/s, FLOP/s, bytes, seconds), and mistakes are
// one-line InvalidArgument errors naming file:line:column, and device names map to the shipped
// files through their match: lists (FindKnownHardware). Nothing here measures hardware.
#include "hwinfer/hardware_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "temp_folder_test.h"

namespace hwinfer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kHardwareDir = std::string(HWINFER_SOURCE_DIR) + "/configs/hardware/";

// Writes |text| to a per-test temp file named |name| and loads it.
class HardwareSpecFileTest : public test::TempFolderTest {
 protected:
  StatusOr<HardwareSpec> Load(const std::string& name, const std::string& text) {
    return LoadHardwareSpec(Write(name, text));
  }
  void ExpectInvalid(const std::string& name, const std::string& text,
                     const std::string& substring) {
    const StatusOr<HardwareSpec> spec = Load(name, text);
    ASSERT_FALSE(spec.ok()) << "expected an error containing: " << substring;
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << spec.status().message();
    EXPECT_THAT(spec.status().message(), HasSubstr(substring));
    EXPECT_EQ(spec.status().message().find('\n'), std::string::npos);
  }
};

TEST(HardwareSpecTest, EveryShippedHardwareFileLoads) {
  int loaded = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kHardwareDir)) {
    if (entry.path().extension() != ".yaml") continue;
    const StatusOr<HardwareSpec> spec = LoadHardwareSpec(entry.path().string());
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    EXPECT_FALSE(spec->name.empty()) << entry.path();
    EXPECT_FALSE(spec->vendor.empty()) << entry.path();
    EXPECT_GT(spec->memory_bytes, 0) << entry.path();
    EXPECT_GT(spec->peak_bandwidth_bytes_per_s, 0) << entry.path();
    EXPECT_GT(spec->peak_flops_f32, 0) << entry.path();
    EXPECT_GE(spec->peak_flops_f16, spec->peak_flops_f32) << entry.path();
    EXPECT_GT(spec->launch_overhead_s, 0) << entry.path();
    ++loaded;
  }
  EXPECT_GE(loaded, 6);
}

struct ShippedSpec {
  const char* file;
  double bandwidth_gb_per_s;
  double f32_tflops;
  double f16_tflops;
  double int8_tops;
  double memory_gib;
  double launch_overhead_us;
};

class ShippedHardwareTest : public ::testing::TestWithParam<ShippedSpec> {};

TEST_P(ShippedHardwareTest, DatasheetFiguresConvertToSiUnits) {
  const ShippedSpec& want = GetParam();
  const StatusOr<HardwareSpec> spec = LoadHardwareSpec(kHardwareDir + want.file);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_DOUBLE_EQ(spec->peak_bandwidth_bytes_per_s, want.bandwidth_gb_per_s * 1e9);
  EXPECT_DOUBLE_EQ(spec->peak_flops_f32, want.f32_tflops * 1e12);
  EXPECT_DOUBLE_EQ(spec->peak_flops_f16, want.f16_tflops * 1e12);
  EXPECT_DOUBLE_EQ(spec->peak_flops_bf16, want.f16_tflops * 1e12);
  EXPECT_DOUBLE_EQ(spec->peak_flops_int8, want.int8_tops * 1e12);
  EXPECT_DOUBLE_EQ(spec->memory_bytes, want.memory_gib * std::pow(2.0, 30));
  EXPECT_DOUBLE_EQ(spec->launch_overhead_s, want.launch_overhead_us * 1e-6);
  EXPECT_EQ(spec->file, kHardwareDir + want.file);
}

INSTANTIATE_TEST_SUITE_P(
    Datasheets, ShippedHardwareTest,
    ::testing::Values(ShippedSpec{"h200.yaml", 4800, 67, 989, 1979, 141, 5},
                      ShippedSpec{"h100-sxm.yaml", 3350, 67, 989, 1979, 80, 5},
                      ShippedSpec{"a100-40gb.yaml", 1555, 19.5, 312, 624, 40, 5},
                      ShippedSpec{"a100-80gb.yaml", 2039, 19.5, 312, 624, 80, 5},
                      ShippedSpec{"mi300x.yaml", 5300, 163.4, 1307.4, 2614.9, 192, 5},
                      ShippedSpec{"generic-cpu.yaml", 51.2, 0.896, 0.896, 1.792, 32, 1}),
    [](const ::testing::TestParamInfo<ShippedSpec>& param_info) {
      std::string name = fs::path(param_info.param.file).stem().string();
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name;
    });

TEST_F(HardwareSpecFileTest, OptionalKeysDefaultToZero) {
  const StatusOr<HardwareSpec> spec =
      Load("min.yaml", "name: Tiny\npeak_bandwidth_gb_per_s: 10\npeak_tflops: {int8: 2}\n");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->name, "Tiny");
  EXPECT_EQ(spec->vendor, "");
  EXPECT_EQ(spec->memory_bytes, 0);
  EXPECT_EQ(spec->peak_flops_f32, 0);
  EXPECT_EQ(spec->peak_flops_f16, 0);
  EXPECT_DOUBLE_EQ(spec->peak_flops_int8, 2e12);
  EXPECT_EQ(spec->launch_overhead_s, 0);
}

TEST_F(HardwareSpecFileTest, InterconnectIsReadAndPricesARingAllReduce) {
  const StatusOr<HardwareSpec> spec =
      Load("link.yaml",
           "name: X\npeak_bandwidth_gb_per_s: 10\npeak_tflops: {f32: 1}\ninterconnect:\n"
           "  kind: nvlink\n  bandwidth_gb_per_s: 400\n  latency_us: 2\n");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const InterconnectSpec& link = spec->interconnect;
  EXPECT_EQ(link.kind, "nvlink");
  EXPECT_DOUBLE_EQ(link.bandwidth_bytes_per_s, 400e9);
  EXPECT_DOUBLE_EQ(link.latency_s, 2e-6);
  // 4 ranks, 8 MB: 2 x 3/4 x 8e6 / 400e9 = 30 us of transfer, 6 hops x 2 us.
  EXPECT_NEAR(link.AllReduceSeconds(4, 8e6), 30e-6 + 12e-6, 1e-12);
  EXPECT_EQ(link.AllReduceSeconds(1, 8e6), 0);                // one rank: nothing to reduce
  EXPECT_EQ(InterconnectSpec{}.AllReduceSeconds(4, 8e6), 0);  // not given
}
TEST_F(HardwareSpecFileTest, BadInterconnectsAreRejectedWithTheirLocation) {
  const std::string head = "name: X\npeak_bandwidth_gb_per_s: 10\npeak_tflops: {f32: 1}\n";
  ExpectInvalid("kind.yaml", head + "interconnect: {kind: carrier-pigeon, bandwidth_gb_per_s: 1}\n",
                "kind.yaml:4:22: 'interconnect.kind' must be one of nvlink, pcie, "
                "infinity_fabric, other; got 'carrier-pigeon'");
  ExpectInvalid("nobw.yaml", head + "interconnect: {kind: pcie}\n",
                "'interconnect' is missing required key 'bandwidth_gb_per_s'");
  ExpectInvalid("slow.yaml", head + "interconnect: {kind: pcie, bandwidth_gb_per_s: 0}\n",
                "'interconnect.bandwidth_gb_per_s' must be a number in [0.1, 100000]");
}
TEST_F(HardwareSpecFileTest, NegativeBandwidthIsRejectedWithItsLocation) {
  ExpectInvalid("neg.yaml",
                "name: X\nvendor: Y\npeak_bandwidth_gb_per_s: -5\npeak_tflops: {f32: 1}\n",
                "neg.yaml:3:26: 'peak_bandwidth_gb_per_s' must be a number in [0.1, 100000] "
                "(GB/s, 1 GB = 1e9 bytes); got '-5'");
}

TEST_F(HardwareSpecFileTest, NonNumericPeakIsRejected) {
  ExpectInvalid("word.yaml", "name: X\npeak_bandwidth_gb_per_s: fast\npeak_tflops: {f32: 1}\n",
                "word.yaml:2:26: 'peak_bandwidth_gb_per_s' must be a number in [0.1, 100000]");
  ExpectInvalid("zero.yaml", "name: X\npeak_bandwidth_gb_per_s: 1\npeak_tflops:\n  f32: 0\n",
                "zero.yaml:4:8: 'peak_tflops.f32' must be a number in [0.001, 100000]");
}

// A unit slip made every one of these an infinite, zero or absurd MBU, a 0-byte device, or a
// simulated clock stuck at 10^13 s.
TEST_F(HardwareSpecFileTest, ValuesOutsideTheirPhysicalRangeAreRejected) {
  const std::string rest = "\npeak_tflops: {f32: 1}\n";
  ExpectInvalid("huge-bw.yaml", "name: X\npeak_bandwidth_gb_per_s: 1e300" + rest,
                "huge-bw.yaml:2:26: 'peak_bandwidth_gb_per_s' must be a number in [0.1, 100000] "
                "(GB/s, 1 GB = 1e9 bytes); got '1e300'");
  ExpectInvalid("tiny-bw.yaml", "name: X\npeak_bandwidth_gb_per_s: 0.001" + rest,
                "'peak_bandwidth_gb_per_s' must be a number in [0.1, 100000]");
  ExpectInvalid("denormal.yaml",
                "name: X\npeak_bandwidth_gb_per_s: 100\npeak_tflops: {f16: 1e-320}\n",
                "'peak_tflops.f16' must be a number in [0.001, 100000]");
  ExpectInvalid("memory.yaml", "name: X\nmemory_gib: 1e300\npeak_bandwidth_gb_per_s: 100" + rest,
                "memory.yaml:2:13: 'memory_gib' must be a number in [0.001, 1048576] (GiB");
  ExpectInvalid("launch.yaml",
                "name: X\npeak_bandwidth_gb_per_s: 100\nlaunch_overhead_us: 1e12" + rest,
                "'launch_overhead_us' must be a number in [0, 1000000] (microseconds); got "
                "'1e12'");
}

TEST_F(HardwareSpecFileTest, MissingNameIsReportedAtTheMap) {
  ExpectInvalid("noname.yaml", "vendor: Y\npeak_bandwidth_gb_per_s: 5\npeak_tflops: {f32: 1}\n",
                "noname.yaml:1:1: hardware spec is missing required key 'name'");
}

TEST_F(HardwareSpecFileTest, NameMustBeAString) {
  ExpectInvalid("listname.yaml",
                "name: [a, b]\npeak_bandwidth_gb_per_s: 5\npeak_tflops: {f32: 1}\n",
                "listname.yaml:1:7: 'name' must be a string; got a list");
}

TEST_F(HardwareSpecFileTest, UnknownKeyIsRejectedWithSuggestion) {
  ExpectInvalid("typo.yaml", "name: X\npeak_bandwith_gb_per_s: 5\npeak_tflops: {f32: 1}\n",
                "typo.yaml:2:1: unknown key 'peak_bandwith_gb_per_s' in hardware spec; did you "
                "mean 'peak_bandwidth_gb_per_s'? expected one of: name, vendor, memory_gib,");
}

TEST_F(HardwareSpecFileTest, UnknownDtypeIsRejectedWithSuggestion) {
  ExpectInvalid("dtype.yaml", "name: X\npeak_bandwidth_gb_per_s: 5\npeak_tflops:\n  fp16: 3\n",
                "dtype.yaml:4:3: unknown key 'fp16' in 'peak_tflops'; did you mean 'f16'? "
                "expected one of: f32, f16, bf16, int8");
}

TEST_F(HardwareSpecFileTest, PeakTflopsNeedsAtLeastOneEntry) {
  ExpectInvalid("empty.yaml", "name: X\npeak_bandwidth_gb_per_s: 5\npeak_tflops: {}\n",
                "empty.yaml:3:14: 'peak_tflops' must list at least one of: f32, f16, bf16, int8");
  ExpectInvalid("scalar.yaml", "name: X\npeak_bandwidth_gb_per_s: 5\npeak_tflops: 100\n",
                "scalar.yaml:3:14: 'peak_tflops' must be a map; got '100'");
}

TEST_F(HardwareSpecFileTest, NegativeLaunchOverheadIsRejected) {
  ExpectInvalid("lo.yaml",
                "name: X\npeak_bandwidth_gb_per_s: 5\npeak_tflops: {f32: 1}\n"
                "launch_overhead_us: -1\n",
                "lo.yaml:4:21: 'launch_overhead_us' must be a number in [0, 1000000] "
                "(microseconds); got '-1'");
}

TEST_F(HardwareSpecFileTest, MalformedYamlIsRejected) {
  ExpectInvalid("broken.yaml", "name: X\npeak_tflops: {f32: 1\n", "broken.yaml:");
  ExpectInvalid("broken2.yaml", "name: X\npeak_tflops: {f32: 1\n", ": malformed YAML: ");
}

TEST(HardwareSpecTest, MissingFileIsNotFound) {
  const StatusOr<HardwareSpec> spec = LoadHardwareSpec("/nonexistent/hw.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(spec.status().message(), "hardware file '/nonexistent/hw.yaml' does not exist");
}

// ---- known hardware by device name (match:) ----------------------------------------------------

// The names CUDA, HIP and Vulkan drivers report map to the right shipped file, and devices
// without a datasheet here (a CPU, lavapipe, an H100 PCIe with other peaks) to none.
TEST(KnownHardwareTest, ShippedFilesMatchTheNamesDriversReport) {
  const std::vector<std::string> dirs = {kHardwareDir};
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"NVIDIA H200", "h200.yaml"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm.yaml"},
      {"NVIDIA A100-SXM4-80GB", "a100-80gb.yaml"},
      {"NVIDIA A100-PCIE-40GB", "a100-40gb.yaml"},
      {"AMD Instinct MI300X", "mi300x.yaml"},
      {"amd instinct mi300x", "mi300x.yaml"},
      {"AMD EPYC 7B13", ""},
      {"llvmpipe (LLVM 15.0.6, 256 bits)", ""},
      {"NVIDIA H100 PCIe", ""}};
  for (const auto& [device, file] : cases) {
    const StatusOr<std::optional<HardwareSpec>> found = FindKnownHardware(device, dirs);
    ASSERT_TRUE(found.ok()) << found.status().message();
    if (file.empty()) {
      EXPECT_FALSE(found->has_value()) << device << " matched " << (*found)->file;
    } else {
      ASSERT_TRUE(found->has_value()) << device << " matched nothing";
      EXPECT_EQ(fs::path((*found)->file).filename(), file) << device;
    }
  }
  const StatusOr<HardwareSpec> h200 = LoadHardwareSpec(kHardwareDir + "h200.yaml");
  ASSERT_TRUE(h200.ok());
  EXPECT_EQ(h200->match, std::vector<std::string>{"H200"});
  EXPECT_TRUE(HardwareMatchesDevice(*h200, "NVIDIA H200 NVL"));
  EXPECT_FALSE(HardwareMatchesDevice(*h200, "NVIDIA H100"));
}

TEST_F(HardwareSpecFileTest, MatchMustBeAListOfStrings) {
  const std::string head = "name: X\npeak_bandwidth_gb_per_s: 1\npeak_tflops: {f32: 1}\n";
  ExpectInvalid("scalar.yaml", head + "match: H200\n", "'match' must be a non-empty list");
  ExpectInvalid("empty.yaml", head + "match: []\n", "'match' must be a non-empty list");
  ExpectInvalid("nested.yaml", head + "match: [[a]]\n", "'match' entries must be non-empty");
}

TEST_F(HardwareSpecFileTest, FindKnownHardwareNamesABrokenFileAndSkipsMissingDirs) {
  ASSERT_TRUE(Load("a-gpu.yaml",
                   "name: A\nmatch: [Gpu-A]\npeak_bandwidth_gb_per_s: 100\npeak_tflops: {f16: 1}\n")
                  .ok());
  const std::vector<std::string> dirs = {(dir_ / "missing").string(), dir_.string()};
  const StatusOr<std::optional<HardwareSpec>> found = FindKnownHardware("Vendor GPU-A 16GB", dirs);
  ASSERT_TRUE(found.ok()) << found.status().message();
  ASSERT_TRUE(found->has_value());
  EXPECT_DOUBLE_EQ((*found)->peak_bandwidth_bytes_per_s, 100e9);
  std::ofstream(dir_ / "b-broken.yaml") << "name: B\npeak_bandwidth_gb_per_s: -1\n";
  const StatusOr<std::optional<HardwareSpec>> broken = FindKnownHardware("other", dirs);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("b-broken.yaml"));
}

}  // namespace
}  // namespace hwinfer
