// registry_test.cpp — plugin search, the registry built from a config, device selection and its
// errors (unknown backend, unknown device with file:line:column), device lookup, and the RAII
// handles over the real cpu plugin, and the known-hardware spec matched by device name.
#include "hwinfer/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

const std::string kPluginDir = HWINFER_PLUGIN_BUILD_DIR;

StatusOr<Registry> RegistryFromYaml(const std::string& yaml) {
  HWINFER_ASSIGN_OR_RETURN(RuntimeConfig config, ParseRuntimeConfig(yaml, "test.yaml", "."));
  config.plugin_paths.insert(config.plugin_paths.begin(), kPluginDir);
  return Registry::FromConfig(config);
}

TEST(PluginSearch, FindsCpuPluginAndNamesFoldersWhenMissing) {
  auto found = FindPluginFile("cpu", {"/nonexistent", kPluginDir});
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, kPluginDir + "/hwinfer-cpu.so");
  auto missing = FindPluginFile("nosuch", {"/nonexistent", kPluginDir});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("hwinfer-nosuch.so"));
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent"));
}

TEST(PluginSearch, EnvironmentPathComesAfterConfigAndBeforeDefault) {
  ::setenv("HWINFER_PLUGIN_PATH", "/env/a:/env/b", 1);
  std::vector<std::string> paths = PluginSearchPaths({"/config"});
  ::unsetenv("HWINFER_PLUGIN_PATH");
  ASSERT_EQ(paths.size(), 4u);
  EXPECT_EQ(paths[0], "/config");
  EXPECT_EQ(paths[1], "/env/a");
  EXPECT_EQ(paths[2], "/env/b");
  EXPECT_EQ(paths[3], DefaultPluginDir());
}

TEST(PluginSearch, DefaultFolderIsNextToLibhwinfer) {
  EXPECT_THAT(DefaultPluginDir(), HasSubstr("hwinfer/plugins"));
  std::vector<std::string> files = DiscoverPluginFiles({kPluginDir});
  EXPECT_THAT(files, ::testing::Contains(kPluginDir + "/hwinfer-cpu.so"));
}

TEST(Registry, DefaultConfigSelectsTheCpuDevice) {
  auto registry = RegistryFromYaml("backends:\n  - name: cpu\n");
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  ASSERT_EQ(registry->devices().size(), 1u);
  const RegisteredDevice& device = registry->devices()[0];
  EXPECT_EQ(device.id(), "cpu:0");
  EXPECT_EQ(device.info.device_type, HWINFER_DEVICE_TYPE_CPU);
  EXPECT_GT(device.info.memory_total_bytes, 0u);
  EXPECT_GT(device.info.compute_units, 0u);
}

TEST(Registry, UnknownBackendNamesConfigLocation) {
  auto registry = RegistryFromYaml("backends:\n  - name: cpu\n  - name: warp9\n");
  ASSERT_FALSE(registry.ok());
  EXPECT_THAT(registry.status().message(), HasSubstr("test.yaml:3:"));
  EXPECT_THAT(registry.status().message(), HasSubstr("unknown backend 'warp9'"));
  EXPECT_THAT(registry.status().message(), HasSubstr("hwinfer-warp9.so"));
}

