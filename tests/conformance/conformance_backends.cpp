// conformance_backends.cpp — finding and loading the backends under test, the process-wide
// parameter list and the device cache. Must not run or judge tests, and must not hide devices
// that two plugins share (each plugin's view of a device is tested on its own).
#include "conformance_backends.h"

#include <filesystem>
#include <map>
#include <utility>

#include "hwinfer/registry.h"

namespace hwinfer::conformance {
namespace {

namespace fs = std::filesystem;

std::vector<ConformanceBackend>& Storage() {
  static std::vector<ConformanceBackend> backends;
  return backends;
}

std::vector<BackendParam>& ParamStorage() {
  static std::vector<BackendParam> params;
  return params;
}

// "hwinfer-cuda.so" -> "cuda"; any other file name -> its stem.
std::string NameFromFile(const std::string& path) {
  std::string stem = fs::path(path).stem().string();
  if (stem.rfind("hwinfer-", 0) == 0) stem = stem.substr(8);
  return stem;
}

// GoogleTest parameter names may hold only letters, digits and '_'.
std::string Sanitize(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out.empty() ? "backend" : out;
}

ConformanceBackend NoDevice(const std::string& name, const std::string& path,
                            std::shared_ptr<Plugin> plugin, const std::string& why) {
  ConformanceBackend backend;
  backend.name = name;
  backend.plugin_path = path;
  backend.plugin = std::move(plugin);
  backend.no_device_reason = name + ": 0 devices" + (why.empty() ? "" : ": " + why);
  return backend;
}

// Sets |backend|'s simulated_reason when its device is a simulated one (timing model only: there
// are no numerics to compare with the CPU reference).
void MarkSimulated(ConformanceBackend& backend) {
  auto info = backend.plugin->GetDeviceInfo(backend.ordinal);
  if (info.ok() && info->device_type == HWINFER_DEVICE_TYPE_VIRTUAL) {
    backend.simulated_reason = "simulated device: timing model only";
  }
}

// Every device of a loaded plugin, or one no-device entry when it has none.
void AddPluginDevices(const std::shared_ptr<Plugin>& plugin, std::vector<ConformanceBackend>& out) {
  auto count = plugin->DeviceCount();
  if (!count.ok() || *count == 0) {
    out.push_back(NoDevice(plugin->name(), plugin->path(), plugin,
                           count.ok() ? "" : count.status().message()));
    return;
  }
  for (uint32_t ordinal = 0; ordinal < *count; ++ordinal) {
    ConformanceBackend backend;
    backend.name = plugin->name();
    backend.plugin_path = plugin->path();
    backend.plugin = plugin;
    backend.ordinal = ordinal;
    MarkSimulated(backend);
    out.push_back(std::move(backend));
  }
}

// Loads |path|; UNAVAILABLE (no driver, no device) becomes a no-device backend.
Status LoadInto(const std::string& path, const OptionMap& options, Discovery& discovery) {
  auto plugin = Plugin::Load(path, options);
  if (plugin.ok()) {
    AddPluginDevices(*plugin, discovery.backends);
    return Status::Ok();
  }
  if (plugin.status().code() == StatusCode::kUnavailable) {
    discovery.backends.push_back(
        NoDevice(NameFromFile(path), path, nullptr, plugin.status().message()));
    return Status::Ok();
  }
  return plugin.status();
}

StatusOr<Discovery> FromConfig(const BackendSelection& selection) {
  HWINFER_ASSIGN_OR_RETURN(RuntimeConfig config, LoadRuntimeConfig(selection.config_file));
  config.plugin_paths.insert(config.plugin_paths.begin(), selection.plugin_paths.begin(),
                             selection.plugin_paths.end());
  if (!selection.backend.empty()) {
    std::vector<BackendConfig> kept;
    for (const BackendConfig& backend : config.backends) {
      if (backend.name == selection.backend) kept.push_back(backend);
    }
    if (kept.empty()) {
      return NotFound("backend '" + selection.backend + "' is not in " + selection.config_file);
    }
    config.backends = std::move(kept);
  }
  for (BackendConfig& backend : config.backends) {
    for (const auto& [key, value] : selection.plugin_options) backend.options[key] = value;
  }
  config.allow_duplicate_devices = true;  // test every plugin's view of a shared device
  HWINFER_ASSIGN_OR_RETURN(Registry registry, Registry::FromConfig(config));
  Discovery discovery;
  for (const std::shared_ptr<Plugin>& plugin : registry.plugins()) {
    size_t selected = 0;
    for (const RegisteredDevice& device : registry.devices()) {
      if (device.plugin != plugin) continue;
      ConformanceBackend backend;
      backend.name = plugin->name();
      backend.plugin_path = plugin->path();
      backend.plugin = plugin;
      backend.ordinal = device.ordinal;
      backend.device_options = device.options;
      MarkSimulated(backend);
      discovery.backends.push_back(std::move(backend));
      ++selected;
    }
    if (selected == 0) {
      discovery.backends.push_back(
          NoDevice(plugin->name(), plugin->path(), plugin, "the config selects none"));
    }
  }
  return discovery;
}

}  // namespace

Status AddPluginOption(const std::string& text, OptionMap& options) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    return InvalidArgument("--option '" + text + "': expected KEY=VALUE (a plugin option, e.g. " +
                           "gemm=builtin)");
  }
  options[text.substr(0, equals)] = text.substr(equals + 1);
  return Status::Ok();
}

