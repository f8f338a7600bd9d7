// bench_common.cpp — see bench_common.h.
#include "bench_common.h"

#include <cstring>
#include <string>

#include "hwinfer/plugin_loader.h"

namespace hwinfer::bench {
namespace {
std::string g_backend = "cpu";
}  // namespace

std::shared_ptr<Device> BenchDevice(benchmark::State& state) {
  static std::shared_ptr<Device> device = []() -> std::shared_ptr<Device> {
    auto path = FindPluginFile(g_backend, PluginSearchPaths());
    if (!path.ok()) return nullptr;
    auto plugin = Plugin::Load(*path);
    if (!plugin.ok()) return nullptr;
    auto opened = (*plugin)->OpenDevice(0);
    return opened.ok() ? *opened : nullptr;
  }();
  if (device == nullptr) state.SkipWithError(("cannot open backend " + g_backend).c_str());
  return device;
}

Buffer Upload(Device& device, Stream& stream, const void* data, size_t bytes) {
  Buffer buffer = std::move(device.Allocate(bytes)).value();
  (void)stream.CopyH2D(data, buffer, 0, bytes);
  (void)stream.Synchronize();
  return buffer;
}

void TimeKernel(benchmark::State& state, Device& device, Stream& stream,
                const hwinfer_kernel_desc& desc) {
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
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace hwinfer::bench
