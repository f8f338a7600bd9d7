// plugin_entry.cpp — the sim plugin's one exported symbol (hwinfer_plugin_query, made by the plugin
// kit from SimBackend) and plugin_init's part: the options and the hardware file.
//
// Options (plugin_init):
//   hardware = path to a configs/hardware/*.yaml file (hwinfer/hardware_spec.h), or a bare name
//              ("a100-80gb") searched like the default; or a comma-separated list of them, one
//              per device (h100-sxm,a100-80gb: two different devices). Default:
//              h100-sxm.yaml, searched in order in (1) <plugin dir>/<relative path to the installed
//              <datadir>/hwinfer/hardware> (a relocated install), (2) the absolute installed
//              folder, (3) the source tree's configs/hardware (the build tree). None found is
//              UNAVAILABLE naming every path searched; a given file that does not load is
//              INVALID_ARGUMENT naming it.
//   devices = number of identical devices, 1..64 (default 1, or the hardware list's length, which
//              it must then equal)
//   backed_limit_mib = buffers up to this many MiB get host memory; bigger ones are virtual
//              (default 8192; backing is lazily materialised, see memory.cpp)
// Must not print, abort or throw across the ABI.
#include <dlfcn.h>

#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwinfer/kit/plugin_api.h"
#include "hwinfer/kit/plugin_log.h"
#include "hwinfer/kit/plugin_options.h"
#include "sim_internal.h"

#ifndef HWINFER_SIM_HARDWARE_FROM_PLUGIN_DIR
#define HWINFER_SIM_HARDWARE_FROM_PLUGIN_DIR "../../../share/hwinfer/hardware"
#endif
#ifndef HWINFER_SIM_HARDWARE_INSTALL_DIR
#define HWINFER_SIM_HARDWARE_INSTALL_DIR ""
#endif
#ifndef HWINFER_SIM_HARDWARE_SOURCE_DIR
#define HWINFER_SIM_HARDWARE_SOURCE_DIR ""
#endif

namespace hwinfer::sim {

namespace {

constexpr const char* kDefaultHardwareFile = "h100-sxm.yaml";
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kDefaultMemoryBytes = uint64_t{80} << 30;  // 80 GiB when memory_gib is absent
constexpr uint64_t kMaxDevices = 64;
constexpr uint64_t kMaxBackedMib = uint64_t{1} << 20;  // 1 TiB

struct PluginOptions {
  std::vector<std::string> hardware;  // one file or name per listed device; empty = the default
  uint64_t devices = 0;               // 0 = not given
  uint64_t backed_limit_mib = 8192;
};

// "a,b" -> {"a", "b"}; false when an item is empty.
bool split_list(std::string_view text, std::vector<std::string>* out) {
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (item.empty()) return false;
    out->emplace_back(item);
    if (comma == std::string_view::npos) return true;
    start = comma + 1;
  }
}

hwinfer_error* parse_plugin_options(const hwinfer_option* options, size_t n_options,
                                    PluginOptions* out) {
  for (size_t i = 0; i < n_options; ++i) {
    const hwinfer_option& option = options[i];
    if (hwinfer_error* error = backend::check_option(kPluginName, "plugin_init", option, i)) {
      return error;
    }
    const std::string_view key = option.key;
    if (key == "hardware") {
      out->hardware.clear();
      if (!split_list(option.value, &out->hardware)) {
        return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                  "sim plugin_init: option 'hardware' has an empty item ('%s'); "
                                  "expected the path or name of a configs/hardware/*.yaml file, "
                                  "or one per device separated by commas",
                                  option.value);
      }
    } else if (key == "devices") {
      if (!backend::parse_uint(option.value, 1, kMaxDevices, &out->devices)) {
        return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                  "sim plugin_init: option 'devices' has invalid value '%s'; "
                                  "expected an integer from 1 to %" PRIu64,
                                  option.value, kMaxDevices);
      }
    } else if (key == "backed_limit_mib") {
      if (!backend::parse_uint(option.value, 0, kMaxBackedMib, &out->backed_limit_mib)) {
        return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                  "sim plugin_init: option 'backed_limit_mib' has invalid value "
                                  "'%s'; expected an integer from 0 to %" PRIu64,
                                  option.value, kMaxBackedMib);
      }
    } else {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "sim plugin_init: unknown option '%s' (value '%s'); the sim "
                                "plugin accepts: hardware, devices, backed_limit_mib",
                                option.key, option.value);
    }
  }
  return nullptr;
}

// The folder this plugin file lives in ("" when dladdr cannot tell).
std::string plugin_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<const void*>(&plugin_dir), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