TEST(Registry, UnknownDeviceNamesConfigLocationAndListsDevices) {
  auto registry = RegistryFromYaml("backends:\n  - name: cpu\n    devices:\n      - select: 7\n");
  ASSERT_FALSE(registry.ok());
  EXPECT_EQ(registry.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(registry.status().message(), HasSubstr("test.yaml:4:"));
  EXPECT_THAT(registry.status().message(), HasSubstr("unknown device '7'"));
  EXPECT_THAT(registry.status().message(), HasSubstr("available: [0]"));
}

TEST(Registry, DeviceSelectedByNameAndHardwareSpecApplied) {
  auto all = RegistryFromYaml("backends:\n  - name: cpu\n");
  ASSERT_TRUE(all.ok());
  const std::string name = all->devices()[0].info.name;
  auto registry = RegistryFromYaml(
      "backends:\n  - name: cpu\n    priority: 3\n    devices:\n"
      "      - select: \"" +
      name + "\"\n        hardware: " + HWINFER_SOURCE_DIR "/configs/hardware/generic-cpu.yaml\n");
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  ASSERT_EQ(registry->devices().size(), 1u);
  const RegisteredDevice& device = registry->devices()[0];
  EXPECT_EQ(device.priority, 3);
  EXPECT_GT(device.info.spec_peak_bandwidth_bytes_per_s, 0);
  EXPECT_THAT(device.info.spec_source, HasSubstr("generic-cpu.yaml"));
}

// A device with no declared hardware file gets the spec of the known hardware file matching its
// name, from the `hardware/` folder beside the config; a declared file still wins.
TEST(Registry, KnownHardwareMatchedByDeviceName) {
  auto all = RegistryFromYaml("backends:\n  - name: cpu\n");
  ASSERT_TRUE(all.ok());
  const std::string name = all->devices()[0].info.name;
  ASSERT_EQ(all->devices()[0].info.spec_peak_bandwidth_bytes_per_s, 0) << "cpu reports a spec";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("hwinfer_registry_known_hw_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "hardware");
  std::ofstream(dir / "hardware" / "this-cpu.yaml")
      << "name: This CPU\nmatch: [\"" << name
      << "\"]\npeak_bandwidth_gb_per_s: 12.5\npeak_tflops: {f32: 1}\n";
  std::ofstream(dir / "plain.yaml")
      << "plugin_paths: [" << kPluginDir << "]\nbackends:\n  - name: cpu\n";
  std::ofstream(dir / "declared.yaml")
      << "plugin_paths: [" << kPluginDir << "]\nbackends:\n  - name: cpu\n    devices:\n"
      << "      - select: 0\n        hardware: " << HWINFER_SOURCE_DIR
      << "/configs/hardware/generic-cpu.yaml\n";
  auto plain = LoadRuntimeConfig((dir / "plain.yaml").string());
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  auto matched = Registry::FromConfig(*plain);
  ASSERT_TRUE(matched.ok()) << matched.status().ToString();
  EXPECT_DOUBLE_EQ(matched->devices()[0].info.spec_peak_bandwidth_bytes_per_s, 12.5e9);
  EXPECT_THAT(matched->devices()[0].info.spec_source, HasSubstr("this-cpu.yaml"));
  auto declared_config = LoadRuntimeConfig((dir / "declared.yaml").string());
  ASSERT_TRUE(declared_config.ok()) << declared_config.status().ToString();
  auto declared = Registry::FromConfig(*declared_config);
  ASSERT_TRUE(declared.ok()) << declared.status().ToString();
  EXPECT_THAT(declared->devices()[0].info.spec_source, HasSubstr("generic-cpu.yaml"));
  std::filesystem::remove_all(dir);
}

TEST(Registry, FindByIdIndexNameAndError) {
  auto registry = RegistryFromYaml("backends:\n  - name: cpu\n");
  ASSERT_TRUE(registry.ok());
  const RegisteredDevice* first = &registry->devices()[0];
  EXPECT_EQ(*registry->Find("cpu:0"), first);
  EXPECT_EQ(*registry->Find("0"), first);
  EXPECT_EQ(*registry->Find(first->info.name), first);
  auto missing = registry->Find("cuda:3");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("available: cpu:0"));
}

TEST(Registry, OpenReturnsTheSameDeviceAndHandlesOutliveRegistry) {
  Buffer buffer;
  {
    auto registry = RegistryFromYaml("backends:\n  - name: cpu\n");
    ASSERT_TRUE(registry.ok());
    auto a = registry->Open(registry->devices()[0]);
    auto b = registry->Open(registry->devices()[0]);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->get(), b->get());
    auto allocated = (*a)->Allocate(4096);
    ASSERT_TRUE(allocated.ok());
    buffer = std::move(*allocated);
  }
  // The registry is gone; the buffer still keeps its device and plugin alive.
  auto mapped = buffer.Map();
  ASSERT_TRUE(mapped.ok());
  static_cast<uint8_t*>(*mapped)[4095] = 42;
  EXPECT_EQ(buffer.size_bytes(), 4096u);
}

TEST(DeviceInfo, UuidStringIsCanonicalAndEmptyWithoutUuid) {
  DeviceInfo info;
  EXPECT_FALSE(info.has_uuid());
  EXPECT_EQ(info.uuid_string(), "");
  for (uint8_t i = 0; i < 16; ++i) info.uuid[i] = static_cast<uint8_t>(0xa0 + i);
  EXPECT_EQ(info.uuid_string(), "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
}

}  // namespace
}  // namespace hwinfer
