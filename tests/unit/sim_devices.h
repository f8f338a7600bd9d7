// sim_devices.h — test helper: sim:0 .. sim:N-1 of one registry (the build tree's simulated
// backend with N devices, its default H100 spec). Header-only (tests/unit compiles only
// *_test.cpp files).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hwinfer/config.h"
#include "hwinfer/registry.h"

namespace hwinfer::testing_support {

inline std::vector<std::shared_ptr<Device>> SimulatedDevices(int count) {
  auto config = ParseRuntimeConfig(
      std::string("plugin_paths: [") + HWINFER_PLUGIN_BUILD_DIR +
          "]\nbackends:\n  - name: sim\n    options: {devices: " + std::to_string(count) + "}\n",
      "test.yaml");
  EXPECT_TRUE(config.ok());
  if (!config.ok()) return {};
  auto registry = Registry::FromConfig(*config);
  EXPECT_TRUE(registry.ok()) << registry.status().ToString();
  if (!registry.ok()) return {};
  std::vector<std::shared_ptr<Device>> devices;
  for (int i = 0; i < count; ++i) {
    auto device = registry->Open(**registry->Find("sim:" + std::to_string(i)));
    EXPECT_TRUE(device.ok());
    if (device.ok()) devices.push_back(*device);
  }
  return devices;
}

}  // namespace hwinfer::testing_support
