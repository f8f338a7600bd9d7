// bench_common.cpp — see bench_common.h.
#include "bench_common.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "hwinfer/plugin_loader.h"

namespace hwinfer::bench {
namespace {
std::string g_backend = "cpu";
OptionMap g_plugin_options;  // --plugin-option=KEY=VALUE (plugin_init options)
}  // namespace

std::shared_ptr<Device> BenchDevice(benchmark::State& state) {
  static std::shared_ptr<Device> device = []() -> std::shared_ptr<Device> {
    auto path = FindPluginFile(g_backend, PluginSearchPaths());
    if (!path.ok()) return nullptr;
    auto plugin = Plugin::Load(*path, g_plugin_options);
    if (!plugin.ok()) return nullptr;
    auto opened = (*plugin)->OpenDevice(0);
    return opened.ok() ? *opened : nullptr;
  }();
  if (device == nullptr) state.SkipWithError(("cannot open backend " + g_backend).c_str());
  return device;
}

Buffer Upload(benchmark::State& state, Device& device, Stream& stream, const void* data,
              size_t bytes) {
  StatusOr<Buffer> buffer = device.Allocate(bytes);
  Status status = buffer.status();
  if (status.ok()) status = stream.CopyH2D(data, *buffer, 0, bytes);
  if (status.ok()) status = stream.Synchronize();
  if (!status.ok()) {
    if (!state.error_occurred()) state.SkipWithError(status.ToString().c_str());
    return Buffer();
  }
  return std::move(*buffer);
}

Buffer Allocate(benchmark::State& state, Device& device, uint64_t bytes) {
  StatusOr<Buffer> buffer = device.Allocate(bytes);
  if (!buffer.ok()) {
    if (!state.error_occurred()) state.SkipWithError(buffer.status().ToString().c_str());
    return Buffer();
  }
  return std::move(*buffer);
}

void TimeKernel(benchmark::State& state, Device& device, Stream& stream,
                const hwinfer_kernel_desc& desc) {
  if (state.error_occurred()) return;
  Event start = std::move(device.CreateEvent()).value();
  Event end = std::move(device.CreateEvent()).value();
  Status warm = stream.Launch(desc);
  if (warm.ok()) warm = stream.Synchronize();
  if (!warm.ok()) {
    state.SkipWithError(warm.ToString().c_str());
    return;
  }
  for (auto _ : state) {
    (void)start.Record(stream);
    (void)stream.Launch(desc);
    (void)end.Record(stream);
    (void)stream.Synchronize();
    state.SetIterationTime(static_cast<double>(Event::ElapsedNs(start, end).value()) * 1e-9);
  }
}

int BenchMain(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--backend=", 10) == 0) g_backend = argv[i] + 10;
    if (std::strncmp(argv[i], "--plugin-option=", 16) == 0) {
      const std::string option = argv[i] + 16;
      const size_t equals = option.find('=');
      if (equals == std::string::npos || equals == 0) {
        std::fprintf(stderr, "error: --plugin-option=%s: expected KEY=VALUE\n", option.c_str());
        return 2;
      }
      g_plugin_options[option.substr(0, equals)] = option.substr(equals + 1);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace hwinfer::bench