// Where a hardware file called |file_name| may be, in search order.
std::vector<std::string> hardware_candidates(const std::string& file_name) {
  std::vector<std::string> candidates;
  if (const std::string dir = plugin_dir(); !dir.empty()) {
    candidates.push_back(
        (std::filesystem::path(dir) / HWINFER_SIM_HARDWARE_FROM_PLUGIN_DIR / file_name)
            .lexically_normal()
            .string());
  }
  for (const char* dir : {HWINFER_SIM_HARDWARE_INSTALL_DIR, HWINFER_SIM_HARDWARE_SOURCE_DIR}) {
    if (dir[0] != '\0') candidates.push_back(std::string(dir) + "/" + file_name);
  }
  return candidates;
}

// |option|: a path to a hardware file, or a bare name ("a100-80gb") looked up like the default.
hwinfer_error* load_hardware(const std::string& option, HardwareSpec* out) {
  std::string path = option;
  const bool bare_name =
      !option.empty() && option.find('/') == std::string::npos && !option.ends_with(".yaml");
  if (path.empty() || bare_name) {
    const std::string file_name = bare_name ? option + ".yaml" : kDefaultHardwareFile;
    path.clear();
    std::string searched;
    for (const std::string& candidate : hardware_candidates(file_name)) {
      searched += (searched.empty() ? "" : ", ") + candidate;
      std::error_code error;
      if (std::filesystem::is_regular_file(candidate, error)) {
        path = candidate;
        break;
      }
    }
    if (path.empty()) {
      return hwinfer_make_error(
          bare_name ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNAVAILABLE,
          "sim plugin_init: hardware '%s' not found (a path, or a name from configs/hardware); "
          "searched: %s",
          bare_name ? option.c_str() : kDefaultHardwareFile, searched.c_str());
    }
  }
  StatusOr<HardwareSpec> spec = LoadHardwareSpec(path);
  if (!spec.ok()) {
    return hwinfer_make_error(
        option.empty() ? HWINFER_STATUS_UNAVAILABLE : HWINFER_STATUS_INVALID_ARGUMENT,
        "sim plugin_init: cannot use hardware file '%s': %s", path.c_str(),
        spec.status().message().c_str());
  }
  *out = std::move(spec).value();
  return nullptr;
}

}  // namespace

hwinfer_error* SimBackend::init(const hwinfer_host_api& host, const hwinfer_option* options,
                                size_t n_options, std::unique_ptr<hwinfer_plugin>* out) {
  PluginOptions parsed;
  if (hwinfer_error* error = parse_plugin_options(options, n_options, &parsed)) return error;
  const size_t listed = parsed.hardware.size();
  if (listed > 1 && parsed.devices != 0 && parsed.devices != listed) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim plugin_init: option 'devices' is %" PRIu64
                              " but 'hardware' lists %zu files; give one hardware file for "
                              "identical devices, or one per device",
                              parsed.devices, listed);
  }
  if (listed > kMaxDevices) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "sim plugin_init: option 'hardware' lists %zu files; at most %" PRIu64
                              " devices",
                              listed, kMaxDevices);
  }
  if (listed == 0) parsed.hardware.emplace_back();  // the default file
  auto plugin = std::make_unique<hwinfer_plugin>();
  plugin->device_count =
      static_cast<uint32_t>(listed > 1 ? listed : (parsed.devices != 0 ? parsed.devices : 1));
  for (const std::string& hardware : parsed.hardware) {
    HardwareSpec spec;
    if (hwinfer_error* error = load_hardware(hardware, &spec)) return error;
    plugin->specs.push_back(std::move(spec));
  }
  plugin->specs.resize(plugin->device_count, plugin->specs.front());  // identical devices
  for (const HardwareSpec& spec : plugin->specs) {
    plugin->memory_total_bytes.push_back(
        spec.memory_bytes > 0 ? static_cast<uint64_t>(spec.memory_bytes) : kDefaultMemoryBytes);
  }
  plugin->backed_limit_bytes = parsed.backed_limit_mib * kMiB;
  plugin->allocated.assign(plugin->device_count, 0);
  for (uint32_t i = 0; i < plugin->device_count; ++i) {
    const HardwareSpec& spec = plugin->spec(i);
    backend::log_message(&host, HWINFER_LOG_INFO, kPluginName,
                         "sim plugin %s: device %" PRIu32
                         " simulates '%s' from %s (%.0f GB/s, %" PRIu64
                         " MiB backed per buffer at most; timestamps are virtual)",
                         HWINFER_SIM_PLUGIN_VERSION, i, spec.name.c_str(), spec.file.c_str(),
                         spec.peak_bandwidth_bytes_per_s / 1e9, parsed.backed_limit_mib);
  }
  *out = std::move(plugin);
  return nullptr;
}

}  // namespace hwinfer::sim

HWINFER_KIT_PLUGIN(hwinfer::sim::SimBackend);
