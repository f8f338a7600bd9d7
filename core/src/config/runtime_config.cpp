// runtime_config.cpp — parses the runtime section of the YAML config (schema in config.h) into a
// RuntimeConfig: plugin search paths, log level, and per backend its plugin path, priority,
// options and device selectors (with their hardware spec files, loaded here).
//
// Strict and syntactic only: it must not load plugins, enumerate devices or decide whether a
// selector matches anything; the Registry does that later with the SourceLocations kept here.
// Every error is one line starting with file:line:column.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "config/yaml_checks.h"
#include "hwinfer/config.h"

namespace hwinfer {
namespace {

using config_internal::ErrorAt;
using config_internal::LocationOf;
using config_internal::MapEntry;
using config_internal::Quote;
using config_internal::ValueLocation;

const std::vector<std::string_view> kRuntimeKeys = {"plugin_paths", "allow_duplicate_devices",
                                                    "log_level", "backends"};
// Owned by later sections; accepted at the top level and ignored by this parser.
const std::vector<std::string_view> kLaterSectionKeys = {
    "model", "workload", "scheduler", "metrics", "output", "backend", "device"};
const std::vector<std::string_view> kBackendKeys = {"name", "path", "priority", "options",
                                                    "devices"};
const std::vector<std::string_view> kDeviceKeys = {"select", "options", "hardware"};
const std::vector<std::string_view> kLogLevels = {"debug", "info", "warning", "error"};

// What every reader needs: the file name for locations and the folder relative paths resolve to.
struct ParseContext {
  std::string file;
  std::string base_dir;
};

// The lowercase canonical UUID when |text| is 8-4-4-4-12 hex in any case (optionally prefixed
// "GPU-", as nvidia-smi prints it); nullopt otherwise.
std::optional<std::string> CanonicalUuid(std::string_view text) {
  if (text.size() == 40 && (text.starts_with("GPU-") || text.starts_with("gpu-"))) {
    text.remove_prefix(4);
  }
  if (text.size() != 36) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool dash_position = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_position ? c != '-' : !std::isxdigit(c)) return std::nullopt;
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

bool IsBackendName(const std::string& name) {
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return !name.empty();
}

// A bare `-` list item is null, and yaml-cpp marks it at the next token (possibly the next item),
// so it is reported at the list with its 1-based position instead.
Status CheckItemNotEmpty(const ParseContext& ctx, const MapEntry& list, const YAML::Node& item,
                         size_t index, const std::string& expected) {
  if (!item.IsNull()) return Status::Ok();
  return ErrorAt(ValueLocation(ctx.file, list), "item " + std::to_string(index + 1) + " of " +
                                                    Quote(list.key) + " is empty; expected " +
                                                    expected);
}

// `options:` — a map of scalars, each stringified as written.
StatusOr<OptionMap> ReadOptions(const ParseContext& ctx, const MapEntry& entry) {
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> items,
      config_internal::ReadMap(ctx.file, entry.value, ValueLocation(ctx.file, entry), "'options'",
                               /*allowed=*/{}));
  OptionMap options;
  for (const MapEntry& item : items) {
    if (!item.value.IsScalar()) {
      return ErrorAt(ValueLocation(ctx.file, item),
                     "option " + Quote(item.key) +
                         " must be a scalar (string, number or true/false); got " +
                         config_internal::Describe(item.value));
    }
    options[item.key] = item.value.Scalar();
  }
  return options;
}

// `select:` — a plain non-negative integer is an index; 8-4-4-4-12 hex is a UUID; else a name.
StatusOr<DeviceSelector> ReadSelector(const ParseContext& ctx, const MapEntry& entry) {
  DeviceSelector selector;
  selector.location = ValueLocation(ctx.file, entry);
  if (!entry.value.IsScalar() || entry.value.Scalar().empty()) {
    return ErrorAt(selector.location, "'select' must be a device index, name or UUID; got " +
                                          config_internal::Describe(entry.value));
  }
  const std::string& text = entry.value.Scalar();
  // A quoted "0" is a string in YAML, so it names a device rather than indexing one.
  const bool plain = entry.value.Tag() != "!";
  if (const std::optional<int64_t> index = config_internal::ParseInteger(text); plain && index) {
    if (*index < 0 || *index > std::numeric_limits<int>::max()) {
      return ErrorAt(selector.location, "device index must be an integer >= 0; got " + Quote(text));
    }
    selector.kind = DeviceSelector::Kind::kIndex;
    selector.index = static_cast<int>(*index);
    selector.text = text;
  } else if (const std::optional<std::string> uuid = CanonicalUuid(text)) {
    selector.kind = DeviceSelector::Kind::kUuid;
    selector.text = *uuid;
  } else {
    selector.kind = DeviceSelector::Kind::kName;
    selector.text = text;
  }
  return selector;
}

bool SameSelector(const DeviceSelector& a, const DeviceSelector& b) {
  if (a.kind != b.kind) return false;
  return a.kind == DeviceSelector::Kind::kIndex ? a.index == b.index : a.text == b.text;
}

StatusOr<DeviceConfig> ReadDevice(const ParseContext& ctx, const YAML::Node& node) {
  DeviceConfig device;
  device.location = LocationOf(ctx.file, node);
  if (node.IsScalar()) {
    return ErrorAt(device.location,
                   "device entry must be a map like '- select: <index, name or UUID>'; got " +
                       config_internal::Describe(node));
  }
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(ctx.file, node, device.location, "device entry", kDeviceKeys));
  HWINFER_RETURN_IF_ERROR(
      config_internal::RequireKey(ctx.file, node, "device entry", entries, "select"));
  for (const MapEntry& entry : entries) {
    if (entry.key == "select") {
      HWINFER_ASSIGN_OR_RETURN(device.select, ReadSelector(ctx, entry));
    } else if (entry.key == "options") {
      HWINFER_ASSIGN_OR_RETURN(device.options, ReadOptions(ctx, entry));
    } else if (entry.key == "hardware") {
      HWINFER_ASSIGN_OR_RETURN(const std::string path, config_internal::GetString(ctx.file, entry));
      StatusOr<HardwareSpec> spec =
          LoadHardwareSpec(config_internal::ResolvePath(ctx.base_dir, path));
      if (!spec.ok()) {
        // Keep the hardware file's own location first; say where the config named it.
        return Status(spec.status().code(), spec.status().message() + " (hardware file named at " +
                                                ValueLocation(ctx.file, entry).ToString() + ")");
      }
      device.hardware = std::move(spec).value();
    }
  }
  return device;
}

