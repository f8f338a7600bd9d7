// hostile_plugin_test.cpp — the host against plugins that break the rules (hostile_plugin.c) or
// are not plugins at all: a device count of 2^32 - 1 is refused before anything is sized by it, a
// broken file found by searching is skipped (a plugin a config names stays an error), and a FIFO
// named like a plugin is refused without blocking.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "abi_test_util.h"
#include "hwinfer/config.h"
#include "hwinfer/registry.h"
#include "temp_folder_test.h"

namespace hwinfer {
namespace {

namespace fs = std::filesystem;
using abi_test::TestPlugin;
using ::testing::HasSubstr;

// A plugin folder of its own per test, removed afterwards.
class PluginFolder : public test::TempFolderTest {
 protected:
  // Links a built test plugin into the folder as |name|.
  void Add(const std::string& built, const std::string& name) {
    fs::create_symlink(TestPlugin(built), dir_ / name);
  }
};

TEST(HostilePlugin, ABillionDevicesAreRefusedBeforeAnythingIsSizedByThem) {
  auto plugin = Plugin::Load(TestPlugin("hwinfer-abi-hostile-many-devices.so"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto count = (*plugin)->DeviceCount();
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(count.status().message(), HasSubstr("reports 4294967295 devices; at most 1024"));
}

// One unloadable file on the search path (even an empty one) made every command fail.
TEST_F(PluginFolder, BrokenPluginsFoundBySearchingAreSkipped) {
  std::ofstream(dir_ / "hwinfer-empty.so").close();
  Add("hwinfer-abi-hostile-many-devices.so", "hwinfer-many.so");
  Add("hwinfer-abi-init-fails.so", "hwinfer-init-fails.so");
  Add("hwinfer-abi-uuid-a.so", "hwinfer-good.so");
  ASSERT_EQ(::mkfifo((dir_ / "hwinfer-fifo.so").c_str(), 0600), 0);
  auto registry = Registry::FromSearchPaths({dir_.string()});
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  ASSERT_EQ(registry->plugins().size(), 1u);
  EXPECT_EQ(registry->plugins()[0]->name(), "abi-uuid-a");
  ASSERT_EQ(registry->devices().size(), 1u);
}

TEST_F(PluginFolder, APluginAConfigNamesStaysAnErrorWhenBroken) {
  std::ofstream(dir_ / "hwinfer-empty.so").close();
  auto config = ParseRuntimeConfig(
      "backends:\n  - name: empty\nplugin_paths: [" + dir_.string() + "]\n", "run.yaml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto registry = Registry::FromConfig(*config);
  ASSERT_FALSE(registry.ok());
  EXPECT_THAT(registry.status().message(), HasSubstr("run.yaml:2:5: backend 'empty': plugin file"));
  EXPECT_THAT(registry.status().message(), HasSubstr("is not a shared library"));
}

TEST_F(PluginFolder, AFifoNamedLikeAPluginIsRefusedWithoutBlocking) {
  const std::string fifo = (dir_ / "hwinfer-fifo.so").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto plugin = Plugin::Load(fifo);
  ASSERT_FALSE(plugin.ok());
  EXPECT_THAT(plugin.status().message(),
              HasSubstr("plugin file '" + fifo + "' is a FIFO (named pipe), not a regular file"));
}

}  // namespace
}  // namespace hwinfer
