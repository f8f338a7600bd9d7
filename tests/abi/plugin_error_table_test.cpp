// plugin_error_table_test.cpp — pins what every in-tree plugin answers to bad calls made straight
// through its C table: NULL handles and out-pointers, out-of-range ordinals and copies, unknown
// memory kinds, events used before they are recorded, kernels without a descriptor. Each answer is
// one line "<call>: <code> <message>" (or "<call>: ok"), compared with the plugin's golden file in
// tests/abi/error_tables/. Moving the plugins onto a shared kit (docs/plugin-kit.md) must keep
// these lines, or change them on purpose in the commit that does it:
//   HWINFER_UPDATE_ERROR_TABLES=1 hwinfer_abi_tests --gtest_filter='PluginErrorTable.*'
// rewrites the golden files from what the plugins answer now.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/log.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_loader.h"

namespace hwinfer {
namespace {

const char* CodeName(uint32_t code) {
  static const char* const kNames[] = {
      "OK",          "INVALID_ARGUMENT",    "UNSUPPORTED",  "OUT_OF_MEMORY",
      "UNAVAILABLE", "FAILED_PRECONDITION", "OUT_OF_RANGE", "INTERNAL"};
  return code < 8 ? kNames[code] : "UNKNOWN_CODE";
}

// Collects one line per call; takes and destroys each error.
class Table {
 public:
  void Add(const std::string& call, hwinfer_error* error) {
    if (error == nullptr) {
      lines_ << call << ": ok\n";
      return;
    }
    lines_ << call << ": " << CodeName(error->code) << " "
           << (error->message != nullptr ? error->message : "(no message)") << "\n";
    error->destroy(error);
  }
  void Returned(const std::string& call) { lines_ << call << ": returns\n"; }
  void Line(const std::string& text) { lines_ << text << "\n"; }
  std::string Text() const { return lines_.str(); }