// `devices:` — "all" or a non-empty list of device entries, no selector twice.
Status ReadDevices(const ParseContext& ctx, const MapEntry& entry, BackendConfig& backend) {
  const std::string expected = "'devices' must be 'all' or a non-empty list of device entries";
  if (entry.value.IsScalar() && entry.value.Scalar() == "all") {
    backend.all_devices = true;
    return Status::Ok();
  }
  if (!entry.value.IsSequence() || entry.value.size() == 0) {
    return ErrorAt(ValueLocation(ctx.file, entry),
                   expected + "; got " + config_internal::Describe(entry.value));
  }
  backend.all_devices = false;
  for (const YAML::Node& item : entry.value) {
    HWINFER_RETURN_IF_ERROR(
        CheckItemNotEmpty(ctx, entry, item, backend.devices.size(), "a map with 'select'"));
    HWINFER_ASSIGN_OR_RETURN(DeviceConfig device, ReadDevice(ctx, item));
    for (const DeviceConfig& earlier : backend.devices) {
      if (SameSelector(earlier.select, device.select)) {
        return ErrorAt(device.select.location,
                       "device " + Quote(device.select.text) + " is selected twice in backend " +
                           Quote(backend.name) + " (first at " +
                           earlier.select.location.ToString() + "); select each device once");
      }
    }
    backend.devices.push_back(std::move(device));
  }
  return Status::Ok();
}

