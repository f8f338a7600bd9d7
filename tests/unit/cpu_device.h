// cpu_device.h — test helper: a plugin of the build tree opened as a device (the CPU plugin by
// default). Header-only (tests/unit compiles only *_test.cpp files).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "hwinfer/registry.h"

namespace hwinfer::testing_support {

// A fresh registry per call: the device (and through it the plugin and its threads) lives only as
// long as the executors holding it, so every thread has joined before the test process exits
// (LeakSanitizer cannot stop threads of a still-loaded plugin at exit).
inline std::shared_ptr<Device> OpenFirstDevice(const std::string& dir, const std::string& backend) {
  auto registry = Registry::FromSearchPaths({dir});
  EXPECT_TRUE(registry.ok()) << registry.status().ToString();
  if (!registry.ok()) return nullptr;
  auto found = registry->Find(backend + ":0");
  EXPECT_TRUE(found.ok()) << found.status().ToString();
  if (!found.ok()) return nullptr;
  auto device = registry->Open(**found);
  EXPECT_TRUE(device.ok()) << device.status().ToString();
  return device.ok() ? *device : nullptr;
}

inline std::shared_ptr<Device> CpuDevice() {
  return OpenFirstDevice(HWINFER_PLUGIN_BUILD_DIR, "cpu");
}

}  // namespace hwinfer::testing_support
