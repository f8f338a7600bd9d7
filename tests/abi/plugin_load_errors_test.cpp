// plugin_load_errors_test.cpp — every way loading a plugin file can fail, through
// hwinfer::Plugin::Load: each must give the documented StatusCode and a message that names the
// file and the reason, and none may leave the library loaded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "abi_test_util.h"
#include "hwinfer/plugin_loader.h"

namespace hwinfer {
namespace {

using abi_test::IsLoaded;
using abi_test::TestPlugin;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;

TEST(PluginLoadErrors, MissingFileIsNotFoundNamingThePath) {
  const std::string path = TestPlugin("hwinfer-does-not-exist.so");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(plugin.status().message(), AllOf(HasSubstr(path), HasSubstr("does not exist")));
}

TEST(PluginLoadErrors, TextFileIsRejectedAsNotASharedLibrary) {
  const std::string path = TestPlugin("not-a-plugin.so");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(plugin.status().message(), AllOf(HasSubstr(path), HasSubstr("not a shared library")));
}

TEST(PluginLoadErrors, TruncatedElfReportsTheDynamicLoadersReason) {
  // Starts with the ELF magic, so only dlopen itself can tell it is broken.
  const std::string path = TestPlugin("hwinfer-abi-truncated-elf.so");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(plugin.status().message(), HasSubstr(path));
  EXPECT_THAT(plugin.status().message(),
              AnyOf(HasSubstr("too short"), HasSubstr("ELF"), HasSubstr("invalid")));
}

TEST(PluginLoadErrors, MissingDependencyNamesTheLibraryDlopenCouldNotFind) {
  const std::string path = TestPlugin("hwinfer-abi-missing-dep.so");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(plugin.status().message(), AllOf(HasSubstr(path), HasSubstr("libabi_gone.so")));
  EXPECT_FALSE(IsLoaded(path));
}

TEST(PluginLoadErrors, LibraryWithoutQuerySymbolNamesTheSymbol) {
  const std::string path = TestPlugin("hwinfer-abi-no-symbol.so");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(plugin.status().message(),
              AllOf(HasSubstr(path), HasSubstr(HWINFER_PLUGIN_QUERY_SYMBOL)));
  EXPECT_FALSE(IsLoaded(path)) << "a rejected plugin must be dlclose'd";
}

TEST(PluginLoadErrors, PluginRefusingMajorOneIsUnsupportedNamingBothMajors) {
  // The plugin answers the host's request for major 1 with "this plugin implements ABI major 2".
  const std::string path = TestPlugin("hwinfer-abi-major2.so");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(plugin.status().message(),
              AllOf(HasSubstr(path), HasSubstr("major 1"), HasSubstr("major 2")));
  EXPECT_FALSE(IsLoaded(path));
}

TEST(PluginLoadErrors, TableClaimingMajorTwoIsUnsupportedNamingBothMajors) {
  // This one ignores the requested major and hands back a table that says abi_major = 2.
  const std::string path = TestPlugin("hwinfer-abi-major2-table.so");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(plugin.status().message(),
              AllOf(HasSubstr(path), HasSubstr("major 2"), HasSubstr("major 1")));
  EXPECT_FALSE(IsLoaded(path));
}

TEST(PluginLoadErrors, InitFailureKeepsThePluginsCodeAndMessage) {
  const std::string path = TestPlugin("hwinfer-abi-init-fails.so");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(plugin.status().message(),
              AllOf(HasSubstr(path), HasSubstr("simulated init failure: driver not found")));
  EXPECT_FALSE(IsLoaded(path));
}

TEST(PluginLoadErrors, DirectoryIsNotAPlugin) {
  auto plugin = Plugin::Load(HWINFER_ABI_TEST_PLUGIN_DIR);
  ASSERT_FALSE(plugin.ok());
  EXPECT_NE(plugin.status().code(), StatusCode::kOk);
  EXPECT_THAT(plugin.status().message(), HasSubstr(HWINFER_ABI_TEST_PLUGIN_DIR));
}

}  // namespace
}  // namespace hwinfer
