// tools/cli/device_json.h — JSON forms of plugin identities and device infos, shared by
// `hwinfer devices`, `hwinfer probe` and `hwinfer plugin check` so every command reports a device
// with the same keys. Formatting only.
#pragma once

#include <nlohmann/json.hpp>

#include "hwinfer/device.h"
#include "hwinfer/plugin_loader.h"

namespace hwinfer::cli {

nlohmann::json PluginJson(const Plugin& plugin);
nlohmann::json DeviceInfoJson(const DeviceInfo& info);
// Indented "key: value" lines for the human-readable listings.
void PrintDeviceInfo(const DeviceInfo& info, const char* indent);

}  // namespace hwinfer::cli
