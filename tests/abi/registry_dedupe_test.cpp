// registry_dedupe_test.cpp — one physical device reported by two plugins (same UUID) is listed
// once, with the other recorded as a HiddenDuplicate, unless the config sets
// allow_duplicate_devices. Uses hwinfer-abi-uuid-a.so and hwinfer-abi-uuid-b.so, loaded by exact
// `path:` from a config parsed in memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "abi_test_util.h"
#include "hwinfer/config.h"
#include "hwinfer/registry.h"

namespace hwinfer {
namespace {

using abi_test::TestPlugin;

constexpr char kSharedUuid[] = "6a9c1e52-334b-4f1d-8e7a-102c5b90d407";

std::string TwoPluginsOneCardYaml(bool allow_duplicates) {
  std::string yaml;
  if (allow_duplicates) yaml += "allow_duplicate_devices: true\n";
  yaml += "backends:\n";
  yaml += "  - name: abi-uuid-a\n    path: " + TestPlugin("hwinfer-abi-uuid-a.so") + "\n";
  yaml += "  - name: abi-uuid-b\n    path: " + TestPlugin("hwinfer-abi-uuid-b.so") + "\n";
  return yaml;
}

StatusOr<Registry> RegistryFromYaml(const std::string& yaml) {
  HWINFER_ASSIGN_OR_RETURN(RuntimeConfig config, ParseRuntimeConfig(yaml, "dedupe-test.yaml"));
  return Registry::FromConfig(config);
}

TEST(RegistryDedupe, SameUuidFromTwoPluginsIsListedOnce) {
  auto registry = RegistryFromYaml(TwoPluginsOneCardYaml(false));
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  EXPECT_EQ(registry->plugins().size(), 2u);
  ASSERT_EQ(registry->devices().size(), 1u);
  // Equal priority: the backend listed first in the config wins.
  EXPECT_EQ(registry->devices()[0].id(), "abi-uuid-a:0");
  EXPECT_EQ(registry->devices()[0].info.uuid_string(), kSharedUuid);
  ASSERT_EQ(registry->hidden_duplicates().size(), 1u);
  const HiddenDuplicate& hidden = registry->hidden_duplicates()[0];
  EXPECT_EQ(hidden.id, "abi-uuid-b:0");
  EXPECT_EQ(hidden.shown_as, "abi-uuid-a:0");
  EXPECT_EQ(hidden.uuid, kSharedUuid);
}

TEST(RegistryDedupe, AllowDuplicateDevicesKeepsBoth) {
  auto registry = RegistryFromYaml(TwoPluginsOneCardYaml(true));
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  ASSERT_EQ(registry->devices().size(), 2u);
  EXPECT_EQ(registry->devices()[0].info.name, "Shared card seen by A");
  EXPECT_EQ(registry->devices()[1].info.name, "Shared card seen by B");
  EXPECT_TRUE(registry->hidden_duplicates().empty());
}

TEST(RegistryDedupe, HigherPriorityPluginShowsTheSharedDevice) {
  std::string yaml = "backends:\n";
  yaml += "  - name: abi-uuid-a\n    path: " + TestPlugin("hwinfer-abi-uuid-a.so") + "\n";
  yaml +=
      "  - name: abi-uuid-b\n    priority: 10\n    path: " + TestPlugin("hwinfer-abi-uuid-b.so") +
      "\n";
  auto registry = RegistryFromYaml(yaml);
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  ASSERT_EQ(registry->devices().size(), 1u);
  EXPECT_EQ(registry->devices()[0].id(), "abi-uuid-b:0");
  ASSERT_EQ(registry->hidden_duplicates().size(), 1u);
  EXPECT_EQ(registry->hidden_duplicates()[0].id, "abi-uuid-a:0");
}

}  // namespace
}  // namespace hwinfer
