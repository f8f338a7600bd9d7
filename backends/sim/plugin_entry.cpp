// plugin_entry.cpp — the sim plugin's one exported symbol (hwinfer_plugin_query), its static API
// table, and the plugin lifecycle: plugin_init parses the options and reads the hardware file.
//
// Options (plugin_init):
//   hardware = path to a configs/hardware/*.yaml file (hwinfer/hardware_spec.h), or a bare name
//              ("a100-80gb") searched like the default. Default:
//              h100-sxm.yaml, searched in order in (1) <plugin dir>/<relative path to the installed
//              <datadir>/hwinfer/hardware> (a relocated install), (2) the absolute installed
//              folder, (3) the source tree's configs/hardware (the build tree). None found is
//              UNAVAILABLE naming every path searched; a given file that does not load is
//              INVALID_ARGUMENT naming it.
//   devices = number of identical devices, 1..64 (default 1)
//   backed_limit_mib = buffers up to this many MiB get host memory; bigger ones are virtual
//              (default 8192; backing is lazily materialised, see memory.cpp)
// Must not print, abort or throw across the ABI.
#include <dlfcn.h>

#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "kit/plugin_log.h"
#include "kit/plugin_options.h"
#include "kit/plugin_query.h"
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
  std::string hardware;  // "" = the default file
  uint64_t devices = 1;
  uint64_t backed_limit_mib = 8192;
};

hwinfer_error* parse_plugin_options(const hwinfer_option* options, size_t n_options,
                                    PluginOptions* out) {
  if (hwinfer_error* error =
          backend::check_option_array(kPluginName, "plugin_init", options, n_options)) {
    return error;
  }
  for (size_t i = 0; i < n_options; ++i) {
    const hwinfer_option& option = options[i];
    if (hwinfer_error* error = backend::check_option(kPluginName, "plugin_init", option, i)) {
      return error;
    }
    const std::string_view key = option.key;
    if (key == "hardware") {
      if (option.value[0] == '\0') {
        return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                  "sim plugin_init: option 'hardware' is empty; expected the path "
                                  "of a configs/hardware/*.yaml file");
      }
      out->hardware = option.value;
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

const hwinfer_plugin_api kApi = {
    .struct_size = sizeof(hwinfer_plugin_api),
    .abi_major = HWINFER_ABI_MAJOR,
    .abi_minor = HWINFER_ABI_MINOR,
    .reserved0 = 0,
    .name = kPluginName,
    .version = HWINFER_SIM_PLUGIN_VERSION,
    .plugin_init = &plugin_init,
    .plugin_destroy = &plugin_destroy,
    .device_count = &device_count,
    .device_get_info = &device_get_info,
    .device_open = &device_open,
    .device_close = &device_close,
    .buffer_alloc = &buffer_alloc,
    .buffer_free = &buffer_free,
    .buffer_map = &buffer_map,
    .buffer_import_host = nullptr,  // not provided: the host uploads weights into our buffers
    .stream_create = &stream_create,
    .stream_destroy = &stream_destroy,
    .stream_synchronize = &stream_synchronize,
    .copy_h2d = &copy_h2d,
    .copy_d2h = &copy_d2h,
    .copy_d2d = &copy_d2d,
    .event_create = &event_create,
    .event_destroy = &event_destroy,
    .event_record = &event_record,
    .stream_wait_event = &stream_wait_event,
    .event_synchronize = &event_synchronize,
    .event_query = &event_query,
    .event_elapsed_ns = &event_elapsed_ns,
    .kernel_query = &kernel_query,
    .kernels = nullptr,  // set by hwinfer_plugin_query (kernel_table() lives in kernels.cpp)
    .stream_begin_capture = nullptr,  // graphs (ABI 1.1): not provided
    .stream_end_capture = nullptr,
    .graph_launch = nullptr,
    .graph_destroy = nullptr,
};

}  // namespace

void log_message(const hwinfer_host_api* host, uint32_t level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  backend::vlog_message(host, level, kPluginName, format, args);
  va_end(args);
}

hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                           size_t n_options, hwinfer_plugin** out) {
  return guarded("plugin_init", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(host, "plugin_init: host")) return error;
    if (hwinfer_error* error = require_non_null(out, "plugin_init: out")) return error;
    PluginOptions parsed;
    if (hwinfer_error* error = parse_plugin_options(options, n_options, &parsed)) return error;
    auto plugin = std::make_unique<hwinfer_plugin>();
    if (hwinfer_error* error = load_hardware(parsed.hardware, &plugin->spec)) return error;
    plugin->host = host;
    plugin->memory_total_bytes = plugin->spec.memory_bytes > 0
                                     ? static_cast<uint64_t>(plugin->spec.memory_bytes)
                                     : kDefaultMemoryBytes;
    plugin->backed_limit_bytes = parsed.backed_limit_mib * kMiB;
    plugin->device_count = static_cast<uint32_t>(parsed.devices);
    plugin->open.assign(plugin->device_count, false);
    plugin->allocated.assign(plugin->device_count, 0);
    log_message(host, HWINFER_LOG_INFO,
                "sim plugin %s: %" PRIu32 " simulated '%s' device%s from %s (%.0f GB/s, %" PRIu64
                " MiB backed per buffer at most; timestamps are virtual)",
                HWINFER_SIM_PLUGIN_VERSION, plugin->device_count, plugin->spec.name.c_str(),
                plugin->device_count == 1 ? "" : "s", plugin->spec.file.c_str(),
                plugin->spec.peak_bandwidth_bytes_per_s / 1e9, parsed.backed_limit_mib);
    *out = plugin.release();
    return nullptr;
  });
}

void plugin_destroy(hwinfer_plugin* plugin) {
  if (plugin == nullptr) return;
  try {
    for (uint32_t i = 0; i < plugin->device_count; ++i) {
      if (plugin->open[i]) {
        log_message(plugin->host, HWINFER_LOG_WARNING,
                    "sim plugin_destroy: device %" PRIu32
                    " is still open; the host must close it "
                    "first (its handle now dangles)",
                    i);
      }
    }
    delete plugin;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

}  // namespace hwinfer::sim

extern "C" HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(
    uint32_t abi_major, uint32_t host_max_minor, const hwinfer_host_api* host,
    const hwinfer_plugin_api** out_api) {
  (void)host_max_minor;  // minor 0 is the oldest there is
  (void)host;            // plugin_init receives it again
  if (hwinfer_error* error =
          hwinfer::backend::check_plugin_query(hwinfer::sim::kPluginName, abi_major, out_api)) {
    return error;
  }
  static const hwinfer_plugin_api api = [] {
    hwinfer_plugin_api table = hwinfer::sim::kApi;
    table.kernels = hwinfer::sim::kernel_table();
    return table;
  }();
  *out_api = &api;
  return nullptr;
}

static_assert(std::is_same_v<decltype(&hwinfer_plugin_query), hwinfer_plugin_query_fn>,
              "hwinfer_plugin_query must match plugin.h's hwinfer_plugin_query_fn");
