// hwinfer/registry.h — the set of loaded plugins and the devices the config selected.
//
// Built from a RuntimeConfig (the plugins it names, the devices it selects) or from every plugin
// found on the search path. A physical device reported by two plugins (same UUID) is listed once
// — under the plugin with the higher priority, then the earlier one — unless the config sets
// allow_duplicate_devices. Unknown backends and device selectors that match nothing are errors
// naming the config file:line:column. The registry opens devices only when asked.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/config.h"
#include "hwinfer/device.h"
#include "hwinfer/plugin_loader.h"
#include "hwinfer/status.h"

namespace hwinfer {

struct RegisteredDevice {
  std::shared_ptr<Plugin> plugin;
  uint32_t ordinal = 0;
  DeviceInfo info;    // with the declared hardware spec applied, if any
  OptionMap options;  // device_open options from the config
  int priority = 0;
  // "cpu:0"
  std::string id() const;
};

// A device left out because another plugin already reports the same UUID.
struct HiddenDuplicate {
  std::string id;        // "vulkan:0"
  std::string shown_as;  // "cuda:0"
  std::string uuid;
};

class Registry {
 public:
  // Loads the plugins |config| names and selects its devices.
  static StatusOr<Registry> FromConfig(const RuntimeConfig& config);
  // Loads every plugin file found in |search_paths| (no config: all devices of all plugins).
  // A plugin that fails to load, count or describe its devices is skipped with a warning naming
  // the file and the reason (an info line when its init answers UNAVAILABLE: its driver is
  // missing); only FromConfig treats a failing plugin as an error, since a config asks for it.
  static StatusOr<Registry> FromSearchPaths(const std::vector<std::string>& search_paths);

  const std::vector<std::shared_ptr<Plugin>>& plugins() const { return plugins_; }
  // Selected devices, highest priority first, then config order, then ordinal.
  const std::vector<RegisteredDevice>& devices() const { return devices_; }
  const std::vector<HiddenDuplicate>& hidden_duplicates() const { return hidden_; }

  // Finds a device by "backend:ordinal", list index, device name or UUID. NotFound lists the
  // available ids.
  StatusOr<const RegisteredDevice*> Find(const std::string& selector) const;

  // Opens a device (once; later calls return the same Device).
  StatusOr<std::shared_ptr<Device>> Open(const RegisteredDevice& device);

 private:
  std::vector<std::shared_ptr<Plugin>> plugins_;
  std::vector<RegisteredDevice> devices_;
  std::vector<HiddenDuplicate> hidden_;
  std::map<std::string, std::shared_ptr<Device>> opened_;
};

}  // namespace hwinfer
