// hwinfer/plugin_loader.h — finding, loading and unloading backend plugins.
//
// A Plugin owns one dlopen'd library and one initialised plugin instance. It copies the plugin's
// API and kernel tables into host-sized structs (zero-filled past the plugin's struct_size), so
// slots an older plugin does not have read as NULL. Every failure names the file and the reason.
// Devices, buffers and streams keep their Plugin alive through shared_ptr, so the library is
// closed only after the last handle into it is gone.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/config.h"
#include "hwinfer/plugin.h"
#include "hwinfer/status.h"

namespace hwinfer {

class Device;
struct DeviceInfo;

// The file name a backend named |name| is looked up by: "hwinfer-<name>.so".
std::string PluginFileName(const std::string& name);

// The folders searched for plugins, in order: |config_paths|, then each entry of the
// HWINFER_PLUGIN_PATH environment variable (':'-separated), then the default folder
// "<folder of libhwinfer.so>/hwinfer/plugins" (the build tree and the install tree both follow it).
std::vector<std::string> PluginSearchPaths(const std::vector<std::string>& config_paths = {});

// The default folder alone.
std::string DefaultPluginDir();

// Finds backend |name| in |search_paths|. NotFound lists every folder searched.
StatusOr<std::string> FindPluginFile(const std::string& name,
                                     const std::vector<std::string>& search_paths);

// Every "hwinfer-*.so" in |search_paths|; the first folder wins for a repeated name.
std::vector<std::string> DiscoverPluginFiles(const std::vector<std::string>& search_paths);

struct PluginIdentity {
  std::string path;     // the file loaded
  std::string name;     // the plugin's own name ("cpu")
  std::string version;  // the plugin's version string
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
};

class Plugin : public std::enable_shared_from_this<Plugin> {
 public:
  // Loads |path| with dlopen(RTLD_NOW | RTLD_LOCAL), negotiates the ABI and calls plugin_init
  // with |options|. Errors (each naming the file): NotFound (no such file), InvalidArgument (not a
  // shared library / dlopen failed, with dlerror's text), NotFound (missing query symbol),
  // Unsupported (ABI major mismatch, naming both), the plugin's own error on init failure, and
  // InvalidArgument for a malformed table (missing required slots).
  // |on_phase|, when set, is called just before each step that runs the plugin's own code:
  // "dlopen (the library's constructors)", "hwinfer_plugin_query", "plugin_init" — so a caller
  // watching from another process (`hwinfer plugin check`) can say where a plugin died or hung.
  static StatusOr<std::shared_ptr<Plugin>> Load(
      const std::string& path, const OptionMap& options = {},
      const std::function<void(const char* phase)>& on_phase = nullptr);

  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;
  // Destroys the instance (the plugin stops its threads) and closes the library.
  ~Plugin();

  const PluginIdentity& identity() const { return identity_; }
  const std::string& name() const { return identity_.name; }
  const std::string& path() const { return identity_.path; }

  // Host-sized copies of the plugin's tables; slots the plugin does not provide are NULL.
  const hwinfer_plugin_api& api() const { return api_; }
  const hwinfer_kernel_table& kernels() const { return kernels_; }
  hwinfer_plugin* handle() const { return instance_; }

  // The plugin's device count. InvalidArgument when it reports more than kMaxDevicesPerPlugin
  // (a broken plugin must not make the host allocate for billions of devices).
  StatusOr<uint32_t> DeviceCount() const;
  StatusOr<DeviceInfo> GetDeviceInfo(uint32_t ordinal) const;
  // Opens device |ordinal|. The Device keeps this Plugin alive.
  StatusOr<std::shared_ptr<Device>> OpenDevice(uint32_t ordinal, const OptionMap& options = {});

 private:
  Plugin() = default;

  void* library_ = nullptr;
  hwinfer_plugin* instance_ = nullptr;
  PluginIdentity identity_;
  hwinfer_plugin_api api_{};
  hwinfer_kernel_table kernels_{};
};

// The most devices one plugin may report (a node has a few dozen at most).
inline constexpr uint32_t kMaxDevicesPerPlugin = 1024;

// Converts a plugin error into a Status and destroys it. NULL means OK. |context| is prefixed
// ("cpu: buffer_alloc: <message>").
Status ConsumePluginError(hwinfer_error* error, const std::string& context);

}  // namespace hwinfer
