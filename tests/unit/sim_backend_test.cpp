// sim_backend_test.cpp — the simulated backend (backends/sim, hwinfer-sim.so) loaded through the
// core's Plugin loader and used through the RAII device API: device identity and spec peaks from
// configs/hardware/h100-sxm.yaml, backed vs virtual buffers, out-of-memory messages, the virtual
// clock (a kernel takes exactly its roofline time plus the launch overhead, checked by hand),
// hardware-file errors, and the deterministic pseudo-tokens its fingerprints give, up to a
// LlamaExecutor generating on a sim device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/generate.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/plugin_loader.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

const std::string kSimPlugin = std::string(HWINFER_PLUGIN_BUILD_DIR) + "/hwinfer-sim.so";
const std::string kH100 = std::string(HWINFER_SOURCE_DIR) + "/configs/hardware/h100-sxm.yaml";
constexpr uint64_t kGiB = uint64_t{1} << 30;
// h100-sxm.yaml: 3350 GB/s, 989 TFLOP/s f16, 5 us launch overhead.
constexpr double kBandwidth = 3350e9;
constexpr double kF16Flops = 989e12;
constexpr double kOverheadNs = 5000;

std::shared_ptr<Plugin> LoadSim(OptionMap options = {{"hardware", kH100}}) {
  auto plugin = Plugin::Load(kSimPlugin, options);
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  return plugin.ok() ? *plugin : nullptr;
}

std::shared_ptr<Device> OpenSim(OptionMap options = {{"hardware", kH100}}) {
  std::shared_ptr<Plugin> plugin = LoadSim(std::move(options));
  if (plugin == nullptr) return nullptr;
  auto device = plugin->OpenDevice(0);
  EXPECT_TRUE(device.ok()) << device.status().ToString();
  return device.ok() ? *device : nullptr;
}

TEST(SimBackend, DeviceInfoComesFromTheHardwareFile) {
  std::shared_ptr<Plugin> plugin = LoadSim({{"hardware", kH100}, {"devices", "2"}});
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->name(), "sim");
  ASSERT_EQ(*plugin->DeviceCount(), 2u);
  auto info = plugin->GetDeviceInfo(0);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->device_type, HWINFER_DEVICE_TYPE_VIRTUAL);
  EXPECT_EQ(info->name, "sim: NVIDIA H100 SXM 80GB");
  EXPECT_EQ(info->vendor, "hwinfer-sim");
  EXPECT_EQ(info->memory_total_bytes, 80 * kGiB);
  EXPECT_EQ(info->memory_free_bytes, 80 * kGiB);
  EXPECT_EQ(info->alignment_bytes, 256u);
  EXPECT_DOUBLE_EQ(info->spec_peak_bandwidth_bytes_per_s, kBandwidth);
  EXPECT_DOUBLE_EQ(info->spec_peak_flops_f32, 67e12);
  EXPECT_DOUBLE_EQ(info->spec_peak_flops_f16, kF16Flops);
  EXPECT_DOUBLE_EQ(info->spec_peak_flops_bf16, 989e12);
  EXPECT_DOUBLE_EQ(info->spec_peak_flops_int8, 1979e12);
  // A stable UUID per (hardware, ordinal): the same from a second load, another for ordinal 1.
  EXPECT_TRUE(info->has_uuid());
  EXPECT_EQ(LoadSim()->GetDeviceInfo(0)->uuid, info->uuid);
  EXPECT_NE(plugin->GetDeviceInfo(1)->uuid, info->uuid);
}

TEST(SimBackend, FindsTheDefaultHardwareFileWithoutOptions) {
  std::shared_ptr<Plugin> plugin = LoadSim({});
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->GetDeviceInfo(0)->name, "sim: NVIDIA H100 SXM 80GB");
  EXPECT_THAT(plugin->GetDeviceInfo(0)->driver, HasSubstr("h100-sxm.yaml"));
}

