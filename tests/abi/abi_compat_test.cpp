// abi_compat_test.cpp — the host's side of ABI compatibility within one major:
//   - plugins built against the frozen 1.0, 1.1 and 1.2 headers load and work end to end;
//   - a plugin whose table ends before kernel_query (an older minor) has no kernels, and the host
//     never reads the slots past its struct_size;
//   - a NULL kernel slot is unsupported even when kernel_query claims otherwise, and is never
//     called.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "abi_test_util.h"
#include "hwinfer/device.h"
#include "hwinfer/plugin_loader.h"
#include "hwinfer/probe.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

using abi_test::PluginCallCount;
using abi_test::TestPlugin;
using ::testing::HasSubstr;
using ::testing::Not;

hwinfer_gemm_desc GemmDesc() {
  hwinfer_gemm_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_GEMM;
  desc.m = desc.n = desc.k = 8;
  desc.alpha = 1.0f;
  desc.a = desc.b = desc.c = ContiguousView(nullptr, 0, HWINFER_DTYPE_F32, {8, 8});
  return desc;
}

hwinfer_bandwidth_probe_desc ProbeDesc(uint32_t mode, hwinfer_buffer* src, hwinfer_buffer* dst,
                                       hwinfer_buffer* sink, int64_t size) {
  hwinfer_bandwidth_probe_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.kind = HWINFER_KERNEL_BANDWIDTH_PROBE;
  desc.mode = mode;
  desc.iterations = 2;
  desc.size_bytes = static_cast<uint64_t>(size);
  desc.src = ContiguousView(src, 0, HWINFER_DTYPE_I8, {size});
  desc.dst = ContiguousView(dst, 0, HWINFER_DTYPE_I8, {size});
  desc.sink = ContiguousView(sink, 0, HWINFER_DTYPE_I8, {64});
  return desc;
}

// ---- plugins built against the frozen 1.0, 1.1 and 1.2 headers ---------------------------------

struct FrozenPlugin {
  const char* file;
  const char* name;
  uint32_t abi_minor;
  const char* device_name;
};

class FrozenPluginTest : public ::testing::TestWithParam<FrozenPlugin> {};

TEST_P(FrozenPluginTest, LoadsAndReportsItsVersion) {
  const FrozenPlugin& frozen = GetParam();
  auto plugin = Plugin::Load(TestPlugin(frozen.file));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->name(), frozen.name);
  EXPECT_EQ((*plugin)->identity().abi_major, 1u);
  EXPECT_EQ((*plugin)->identity().abi_minor, frozen.abi_minor);
  auto count = (*plugin)->DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, 1u);
  auto info = (*plugin)->GetDeviceInfo(0);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->name, frozen.device_name);
  EXPECT_EQ(info->device_type, HWINFER_DEVICE_TYPE_VIRTUAL);
  EXPECT_EQ(info->memory_total_bytes, 1ull << 30);
  EXPECT_FALSE(info->has_uuid());
}

