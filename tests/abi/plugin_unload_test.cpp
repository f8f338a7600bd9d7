// plugin_unload_test.cpp — loading and unloading a real backend (the CPU plugin from the build
// tree) many times, each time with a device opened and a stream created, must be clean: every
// handle released in order, the library closed, nothing leaked (AddressSanitizer builds catch
// leaks and use-after-unload; plain builds check the library is really gone).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "abi_test_util.h"
#include "hwinfer/device.h"
#include "hwinfer/plugin_loader.h"

namespace hwinfer {
namespace {

TEST(PluginUnload, CpuPluginLoadsAndUnloadsTwentyTimesWithLiveHandles) {
  const std::string path = std::string(HWINFER_PLUGIN_BUILD_DIR) + "/hwinfer-cpu.so";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " was not built";
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    {
      std::shared_ptr<Plugin> plugin;
      {
        auto loaded = Plugin::Load(path);
        ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
        plugin = std::move(*loaded);
      }
      auto count = plugin->DeviceCount();
      ASSERT_TRUE(count.ok()) << count.status().ToString();
      ASSERT_GE(*count, 1u);
      auto device = plugin->OpenDevice(0);
      ASSERT_TRUE(device.ok()) << device.status().ToString();
      auto stream = (*device)->CreateStream();
      ASSERT_TRUE(stream.ok()) << stream.status().ToString();
      auto buffer = (*device)->Allocate(4096);
      ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
      const uint32_t word = 0xabcd0000u + static_cast<uint32_t>(round);
      uint32_t back = 0;
      ASSERT_TRUE(stream->CopyH2D(&word, *buffer, 100, sizeof(word)).ok());
      ASSERT_TRUE(stream->CopyD2H(*buffer, 100, &back, sizeof(back)).ok());
      ASSERT_TRUE(stream->Synchronize().ok());
      EXPECT_EQ(back, word);
      // Drop our plugin reference first: the device, stream and buffer must keep it alive, and
      // release it (and the library) only when the last of them goes at the end of this scope.
      plugin.reset();
      EXPECT_TRUE(abi_test::IsLoaded(path));
    }
    EXPECT_FALSE(abi_test::IsLoaded(path)) << "the library stayed mapped after the last handle";
  }
}

}  // namespace
}  // namespace hwinfer