TEST(SimBackend, BadHardwarePathOrOptionIsAnErrorNamingIt) {
  auto missing = Plugin::Load(kSimPlugin, {{"hardware", "/no/such/dir/gpu.yaml"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("/no/such/dir/gpu.yaml"));
  auto unknown = Plugin::Load(kSimPlugin, {{"hardware", kH100}, {"speed", "fast"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown option 'speed'"));
  auto devices = Plugin::Load(kSimPlugin, {{"devices", "0"}});
  ASSERT_FALSE(devices.ok());
  EXPECT_THAT(devices.status().message(), HasSubstr("'devices'"));
}

TEST(SimBackend, SmallBuffersAreBackedAndBigOnesVirtual) {
  std::shared_ptr<Device> device = OpenSim({{"hardware", kH100}, {"backed_limit_mib", "1"}});
  ASSERT_NE(device, nullptr);
  auto stream = device->CreateStream();
  ASSERT_TRUE(stream.ok());

  auto backed = device->Allocate(4096);
  ASSERT_TRUE(backed.ok()) << backed.status().ToString();
  auto mapped = backed->Map();
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  const auto* bytes = static_cast<const uint8_t*>(*mapped);
  EXPECT_TRUE(std::all_of(bytes, bytes + 4096, [](uint8_t b) { return b == 0; }));
  const std::vector<uint8_t> pattern(100, 0xab);
  std::vector<uint8_t> back(100, 0);
  ASSERT_TRUE(stream->CopyH2D(pattern.data(), *backed, 7, 100).ok());
  ASSERT_TRUE(stream->CopyD2H(*backed, 7, back.data(), 100).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  EXPECT_EQ(back, pattern);

  auto big = device->Allocate(2 << 20);  // over backed_limit_mib: no memory behind it
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  auto unmappable = big->Map();
  ASSERT_FALSE(unmappable.ok());
  EXPECT_EQ(unmappable.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(unmappable.status().message(), HasSubstr("virtual"));
  EXPECT_TRUE(stream->CopyH2D(pattern.data(), *big, 1000, 100).ok());  // accepted, ignored
  std::vector<uint8_t> zeros(100, 0xff);
  ASSERT_TRUE(stream->CopyD2H(*big, 1000, zeros.data(), 100).ok());
  EXPECT_TRUE(std::all_of(zeros.begin(), zeros.end(), [](uint8_t b) { return b == 0; }));
  EXPECT_EQ(device->plugin().GetDeviceInfo(0)->memory_free_bytes, 80 * kGiB - 4096 - (2 << 20));
}

TEST(SimBackend, OutOfMemoryNamesTheSizes) {
  std::shared_ptr<Device> device = OpenSim();
  ASSERT_NE(device, nullptr);
  auto most = device->Allocate(60 * kGiB);  // virtual: fine on any host
  ASSERT_TRUE(most.ok()) << most.status().ToString();
  auto more = device->Allocate(30 * kGiB);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().code(), StatusCode::kOutOfMemory);
  EXPECT_THAT(more.status().message(), HasSubstr(std::to_string(30 * kGiB) + " bytes requested"));
  EXPECT_THAT(more.status().message(), HasSubstr(std::to_string(60 * kGiB)));
  EXPECT_THAT(more.status().message(), HasSubstr(std::to_string(80 * kGiB)));
  most = Buffer();  // freed: the bytes come back
  EXPECT_TRUE(device->Allocate(30 * kGiB).ok());
}

hwinfer_gemm_desc GemmF16(const Buffer& a, const Buffer& b, const Buffer& c, int64_t m, int64_t n,
                          int64_t k) {
  hwinfer_gemm_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_GEMM;
  d.m = m;
  d.n = n;
  d.k = k;
  d.b_transposed = 1;
  d.alpha = 1;
  d.a = ContiguousView(a, 0, HWINFER_DTYPE_F16, {m, k});
  d.b = ContiguousView(b, 0, HWINFER_DTYPE_F16, {n, k});
  d.c = ContiguousView(c, 0, HWINFER_DTYPE_F16, {m, n});
  return d;
}

// Virtual ns between two events around |launch| on |stream|.
template <typename Launch>
uint64_t TimeNs(Device& device, Stream& stream, Launch launch) {
  auto start = device.CreateEvent();
  auto end = device.CreateEvent();
  EXPECT_TRUE(start->Record(stream).ok());
  launch();
  EXPECT_TRUE(end->Record(stream).ok());
  auto elapsed = Event::ElapsedNs(*start, *end);
  EXPECT_TRUE(elapsed.ok()) << elapsed.status().ToString();
  return elapsed.ok() ? *elapsed : 0;
}

TEST(SimBackend, AKernelTakesItsRooflineTimePlusTheLaunchOverhead) {
  std::shared_ptr<Device> device = OpenSim({{"hardware", kH100}, {"backed_limit_mib", "1"}});
  ASSERT_NE(device, nullptr);
  auto stream = device->CreateStream();
  ASSERT_TRUE(stream.ok());
  auto a = device->Allocate(4096 * 4096 * 2);
  auto b = device->Allocate(4096 * 4096 * 2);
  auto c = device->Allocate(4096 * 4096 * 2);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());

  // GEMV [1,4096] x [4096,4096] f16: 8192 + 33554432 + 8192 = 33570816 bytes / 3350e9 B/s =
  // 10021.139 ns, against 2 * 4096^2 = 33554432 flops / 989e12 = 33.9 ns: memory-bound,
  // 10021.139 + 5000 = 15021.139 ns, reported as 15021.
  const hwinfer_gemm_desc gemv = GemmF16(*a, *b, *c, 1, 4096, 4096);
  const uint64_t gemv_ns =
      TimeNs(*device, *stream, [&] { ASSERT_TRUE(stream->Launch(AsKernelDesc(gemv)).ok()); });
  EXPECT_EQ(gemv_ns, 15021u);
  EXPECT_EQ(gemv_ns, std::llround(33570816 / kBandwidth * 1e9 + kOverheadNs));

  // GEMM 4096^3 f16: 3 * 33554432 bytes = 30049.6 ns, against 2 * 4096^3 = 137438953472 flops /
  // 989e12 = 138967.6 ns: compute-bound, 143967.6 ns.
  const hwinfer_gemm_desc gemm = GemmF16(*a, *b, *c, 4096, 4096, 4096);
  const uint64_t gemm_ns =
      TimeNs(*device, *stream, [&] { ASSERT_TRUE(stream->Launch(AsKernelDesc(gemm)).ok()); });
  EXPECT_EQ(gemm_ns, std::llround(137438953472.0 / kF16Flops * 1e9 + kOverheadNs));
  EXPECT_EQ(gemm_ns, 143968u);

  // A 1 MB upload: 1e6 / 3350e9 = 298.5 ns + 5000.
  std::vector<uint8_t> host(1000000);
  const uint64_t copy_ns = TimeNs(*device, *stream, [&] {
    ASSERT_TRUE(stream->CopyH2D(host.data(), *a, 0, host.size()).ok());
  });
  EXPECT_EQ(copy_ns, 5299u);
}

TEST(SimBackend, AMinimalHardwareFileGetsDefaultMemoryAndTheF32PeakForEveryDtype) {
  const std::string path =
      ::testing::TempDir() + "/sim_minimal_hardware_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream file(path);
    file << "name: Tiny Accelerator\npeak_bandwidth_gb_per_s: 100\npeak_tflops:\n  f32: 1\n";
  }
  std::shared_ptr<Device> device = OpenSim({{"hardware", path}, {"backed_limit_mib", "1"}});
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->info().name, "sim: Tiny Accelerator");
  EXPECT_EQ(device->info().memory_total_bytes, 80 * kGiB);  // memory_gib absent
  EXPECT_DOUBLE_EQ(device->info().spec_peak_flops_f16, 0);
  auto stream = device->CreateStream();
  auto a = device->Allocate(4096 * 4096 * 2);
  ASSERT_TRUE(stream.ok() && a.ok());
  // f16 GEMM 4096^3 with no f16 peak: 2 * 4096^3 flops / 1e12 (the f32 peak) = 137438953.472 ns,
  // against 3 * 33554432 bytes / 100e9 = 1006632.96 ns; no launch overhead in the file.
  const hwinfer_gemm_desc gemm = GemmF16(*a, *a, *a, 4096, 4096, 4096);
  EXPECT_EQ(TimeNs(*device, *stream, [&] { ASSERT_TRUE(stream->Launch(AsKernelDesc(gemm)).ok()); }),
            137438953u);
}

TEST(SimBackend, WaitingOnAnEventMovesTheOtherStreamsClock) {
  std::shared_ptr<Device> device = OpenSim({{"hardware", kH100}, {"backed_limit_mib", "1"}});
  ASSERT_NE(device, nullptr);
  auto busy = device->CreateStream();
  auto idle = device->CreateStream();
  auto a = device->Allocate(8192);
  auto b = device->Allocate(4096 * 4096 * 2);
  auto c = device->Allocate(8192);
  auto before = device->CreateEvent();
  auto done = device->CreateEvent();
  auto after = device->CreateEvent();
  ASSERT_TRUE(busy.ok() && idle.ok() && a.ok() && b.ok() && c.ok());
  ASSERT_TRUE(before->Record(*idle).ok());
  ASSERT_TRUE(busy->Launch(AsKernelDesc(GemmF16(*a, *b, *c, 1, 4096, 4096))).ok());
  ASSERT_TRUE(done->Record(*busy).ok());
  ASSERT_TRUE(idle->Wait(*done).ok());
  ASSERT_TRUE(after->Record(*idle).ok());
  EXPECT_EQ(*Event::ElapsedNs(*before, *after), 15021u);
  // A stream created now starts at the device clock, not at zero.
  auto late = device->CreateStream();
  auto late_event = device->CreateEvent();
  ASSERT_TRUE(late_event->Record(*late).ok());
  EXPECT_EQ(*Event::ElapsedNs(*before, *late_event), 15021u);
  EXPECT_FALSE(Event::ElapsedNs(*after, *before).ok());
}

TEST(SimBackend, KernelQueryAcceptsWhatTheCpuBackendAccepts) {
  std::shared_ptr<Device> device = OpenSim();
  ASSERT_NE(device, nullptr);
  hwinfer_gemm_desc gemm{};
  gemm.struct_size = sizeof(gemm);
  gemm.kind = HWINFER_KERNEL_GEMM;
  gemm.m = 2;
  gemm.n = 3;
  gemm.k = 4;
  gemm.a = ContiguousView(nullptr, 0, HWINFER_DTYPE_F32, {2, 4});
  gemm.b = ContiguousView(nullptr, 0, HWINFER_DTYPE_BF16, {4, 3});
  gemm.c = ContiguousView(nullptr, 0, HWINFER_DTYPE_F16, {2, 3});
  auto support = device->QueryKernel(AsKernelDesc(gemm));
  ASSERT_TRUE(support.ok()) << support.status().ToString();
  EXPECT_TRUE(support->supported);
  gemm.c.shape[1] = 5;  // malformed: an error, as at enqueue
  EXPECT_EQ(device->QueryKernel(AsKernelDesc(gemm)).status().code(), StatusCode::kInvalidArgument);
  hwinfer_kernel_desc unknown{sizeof(hwinfer_kernel_desc), 999};
  support = device->QueryKernel(unknown);
  ASSERT_TRUE(support.ok());
  EXPECT_FALSE(support->supported);
}

// The sim validates with the CPU backend's checks (sdk/include/hwinfer/kit/kernel_checks.h): the
// same descriptor gets the same answer from both plugins, the plugin's name in the reason aside.
TEST(SimBackend, KernelQueryRejectsWhatTheCpuBackendRejects) {
  std::shared_ptr<Device> sim = OpenSim();
  ASSERT_NE(sim, nullptr);
  auto cpu_plugin = Plugin::Load(std::string(HWINFER_PLUGIN_BUILD_DIR) + "/hwinfer-cpu.so", {});
  ASSERT_TRUE(cpu_plugin.ok()) << cpu_plugin.status().ToString();
  auto cpu = (*cpu_plugin)->OpenDevice(0);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();

  hwinfer_rms_norm_desc strided{};  // x with innermost stride 8: not contiguous
  strided.struct_size = sizeof(strided);
  strided.kind = HWINFER_KERNEL_RMS_NORM;
  strided.n_tokens = 2;
  strided.dim = 4;
  strided.eps = 1e-5f;
  strided.x = ContiguousView(nullptr, 0, HWINFER_DTYPE_F32, {2, 4});
  strided.x.strides_bytes[1] = 8;
  strided.weight = ContiguousView(nullptr, 0, HWINFER_DTYPE_F32, {4});
  strided.out = ContiguousView(nullptr, 0, HWINFER_DTYPE_F32, {2, 4});
  hwinfer_rope_desc rope{};  // an unknown pairing mode
  rope.struct_size = sizeof(rope);
  rope.kind = HWINFER_KERNEL_ROPE;
  rope.n_tokens = 1;
  rope.n_heads = 1;
  rope.head_dim = 4;
  rope.rotary_dim = 4;
  rope.theta_base = 10000;
  rope.mode = 7;
  rope.q = ContiguousView(nullptr, 0, HWINFER_DTYPE_F32, {1, 1, 4});
  rope.positions = ContiguousView(nullptr, 0, HWINFER_DTYPE_I32, {1});
  for (const hwinfer_kernel_desc* desc : {&AsKernelDesc(strided), &AsKernelDesc(rope)}) {
    auto on_sim = sim->QueryKernel(*desc);
    auto on_cpu = (*cpu)->QueryKernel(*desc);
    ASSERT_TRUE(on_sim.ok()) << on_sim.status().ToString();
    ASSERT_TRUE(on_cpu.ok()) << on_cpu.status().ToString();
    EXPECT_FALSE(on_sim->supported);
    EXPECT_FALSE(on_cpu->supported);
    ASSERT_EQ(on_cpu->reason.rfind("cpu ", 0), 0u) << on_cpu->reason;
    std::string as_sim = on_cpu->reason;  // "cpu rope: ... (the cpu backend has ...)"
    for (size_t at = 0; (at = as_sim.find("cpu ", at)) != std::string::npos; at += 4) {
      as_sim.replace(at, 4, "sim ");
    }
    EXPECT_EQ(on_sim->reason, as_sim);
  }
  EXPECT_THAT(sim->QueryKernel(AsKernelDesc(strided))->reason,
              HasSubstr("sim rms_norm: operand x must be contiguous"));

  strided.x.strides_bytes[1] = 4;
  strided.dim = 0;  // malformed: the same error from both
  EXPECT_THAT(sim->QueryKernel(AsKernelDesc(strided)).status().message(),
              HasSubstr("sim rms_norm: n_tokens and dim must be > 0; got n_tokens=2 dim=0"));
  EXPECT_THAT((*cpu)->QueryKernel(AsKernelDesc(strided)).status().message(),
              HasSubstr("cpu rms_norm: n_tokens and dim must be > 0; got n_tokens=2 dim=0"));
}

// embedding(ids) -> gemm against a [vocab, dim] table -> logits [n, vocab]; returns each row's
// argmax. Runs on |device| with fresh buffers reused across calls through |state|.
struct PseudoTokenRig {
  static constexpr int64_t kVocab = 1000, kDim = 64;
  std::shared_ptr<Device> device;
  Stream stream;
  Buffer table, ids, hidden, logits;

  explicit PseudoTokenRig(std::shared_ptr<Device> d) : device(std::move(d)) {
    stream = std::move(device->CreateStream()).value();
    table = std::move(device->Allocate(kVocab * kDim * 4)).value();
    ids = std::move(device->Allocate(64 * 4)).value();
    hidden = std::move(device->Allocate(64 * kDim * 4)).value();
    logits = std::move(device->Allocate(64 * kVocab * 4)).value();
  }

  std::vector<int64_t> Argmax(const std::vector<int32_t>& tokens, int* hot_in_row0 = nullptr) {
    const auto n = static_cast<int64_t>(tokens.size());
    EXPECT_TRUE(stream.CopyH2D(tokens.data(), ids, 0, tokens.size() * 4).ok());
    hwinfer_embedding_desc embed{};
    embed.struct_size = sizeof(embed);
    embed.kind = HWINFER_KERNEL_EMBEDDING;
    embed.n_tokens = n;
    embed.vocab = kVocab;
    embed.dim = kDim;
    embed.table = ContiguousView(table, 0, HWINFER_DTYPE_F32, {kVocab, kDim});
    embed.ids = ContiguousView(ids, 0, HWINFER_DTYPE_I32, {n});
    embed.out = ContiguousView(hidden, 0, HWINFER_DTYPE_F32, {n, kDim});
    EXPECT_TRUE(stream.Launch(AsKernelDesc(embed)).ok());
    hwinfer_gemm_desc head{};
    head.struct_size = sizeof(head);
    head.kind = HWINFER_KERNEL_GEMM;
    head.m = n;
    head.n = kVocab;
    head.k = kDim;
    head.b_transposed = 1;
    head.alpha = 1;
    head.a = embed.out;
    head.b = embed.table;
    head.c = ContiguousView(logits, 0, HWINFER_DTYPE_F32, {n, kVocab});
    EXPECT_TRUE(stream.Launch(AsKernelDesc(head)).ok());
    std::vector<float> rows(static_cast<size_t>(n * kVocab));
    EXPECT_TRUE(stream.CopyD2H(logits, 0, rows.data(), rows.size() * 4).ok());
    EXPECT_TRUE(stream.Synchronize().ok());
    std::vector<int64_t> out;
    for (int64_t r = 0; r < n; ++r) {
      const float* row = rows.data() + r * kVocab;
      out.push_back(std::max_element(row, row + kVocab) - row);
    }
    if (hot_in_row0 != nullptr) {
      *hot_in_row0 = static_cast<int>(std::count(rows.begin(), rows.begin() + kVocab, 1e30f));
    }
    return out;
  }
};

TEST(SimBackend, PseudoTokensAreDeterministicAndFollowTheInput) {
  std::shared_ptr<Device> device = OpenSim();
  ASSERT_NE(device, nullptr);
  PseudoTokenRig rig(device);
  int hot = 0;
  const std::vector<int64_t> first = rig.Argmax({42}, &hot);
  EXPECT_EQ(hot, 1);
  EXPECT_GE(first[0], 1);  // column 0 holds the fingerprint, not a token
  EXPECT_EQ(rig.Argmax({7}, &hot).size(), 1u);
  EXPECT_EQ(hot, 1) << "the previous one-hot of the row was cleared";
  EXPECT_EQ(rig.Argmax({42}), first);
  // Another process-wide device gives the same answer (nothing depends on addresses).
  std::shared_ptr<Device> other = OpenSim();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(PseudoTokenRig(other).Argmax({42}), first);
  // Different ids give (almost surely) different tokens.
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < 32; ++i) ids.push_back(i * 31);
  const std::vector<int64_t> many = rig.Argmax(ids);
  EXPECT_GE(std::set<int64_t>(many.begin(), many.end()).size(), 28u);
  EXPECT_EQ(rig.Argmax({0, 42})[1], first[0]);
}

// The argmax kernel (ABI 1.3) on the sim picks what the host's argmax of the logits picks: the
// one-hot pseudo-token.
TEST(SimBackend, TheArgmaxKernelPicksThePseudoToken) {
  std::shared_ptr<Device> device = OpenSim();
  ASSERT_NE(device, nullptr);
  PseudoTokenRig rig(device);
  const std::vector<int32_t> tokens = {3, 42, 999};
  const std::vector<int64_t> on_host = rig.Argmax(tokens);
  const auto n = static_cast<int64_t>(tokens.size());
  hwinfer_argmax_desc argmax{};
  argmax.struct_size = sizeof(argmax);
  argmax.kind = HWINFER_KERNEL_ARGMAX;
  argmax.n_rows = n;
  argmax.n_cols = PseudoTokenRig::kVocab;
  argmax.x = ContiguousView(rig.logits, 0, HWINFER_DTYPE_F32, {n, PseudoTokenRig::kVocab});
  argmax.ids = ContiguousView(rig.ids, 0, HWINFER_DTYPE_I32, {n});
  ASSERT_TRUE(rig.stream.Launch(AsKernelDesc(argmax)).ok());
  std::vector<int32_t> on_device(tokens.size(), -1);
  ASSERT_TRUE(rig.stream.CopyD2H(rig.ids, 0, on_device.data(), on_device.size() * 4).ok());
  ASSERT_TRUE(rig.stream.Synchronize().ok());
  for (size_t r = 0; r < tokens.size(); ++r) EXPECT_EQ(on_device[r], on_host[r]) << "row " << r;
}

// The embedding of the one id in rig.ids into rig.hidden.
hwinfer_embedding_desc OneTokenEmbedding(const PseudoTokenRig& rig) {
  hwinfer_embedding_desc embed{};
  embed.struct_size = sizeof(embed);
  embed.kind = HWINFER_KERNEL_EMBEDDING;
  embed.n_tokens = 1;
  embed.vocab = PseudoTokenRig::kVocab;
  embed.dim = PseudoTokenRig::kDim;
  embed.table = ContiguousView(rig.table, 0, HWINFER_DTYPE_F32, {embed.vocab, embed.dim});
  embed.ids = ContiguousView(rig.ids, 0, HWINFER_DTYPE_I32, {1});
  embed.out = ContiguousView(rig.hidden, 0, HWINFER_DTYPE_F32, {1, embed.dim});
  return embed;
}

TEST(SimBackend, EmbeddingIdOutOfRangeIsReportedAtSynchronize) {
  std::shared_ptr<Device> device = OpenSim();
  ASSERT_NE(device, nullptr);
  PseudoTokenRig rig(device);
  const int32_t bad = 5000;
  ASSERT_TRUE(rig.stream.CopyH2D(&bad, rig.ids, 0, 4).ok());
  const hwinfer_embedding_desc embed = OneTokenEmbedding(rig);
  ASSERT_TRUE(rig.stream.Launch(AsKernelDesc(embed)).ok());
  Status synced = rig.stream.Synchronize();
  EXPECT_EQ(synced.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(synced.message(), HasSubstr("5000"));
  EXPECT_TRUE(rig.stream.Synchronize().ok()) << "synchronize clears the error";
}

TEST(SimBackend, LlamaExecutorGeneratesTheSamePseudoTokensTwice) {
  auto model =
      LlamaModel::Open(std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/tiny-llama-f32.gguf");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto generate = [&](const std::vector<std::vector<int32_t>>& prompts) {
    auto executor = LlamaExecutor::Create(OpenSim(), *model);
    EXPECT_TRUE(executor.ok()) << executor.status().ToString();
    if (!executor.ok()) return std::vector<std::vector<int32_t>>{};
    auto result = Generate(**executor, prompts, 6, SamplingParams{});
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? result->tokens : std::vector<std::vector<int32_t>>{};
  };
  const std::vector<std::vector<int32_t>> prompts = {{1, 5, 9, 13, 17}, {1, 6, 9}};
  const auto first = generate(prompts);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(first[0].size(), 6u);
  EXPECT_EQ(generate(prompts), first);
  EXPECT_NE(first[0], first[1]);
  for (const auto& tokens : first) {
    for (int32_t token : tokens) {
      EXPECT_GE(token, 1);
      EXPECT_LT(token, (*model)->shape().vocab_size);
    }
  }
}

}  // namespace
}  // namespace hwinfer

namespace hwinfer {
namespace {

// A hardware list gives one device per file, each with its own identity, memory and speed.
TEST(SimBackend, AHardwareListGivesEachDeviceItsOwnHardware) {
  std::shared_ptr<Plugin> plugin = LoadSim({{"hardware", kH100 + ",a100-80gb"}});
  ASSERT_NE(plugin, nullptr);
  ASSERT_EQ(*plugin->DeviceCount(), 2u);
  EXPECT_EQ(plugin->GetDeviceInfo(0)->name, "sim: NVIDIA H100 SXM 80GB");
  EXPECT_EQ(plugin->GetDeviceInfo(1)->name, "sim: NVIDIA A100 SXM 80GB");
  EXPECT_DOUBLE_EQ(plugin->GetDeviceInfo(0)->spec_peak_bandwidth_bytes_per_s, kBandwidth);
  EXPECT_DOUBLE_EQ(plugin->GetDeviceInfo(1)->spec_peak_bandwidth_bytes_per_s, 2039e9);
  // The same memory-bound GEMV takes each device's own bandwidth (and the same launch overhead).
  double gemv_ns[2] = {0, 0};
  for (uint32_t ordinal = 0; ordinal < 2; ++ordinal) {
    auto device = plugin->OpenDevice(ordinal);
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    auto stream = (*device)->CreateStream();
    auto a = (*device)->Allocate(4096 * 2);
    auto b = (*device)->Allocate(4096 * 4096 * 2);
    auto c = (*device)->Allocate(4096 * 2);
    ASSERT_TRUE(stream.ok() && a.ok() && b.ok() && c.ok());
    const hwinfer_gemm_desc gemv = GemmF16(*a, *b, *c, 1, 4096, 4096);
    gemv_ns[ordinal] = static_cast<double>(
        TimeNs(**device, *stream, [&] { ASSERT_TRUE(stream->Launch(AsKernelDesc(gemv)).ok()); }));
  }
  const double bytes = 8192 + 33554432 + 8192;
  EXPECT_NEAR(gemv_ns[0], bytes / kBandwidth * 1e9 + kOverheadNs, 1);
  EXPECT_NEAR(gemv_ns[1], bytes / 2039e9 * 1e9 + kOverheadNs, 1);
  auto mismatch = Plugin::Load(kSimPlugin, {{"hardware", kH100 + ",a100-80gb"}, {"devices", "3"}});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.status().message(),
              HasSubstr("option 'devices' is 3 but 'hardware' lists 2 files"));
  auto empty = Plugin::Load(kSimPlugin, {{"hardware", kH100 + ","}});
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("option 'hardware' has an empty item"));
}

// The device option fail_after_kernels: the first N kernels run, every later one fails as a lost
// device would (UNAVAILABLE naming the option); a bad value or another option is refused at open.
TEST(SimBackend, FailAfterKernelsFailsEveryLaterKernel) {
  std::shared_ptr<Plugin> plugin = LoadSim();
  ASSERT_NE(plugin, nullptr);
  auto device = plugin->OpenDevice(0, {{"fail_after_kernels", "2"}});
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  PseudoTokenRig rig(*device);
  const int32_t id = 3;
  ASSERT_TRUE(rig.stream.CopyH2D(&id, rig.ids, 0, 4).ok());
  const hwinfer_embedding_desc embed = OneTokenEmbedding(rig);
  EXPECT_TRUE(rig.stream.Launch(AsKernelDesc(embed)).ok());
  EXPECT_TRUE(rig.stream.Launch(AsKernelDesc(embed)).ok());
  for (int i = 0; i < 2; ++i) {
    const Status failed = rig.stream.Launch(AsKernelDesc(embed));
    EXPECT_EQ(failed.code(), StatusCode::kUnavailable);
    EXPECT_THAT(failed.message(), HasSubstr("simulated device failure (device option "
                                            "fail_after_kernels: 2 kernels ran)"));
  }
  auto bad = LoadSim()->OpenDevice(0, {{"fail_after_kernels", "soon"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("option 'fail_after_kernels' has invalid value 'soon'; expected an "
                        "integer in [1, 1000000000000]"));
  auto unknown = LoadSim()->OpenDevice(0, {{"speed", "fast"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown option 'speed'"));
}

}  // namespace
}  // namespace hwinfer