StatusOr<BackendConfig> ReadBackend(const ParseContext& ctx, const YAML::Node& node) {
  BackendConfig backend;
  backend.location = LocationOf(ctx.file, node);
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(ctx.file, node, backend.location, "backend entry", kBackendKeys));
  HWINFER_RETURN_IF_ERROR(
      config_internal::RequireKey(ctx.file, node, "backend entry", entries, "name"));
  // The name first, so later messages (duplicate devices) can use it.
  for (const MapEntry& entry : entries) {
    if (entry.key != "name") continue;
    backend.name_location = ValueLocation(ctx.file, entry);
    HWINFER_ASSIGN_OR_RETURN(backend.name, config_internal::GetString(ctx.file, entry));
    if (!IsBackendName(backend.name)) {
      return ErrorAt(backend.name_location,
                     "'name' must be a backend name of letters, digits, '-' or '_' (the plugin "
                     "is hwinfer-<name>.so); got " +
                         Quote(backend.name));
    }
  }
  for (const MapEntry& entry : entries) {
    if (entry.key == "path") {
      HWINFER_ASSIGN_OR_RETURN(const std::string path, config_internal::GetString(ctx.file, entry));
      backend.path = config_internal::ResolvePath(ctx.base_dir, path);
    } else if (entry.key == "priority") {
      HWINFER_ASSIGN_OR_RETURN(const int64_t priority,
                               config_internal::GetInteger(ctx.file, entry));
      if (priority < std::numeric_limits<int>::min() ||
          priority > std::numeric_limits<int>::max()) {
        return ErrorAt(ValueLocation(ctx.file, entry),
                       "'priority' must be an integer that fits in 32 bits; got " +
                           Quote(entry.value.Scalar()));
      }
      backend.priority = static_cast<int>(priority);
    } else if (entry.key == "options") {
      HWINFER_ASSIGN_OR_RETURN(backend.options, ReadOptions(ctx, entry));
    } else if (entry.key == "devices") {
      HWINFER_RETURN_IF_ERROR(ReadDevices(ctx, entry, backend));
    }
  }
  return backend;
}

