// test_backends.h — test helper: the plugins of the build that compute (the CPU; Vulkan and the
// GPU emulator running the CUDA / HIP kernels where built; the emulator's 64-lane build in files
// compiled with its folder), for tests that compare every backend with one answer. Header-only
// (tests/unit compiles only *_test.cpp files).
#pragma once

#include <ostream>
#include <string_view>

namespace hwinfer::testing_support {

struct TestBackend {
  const char* name;  // in the test's name
  const char* plugin;
  const char* plugin_dir;
};

inline void PrintTo(const TestBackend& b, std::ostream* out) { *out << b.name; }

inline constexpr TestBackend kTestBackends[] = {
    {"cpu", "cpu", HWINFER_PLUGIN_BUILD_DIR},
#ifdef HWINFER_HAVE_VULKAN_PLUGIN
    {"vulkan", "vulkan", HWINFER_PLUGIN_BUILD_DIR},
#endif
#ifdef HWINFER_GPUEMU_PLUGIN_DIR
    {"gpuemu", "gpuemu", HWINFER_GPUEMU_PLUGIN_DIR},  // the CUDA / HIP kernels (backends/cuda)
#endif
#ifdef HWINFER_GPUEMU_WAVE64_PLUGIN_DIR
    {"gpuemu_wave64", "gpuemu", HWINFER_GPUEMU_WAVE64_PLUGIN_DIR},  // with 64-lane wavefronts
#endif
};

// Whether a whole-model test runs on |b| in this build. Under the sanitizers (CI's ASan+UBSan
// tree) such tests run on the CPU and the emulated CUDA kernels only: lavapipe is ~10x slower
// there (each of its per-dispatch allocations a fresh mapping), and the 64-lane emulator checks
// the kernels' logic, not memory. The plain build runs every backend.
constexpr bool RunsModelsHere(const TestBackend& b) {
#if defined(__SANITIZE_ADDRESS__)
  return std::string_view(b.name) != "vulkan" && std::string_view(b.name) != "gpuemu_wave64";
#else
  (void)b;
  return true;
#endif
}

}  // namespace hwinfer::testing_support