std::string ConformanceBackend::label() const {
  if (!has_device()) return name + " (no device)";
  return name + ":" + std::to_string(ordinal);
}

StatusOr<Discovery> DiscoverBackends(const BackendSelection& selection) {
  if (!selection.plugin_file.empty()) {
    Discovery discovery;
    HWINFER_RETURN_IF_ERROR(LoadInto(selection.plugin_file, selection.plugin_options, discovery));
    return discovery;
  }
  if (!selection.config_file.empty()) return FromConfig(selection);

  const std::vector<std::string> search_paths = PluginSearchPaths(selection.plugin_paths);
  Discovery discovery;
  if (!selection.backend.empty()) {
    HWINFER_ASSIGN_OR_RETURN(std::string path, FindPluginFile(selection.backend, search_paths));
    HWINFER_RETURN_IF_ERROR(LoadInto(path, selection.plugin_options, discovery));
    return discovery;
  }
  for (const std::string& path : DiscoverPluginFiles(search_paths)) {
    Status loaded = LoadInto(path, selection.plugin_options, discovery);
    if (!loaded.ok()) discovery.load_errors.push_back(std::move(loaded));
  }
  return discovery;
}

void PrintTo(const BackendParam& param, std::ostream* os) { *os << param.test_name; }

std::string BackendParamName(const testing::TestParamInfo<BackendParam>& info) {
  return info.param.test_name;
}

void SetBackends(std::vector<ConformanceBackend> backends) {
  std::map<std::string, int> uses;
  ParamStorage().clear();
  for (size_t i = 0; i < backends.size(); ++i) {
    ConformanceBackend& backend = backends[i];
    std::string name = Sanitize(backend.name) + "_" +
                       (backend.has_device() ? std::to_string(backend.ordinal) : "nodevice");
    if (int seen = uses[name]++; seen > 0) name += "_" + std::to_string(seen + 1);
    backend.test_name = name;
    ParamStorage().push_back(BackendParam{i, name});
  }
  Storage() = std::move(backends);
}

std::vector<ConformanceBackend>& Backends() { return Storage(); }

const std::vector<BackendParam>& BackendParams() { return ParamStorage(); }

void ClearBackends() {
  // Devices first (each keeps its plugin alive), then the plugins, in reverse load order.
  for (ConformanceBackend& backend : Storage()) backend.device.reset();
  while (!Storage().empty()) Storage().pop_back();
}

StatusOr<std::shared_ptr<Device>> OpenBackendDevice(size_t index) {
  ConformanceBackend& backend = Storage().at(index);
  if (!backend.has_device()) return Unavailable(backend.no_device_reason);
  if (!backend.open_attempted) {
    backend.open_attempted = true;
    auto opened = backend.plugin->OpenDevice(backend.ordinal, backend.device_options);
    if (opened.ok()) {
      backend.device = *opened;
    } else {
      backend.open_status = opened.status();
    }
  }
  if (!backend.open_status.ok()) return backend.open_status;
  return backend.device;
}

}  // namespace hwinfer::conformance