Status ReadBackends(const ParseContext& ctx, const MapEntry& entry, RuntimeConfig& config) {
  if (!entry.value.IsSequence() || entry.value.size() == 0) {
    return ErrorAt(ValueLocation(ctx.file, entry),
                   "'backends' must be a non-empty list of backend entries (each with 'name'); "
                   "got " +
                       config_internal::Describe(entry.value));
  }
  for (const YAML::Node& item : entry.value) {
    HWINFER_RETURN_IF_ERROR(
        CheckItemNotEmpty(ctx, entry, item, config.backends.size(), "a map with 'name'"));
    HWINFER_ASSIGN_OR_RETURN(BackendConfig backend, ReadBackend(ctx, item));
    for (const BackendConfig& earlier : config.backends) {
      if (earlier.name == backend.name) {
        return ErrorAt(backend.name_location,
                       "backend " + Quote(backend.name) + " is listed twice (first at " +
                           earlier.name_location.ToString() + "); list each backend once");
      }
    }
    config.backends.push_back(std::move(backend));
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> ReadPluginPaths(const ParseContext& ctx, const MapEntry& entry) {
  if (!entry.value.IsSequence()) {
    return ErrorAt(
        ValueLocation(ctx.file, entry),
        "'plugin_paths' must be a list of folders; got " + config_internal::Describe(entry.value));
  }
  std::vector<std::string> paths;
  for (const YAML::Node& item : entry.value) {
    const MapEntry as_entry{"plugin_paths[" + std::to_string(paths.size()) + "]", item, item};
    HWINFER_ASSIGN_OR_RETURN(const std::string path,
                             config_internal::GetString(ctx.file, as_entry));
    paths.push_back(config_internal::ResolvePath(ctx.base_dir, path));
  }
  return paths;
}

StatusOr<RuntimeConfig> ReadRuntimeConfig(const ParseContext& ctx, const YAML::Node& root) {
  RuntimeConfig config;
  config.file = ctx.file;
  std::vector<std::string_view> known(KnownTopLevelConfigKeys().begin(),
                                      KnownTopLevelConfigKeys().end());
  HWINFER_ASSIGN_OR_RETURN(const std::vector<MapEntry> entries,
                           config_internal::ReadMap(ctx.file, root, LocationOf(ctx.file, root),
                                                    "top-level config", known));
  // `backend:` (the bench's one backend name) is known, so a misspelt `backends:` list would
  // otherwise only read "missing 'backends'".
  const bool has_backends = std::any_of(entries.begin(), entries.end(),
                                        [](const MapEntry& e) { return e.key == "backends"; });
  for (const MapEntry& entry : entries) {
    if (!has_backends && entry.key == "backend" && !entry.value.IsScalar()) {
      return ErrorAt(LocationOf(ctx.file, entry.key_node),
                     "unknown key 'backend' in top-level config; did you mean 'backends'? "
                     "('backend' takes one backend name for a benchmark)");
    }
  }
  HWINFER_RETURN_IF_ERROR(
      config_internal::RequireKey(ctx.file, root, "top-level config", entries, "backends"));
  for (const MapEntry& entry : entries) {
    if (entry.key == "plugin_paths") {
      HWINFER_ASSIGN_OR_RETURN(config.plugin_paths, ReadPluginPaths(ctx, entry));
    } else if (entry.key == "allow_duplicate_devices") {
      HWINFER_ASSIGN_OR_RETURN(config.allow_duplicate_devices,
                               config_internal::GetBool(ctx.file, entry));
    } else if (entry.key == "log_level") {
      const bool valid =
          entry.value.IsScalar() &&
          std::find(kLogLevels.begin(), kLogLevels.end(), entry.value.Scalar()) != kLogLevels.end();
      if (!valid) {
        const std::optional<std::string> match =
            entry.value.IsScalar() ? config_internal::ClosestMatch(entry.value.Scalar(), kLogLevels)
                                   : std::nullopt;
        return ErrorAt(ValueLocation(ctx.file, entry),
                       "'log_level' must be one of: " + config_internal::JoinKeys(kLogLevels) +
                           "; got " + config_internal::Describe(entry.value) +
                           (match ? " (did you mean '" + *match + "'?)" : ""));
      }
      config.log_level = entry.value.Scalar();
    } else if (entry.key == "backends") {
      HWINFER_RETURN_IF_ERROR(ReadBackends(ctx, entry, config));
    }
    // Keys of later sections (model:, workload:, ...) are accepted and left to their parsers.
  }
  return config;
}

}  // namespace

const std::vector<std::string>& KnownTopLevelConfigKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> all(kRuntimeKeys.begin(), kRuntimeKeys.end());
    all.insert(all.end(), kLaterSectionKeys.begin(), kLaterSectionKeys.end());
    return all;
  }();
  return keys;
}

StatusOr<RuntimeConfig> ParseRuntimeConfig(const std::string& yaml_text,
                                           const std::string& display_name,
                                           const std::string& base_dir) {
  const ParseContext ctx{display_name, base_dir.empty() ? "." : base_dir};
  HWINFER_ASSIGN_OR_RETURN(const YAML::Node root,
                           config_internal::ParseSingleDocument(yaml_text, display_name,
                                                                "a map with a 'backends' list"));
  try {
    return ReadRuntimeConfig(ctx, root);
  } catch (const YAML::Exception& e) {
    // Not expected (the readers check types before converting); keep the no-throw contract.
    return InvalidArgument(display_name + ": unexpected YAML error: " + e.msg);
  }
}

StatusOr<RuntimeConfig> LoadRuntimeConfig(const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(const std::string text,
                           config_internal::ReadTextFile(path, "config file"));
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  return ParseRuntimeConfig(text, path, base_dir.empty() ? "." : base_dir);
}

}  // namespace hwinfer
