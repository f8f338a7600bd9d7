// test_backends.h — test helper: the plugins of the build that compute (the CPU; Vulkan and the
// GPU emulator running the CUDA / HIP kernels where built; the emulator's 64-lane build in files
// compiled with its folder), for tests that compare every backend with one answer. Header-only
// (tests/unit compiles only *_test.cpp files).
#pragma once

#include <ostream>

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

}  // namespace hwinfer::testing_support