TEST_P(FrozenPluginTest, AllocatesCopiesAndRunsTheProbe) {
  auto plugin = Plugin::Load(TestPlugin(GetParam().file));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto device = (*plugin)->OpenDevice(0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  EXPECT_FALSE((*device)->SupportsGraphs());  // 1.0 has no graph slots, 1.1's are NULL here
  auto stream = (*device)->CreateStream();
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();

  constexpr int64_t kSize = 4096 + 3;
  auto src = (*device)->Allocate(kSize);
  auto dst = (*device)->Allocate(kSize);
  auto sink = (*device)->Allocate(64);
  ASSERT_TRUE(src.ok() && dst.ok() && sink.ok());
  std::vector<uint8_t> pattern(kSize);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 13 + 5);
  ASSERT_TRUE(stream->CopyH2D(pattern.data(), *src, 0, kSize).ok());

  // COPY through the kernel slot, then read dst back: the probe moved exactly the bytes.
  auto probe = ProbeDesc(HWINFER_PROBE_COPY, src->handle(), dst->handle(), sink->handle(), kSize);
  auto support = (*device)->QueryKernel(AsKernelDesc(probe));
  ASSERT_TRUE(support.ok()) << support.status().ToString();
  EXPECT_TRUE(support->supported) << support->reason;
  Status launched = stream->Launch(AsKernelDesc(probe));
  ASSERT_TRUE(launched.ok()) << launched.ToString();
  std::vector<uint8_t> back(kSize, 0);
  ASSERT_TRUE(stream->CopyD2H(*dst, 0, back.data(), kSize).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(back, pattern);

  // D2D and an out-of-range copy (the plugin's OUT_OF_RANGE comes back as kOutOfRange).
  ASSERT_TRUE(stream->CopyD2D(*src, 1, *dst, 0, kSize - 1).ok());
  Status out_of_range = stream->CopyH2D(pattern.data(), *src, 8, kSize);
  EXPECT_EQ(out_of_range.code(), StatusCode::kOutOfRange);

  // Events and timing work through 1.0 slots.
  auto start = (*device)->CreateEvent();
  auto end = (*device)->CreateEvent();
  ASSERT_TRUE(start.ok() && end.ok());
  ASSERT_TRUE(start->Record(*stream).ok());
  ASSERT_TRUE(stream->Launch(AsKernelDesc(probe)).ok());
  ASSERT_TRUE(end->Record(*stream).ok());
  ASSERT_TRUE(end->Synchronize().ok());
  auto elapsed = Event::ElapsedNs(*start, *end);
  ASSERT_TRUE(elapsed.ok()) << elapsed.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(
    AbiCompat, FrozenPluginTest,
    ::testing::Values(
        FrozenPlugin{"hwinfer-abi-frozen.so", "abi-frozen", 0, "Frozen 1.0 device"},
        FrozenPlugin{"hwinfer-abi-frozen-1-1.so", "abi-frozen-1-1", 1, "Frozen 1.1 device"},
        FrozenPlugin{"hwinfer-abi-frozen-1-2.so", "abi-frozen-1-2", 2, "Frozen 1.2 device"},
        FrozenPlugin{"hwinfer-abi-frozen-1-3.so", "abi-frozen-1-3", 3, "Frozen 1.3 device"}),
    [](const ::testing::TestParamInfo<FrozenPlugin>& param_info) {
      return "AbiOneDot" + std::to_string(param_info.param.abi_minor);
    });

TEST(AbiCompat, FrozenPluginWithoutImportSlotAnswersUnsupported) {
  auto plugin = Plugin::Load(TestPlugin("hwinfer-abi-frozen.so"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto device = (*plugin)->OpenDevice(0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  std::vector<uint8_t> host(256);
  auto imported = (*device)->ImportHost(host.data(), host.size());
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), StatusCode::kUnsupported);
}

TEST(AbiCompat, FrozenPluginAnswersForKernelsItDoesNotHave) {
  auto plugin = Plugin::Load(TestPlugin("hwinfer-abi-frozen.so"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto device = (*plugin)->OpenDevice(0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  auto gemm = GemmDesc();
  auto support = (*device)->QueryKernel(AsKernelDesc(gemm));
  ASSERT_TRUE(support.ok()) << support.status().ToString();
  EXPECT_FALSE(support->supported);
  EXPECT_THAT(support->reason, Not(::testing::IsEmpty()));
}

// ---- an older minor whose table ends before kernel_query -------------------------------------

TEST(AbiCompat, OldMinorTableHasNoKernelsAndIsNeverReadPastItsSize) {
  const std::string path = TestPlugin("hwinfer-abi-old-minor.so");
  auto plugin = Plugin::Load(path);
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->identity().abi_minor, 0u);
  EXPECT_EQ((*plugin)->api().kernel_query, nullptr);
  EXPECT_EQ((*plugin)->api().kernels, nullptr);
  auto device = (*plugin)->OpenDevice(0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();

  // The plugin's (ignored) kernel_query would claim everything: the host must not ask it.
  auto gemm = GemmDesc();
  auto probe = ProbeDesc(HWINFER_PROBE_READ, nullptr, nullptr, nullptr, 1024);
  for (const hwinfer_kernel_desc* desc : {&AsKernelDesc(gemm), &AsKernelDesc(probe)}) {
    auto support = (*device)->QueryKernel(*desc);
    ASSERT_TRUE(support.ok()) << support.status().ToString();
    EXPECT_FALSE(support->supported) << KernelKindName(desc->kind);
    EXPECT_THAT(support->reason, Not(::testing::IsEmpty())) << KernelKindName(desc->kind);
  }
  auto stream = (*device)->CreateStream();
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  EXPECT_EQ(stream->Launch(AsKernelDesc(probe)).code(), StatusCode::kUnsupported);
  EXPECT_EQ(PluginCallCount(path, HWINFER_KERNEL_GEMM), 0u);
  EXPECT_EQ(PluginCallCount(path, HWINFER_KERNEL_BANDWIDTH_PROBE), 0u);

  // Everything inside its struct_size still works.
  auto buffer = (*device)->Allocate(100);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  std::vector<uint8_t> in(100), out(100, 0);
  std::iota(in.begin(), in.end(), uint8_t{1});
  ASSERT_TRUE(stream->CopyH2D(in.data(), *buffer, 0, in.size()).ok());
  ASSERT_TRUE(stream->CopyD2H(*buffer, 0, out.data(), out.size()).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(in, out);
}

// ---- a NULL kernel slot next to a kernel_query that claims everything ------------------------

TEST(AbiCompat, NullSlotIsUnsupportedAndNeverCalledEvenIfQueryClaimsIt) {
  const std::string path = TestPlugin("hwinfer-abi-null-slot.so");
  auto plugin = Plugin::Load(path);
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  ASSERT_EQ((*plugin)->kernels().gemm, nullptr);
  auto device = (*plugin)->OpenDevice(0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  auto stream = (*device)->CreateStream();
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();

  auto gemm = GemmDesc();
  auto support = (*device)->QueryKernel(AsKernelDesc(gemm));
  ASSERT_TRUE(support.ok()) << support.status().ToString();
  EXPECT_FALSE(support->supported);
  EXPECT_THAT(support->reason, HasSubstr("gemm"));
  Status launched = stream->Launch(AsKernelDesc(gemm));
  EXPECT_EQ(launched.code(), StatusCode::kUnsupported) << launched.ToString();
  EXPECT_THAT(launched.message(), HasSubstr("gemm"));
  EXPECT_EQ(PluginCallCount(path, HWINFER_KERNEL_GEMM), 0u)
      << "the host called the plugin about a kernel whose slot is NULL";

  // Control: the slot it does fill is queried and launched through the plugin (so the counter
  // really counts).
  const auto probe_calls_before = PluginCallCount(path, HWINFER_KERNEL_BANDWIDTH_PROBE);
  ASSERT_TRUE(probe_calls_before.has_value()) << "the plugin exports no abi_test_call_count";
  auto probe = ProbeDesc(HWINFER_PROBE_WRITE, nullptr, nullptr, nullptr, 256);
  auto probe_support = (*device)->QueryKernel(AsKernelDesc(probe));
  ASSERT_TRUE(probe_support.ok()) << probe_support.status().ToString();
  EXPECT_TRUE(probe_support->supported);
  auto dst = (*device)->Allocate(256);
  ASSERT_TRUE(dst.ok()) << dst.status().ToString();
  probe.dst = ContiguousView(*dst, 0, HWINFER_DTYPE_I8, {256});
  ASSERT_TRUE(stream->Launch(AsKernelDesc(probe)).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(PluginCallCount(path, HWINFER_KERNEL_BANDWIDTH_PROBE), *probe_calls_before + 2u)
      << "one kernel_query and one launch";
  EXPECT_EQ(PluginCallCount(path, HWINFER_KERNEL_GEMM), 0u);
}

// The measured-peak probe on a device without matmul kernels: every dtype is "not measured" with
// the host's reason, the bandwidth is still measured, and the probe as a whole succeeds.
TEST(AbiCompat, ProbeOfADeviceWithoutMatmulKernelsReportsEachDtypeNotMeasured) {
  auto plugin = Plugin::Load(TestPlugin("hwinfer-abi-null-slot.so"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto device = (*plugin)->OpenDevice(0);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  ProbeOptions options;
  options.bandwidth_bytes = 1 << 20;
  options.bandwidth_iterations = 1;
  options.gemm_size = 32;
  options.repetitions = 1;
  auto result = ProbeDevice(*device, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->read_bandwidth.measured) << result->read_bandwidth.reason;
  ASSERT_EQ(result->matmul.size(), DefaultMatmulProbeDtypes().size());
  for (const MatmulPeak& peak : result->matmul) {
    EXPECT_FALSE(peak.flops.measured) << DtypeName(peak.weight_dtype);
    EXPECT_THAT(peak.flops.reason,
                HasSubstr(peak.kernel == HWINFER_KERNEL_GEMM ? "gemm" : "matmul_quantized"))
        << DtypeName(peak.weight_dtype);
  }
}

}  // namespace
}  // namespace hwinfer