 private:
  std::ostringstream lines_;
};

// Every slot with a NULL first handle (and NULL everything else): an error, never a crash.
void NullHandles(const hwinfer_plugin_api& api, const hwinfer_kernel_table& kernels, Table& t) {
  uint32_t count = 0;
  t.Add("device_count(NULL plugin)", api.device_count(nullptr, &count));
  hwinfer_device_info info{};
  info.struct_size = sizeof(info);
  t.Add("device_get_info(NULL plugin)", api.device_get_info(nullptr, 0, &info));
  hwinfer_device* device = nullptr;
  t.Add("device_open(NULL plugin)", api.device_open(nullptr, 0, nullptr, 0, &device));
  api.device_close(nullptr);
  t.Returned("device_close(NULL)");
  hwinfer_buffer* buffer = nullptr;
  t.Add("buffer_alloc(NULL device)", api.buffer_alloc(nullptr, 64, HWINFER_MEMORY_DEVICE, &buffer));
  api.buffer_free(nullptr);
  t.Returned("buffer_free(NULL)");
  void* mapped = nullptr;
  t.Add("buffer_map(NULL buffer)", api.buffer_map(nullptr, &mapped));
  if (api.buffer_import_host != nullptr) {
    static char host[64];
    t.Add("buffer_import_host(NULL device)", api.buffer_import_host(nullptr, host, 64, &buffer));
  }
  hwinfer_stream* stream = nullptr;
  t.Add("stream_create(NULL device)", api.stream_create(nullptr, &stream));
  api.stream_destroy(nullptr);
  t.Returned("stream_destroy(NULL)");
  t.Add("stream_synchronize(NULL)", api.stream_synchronize(nullptr));
  char bytes[8] = {};
  t.Add("copy_h2d(NULL stream)", api.copy_h2d(nullptr, bytes, nullptr, 0, 8));
  t.Add("copy_d2h(NULL stream)", api.copy_d2h(nullptr, nullptr, 0, bytes, 8));
  t.Add("copy_d2d(NULL stream)", api.copy_d2d(nullptr, nullptr, 0, nullptr, 0, 8));
  hwinfer_event* event = nullptr;
  t.Add("event_create(NULL device)", api.event_create(nullptr, &event));
  api.event_destroy(nullptr);
  t.Returned("event_destroy(NULL)");
  t.Add("event_record(NULL event)", api.event_record(nullptr, nullptr));
  t.Add("stream_wait_event(NULL stream)", api.stream_wait_event(nullptr, nullptr));
  t.Add("event_synchronize(NULL)", api.event_synchronize(nullptr));
  uint32_t complete = 0;
  t.Add("event_query(NULL)", api.event_query(nullptr, &complete));
  uint64_t elapsed = 0;
  t.Add("event_elapsed_ns(NULL, NULL)", api.event_elapsed_ns(nullptr, nullptr, &elapsed));
  hwinfer_kernel_support support{};
  support.struct_size = sizeof(support);
  if (api.kernel_query != nullptr) {
    t.Add("kernel_query(NULL device)", api.kernel_query(nullptr, nullptr, &support));
  }
#define HWINFER_NULL_KERNEL(slot)                                                       \
  if (kernels.slot != nullptr) {                                                        \
    t.Add("kernels." #slot "(NULL stream, NULL desc)", kernels.slot(nullptr, nullptr)); \
  }
  HWINFER_NULL_KERNEL(gemm)
  HWINFER_NULL_KERNEL(matmul_quantized)
  HWINFER_NULL_KERNEL(attention_prefill)
  HWINFER_NULL_KERNEL(attention_decode_paged)
  HWINFER_NULL_KERNEL(kv_append)
  HWINFER_NULL_KERNEL(rms_norm)
  HWINFER_NULL_KERNEL(rope)
  HWINFER_NULL_KERNEL(silu_mul)
  HWINFER_NULL_KERNEL(embedding)
  HWINFER_NULL_KERNEL(bandwidth_probe)
  HWINFER_NULL_KERNEL(rope_kv_append)
#undef HWINFER_NULL_KERNEL
}

// Live handles of device 0 used badly: NULL out-pointers, ranges, kinds, unrecorded events.
void BadUses(const Plugin& plugin, Table& t) {
  const hwinfer_plugin_api& api = plugin.api();
  t.Add("device_count(NULL out)", api.device_count(plugin.handle(), nullptr));
  hwinfer_device_info info{};
  info.struct_size = sizeof(info);
  t.Add("device_get_info(ordinal 4096)", api.device_get_info(plugin.handle(), 4096, &info));
  hwinfer_device* device = nullptr;
  t.Add("device_open(ordinal 4096)", api.device_open(plugin.handle(), 4096, nullptr, 0, &device));
  t.Add("device_open(NULL out)", api.device_open(plugin.handle(), 0, nullptr, 0, nullptr));
  t.Add("device_open(0)", api.device_open(plugin.handle(), 0, nullptr, 0, &device));
  if (device == nullptr) return;
  hwinfer_buffer* buffer = nullptr;
  t.Add("buffer_alloc(memory kind 77)", api.buffer_alloc(device, 64, 77, &buffer));
  t.Add("buffer_alloc(NULL out)", api.buffer_alloc(device, 64, HWINFER_MEMORY_DEVICE, nullptr));
  t.Add("buffer_alloc(64)", api.buffer_alloc(device, 64, HWINFER_MEMORY_DEVICE, &buffer));
  hwinfer_stream* stream = nullptr;
  t.Add("stream_create(NULL out)", api.stream_create(device, nullptr));
  t.Add("stream_create", api.stream_create(device, &stream));
  hwinfer_event* start = nullptr;
  hwinfer_event* end = nullptr;
  t.Add("event_create(NULL out)", api.event_create(device, nullptr));
  t.Add("event_create(start)", api.event_create(device, &start));
  t.Add("event_create(end)", api.event_create(device, &end));
  if (buffer != nullptr && stream != nullptr) {
    char bytes[128] = {};
    t.Add("copy_h2d(NULL src)", api.copy_h2d(stream, nullptr, buffer, 0, 8));
    t.Add("copy_h2d(past the end)", api.copy_h2d(stream, bytes, buffer, 60, 8));
    t.Add("copy_d2h(past the end)", api.copy_d2h(stream, buffer, 0, bytes, 128));
    t.Add("copy_d2d(overlapping)", api.copy_d2d(stream, buffer, 0, buffer, 4, 16));
    t.Add("copy_d2d(NULL dst)", api.copy_d2d(stream, buffer, 0, nullptr, 0, 8));
    t.Add("stream_synchronize", api.stream_synchronize(stream));
  }
  if (start != nullptr && end != nullptr) {
    uint64_t elapsed = 0;
    t.Add("event_elapsed_ns(never recorded)", api.event_elapsed_ns(start, end, &elapsed));
    t.Add("event_elapsed_ns(NULL out)", api.event_elapsed_ns(start, end, nullptr));
    uint32_t complete = 0;
    t.Add("event_query(NULL out)", api.event_query(start, nullptr));
    t.Add("event_query(never recorded)", api.event_query(start, &complete));
    t.Add("event_record(NULL stream)", api.event_record(start, nullptr));
  }
  if (stream != nullptr && plugin.kernels().gemm != nullptr) {
    t.Add("kernels.gemm(NULL desc)", plugin.kernels().gemm(stream, nullptr));
  }
  if (api.kernel_query != nullptr) {
    hwinfer_kernel_support support{};
    support.struct_size = sizeof(support);
    hwinfer_kernel_desc unknown{sizeof(hwinfer_kernel_desc), 999u};
    t.Add("kernel_query(NULL desc)", api.kernel_query(device, nullptr, &support));
    support.supported = 12345u;
    t.Add("kernel_query(kind 999)", api.kernel_query(device, &unknown, &support));
    t.Line(std::string("kernel_query(kind 999) support: ") +
           (support.supported == HWINFER_KERNEL_SUPPORTED     ? "SUPPORTED"
            : support.supported == HWINFER_KERNEL_UNSUPPORTED ? "UNSUPPORTED"
                                                              : "unset") +
           " \"" + support.reason + "\"");
  }
  // Closing the device with its objects alive: a warning, and the device stays until they go.
  const LogLevel level = GetLogLevel();
  SetLogLevel(LogLevel::kWarning);  // whatever HWINFER_LOG_LEVEL says
  testing::internal::CaptureStderr();
  api.device_close(device);
  std::string warning = testing::internal::GetCapturedStderr();
  SetLogLevel(level);
  if (!warning.empty() && warning.back() == '\n') warning.pop_back();
  t.Line("device_close(live objects) logs: " + warning);
  api.event_destroy(end);
  api.event_destroy(start);
  api.stream_destroy(stream);
  api.buffer_free(buffer);
}

std::string GoldenPath(const std::string& plugin) {
  return std::string(HWINFER_SOURCE_DIR) + "/tests/abi/error_tables/" + plugin + ".txt";
}

void CheckAgainstGolden(const std::string& name, const std::string& got) {
  const std::string path = GoldenPath(name);
  const char* update = std::getenv("HWINFER_UPDATE_ERROR_TABLES");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << got;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << path << " is missing (HWINFER_UPDATE_ERROR_TABLES=1 writes it)";
  std::stringstream want;
  want << file.rdbuf();
  std::istringstream got_lines(got), want_lines(want.str());
  std::string g, w;
  for (int line = 1; std::getline(want_lines, w); ++line) {
    ASSERT_TRUE(static_cast<bool>(std::getline(got_lines, g)))
        << path << ":" << line << ": missing";
    EXPECT_EQ(g, w) << path << ":" << line;
  }
  EXPECT_FALSE(static_cast<bool>(std::getline(got_lines, g)))
      << "more lines than " << path << ": " << g;
}

class PluginErrorTable : public ::testing::TestWithParam<const char*> {};

TEST_P(PluginErrorTable, BadCallsGiveThePinnedCodesAndMessages) {
  const std::string name = GetParam();
  const std::string path =
      std::string(name == "gpuemu" ? HWINFER_GPUEMU_PLUGIN_DIR : HWINFER_PLUGIN_BUILD_DIR) +
      "/hwinfer-" + name + ".so";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " was not built";
  auto plugin = Plugin::Load(path);
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto count = (*plugin)->DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  if (*count == 0) GTEST_SKIP() << name << " has no device here";
  if (name == "vulkan") {  // the pinned answers name lavapipe's one device
    auto info = (*plugin)->GetDeviceInfo(0);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    if (*count != 1 || info->name.find("llvmpipe") == std::string::npos) {
      GTEST_SKIP() << "the Vulkan table is pinned for lavapipe alone; here device 0 is "
                   << info->name << " of " << *count;
    }
  }
  Table table;
  NullHandles((*plugin)->api(), (*plugin)->kernels(), table);
  BadUses(**plugin, table);
  CheckAgainstGolden(name, table.Text());
}

// The plugins whose answers do not depend on the machine: the CPU, the simulator, lavapipe's
// Vulkan and the GPU emulator (the CUDA/HIP backend's code on the emulated runtime; the real
// CUDA and HIP builds need their GPUs).
INSTANTIATE_TEST_SUITE_P(InTree, PluginErrorTable,
                         ::testing::Values("cpu", "sim", "vulkan", "gpuemu"),
                         [](const auto& param_info) { return std::string(param_info.param); });

}  // namespace
}  // namespace hwinfer
