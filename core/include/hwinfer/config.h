// hwinfer/config.h — the runtime section of the YAML config: which plugins to load, which of
// their devices to use, priorities and options.
//
// Parsing is strict and purely syntactic: an unknown key, a wrong type or a missing required key
// is an error naming file:line:column and the expected form. Whether a backend's plugin exists or
// a device selector matches a device is checked later by the Registry, which reports the
// SourceLocation kept here. This file must not load plugins or touch devices.
//
//   plugin_paths: [dir, ...]          # optional; searched before HWINFER_PLUGIN_PATH
//   allow_duplicate_devices: false    # optional; keep a device two plugins both report
//   log_level: warning                # optional; debug | info | warning | error
//   backends:                         # required, non-empty list
//     - name: cpu                     # required; plugin hwinfer-cpu.so
//       path: /opt/x/hwinfer-cpu.so   # optional; exact plugin file instead of a search
//       priority: 0                   # optional int; higher first in device order
//       options: {threads: 2}         # optional map of scalars -> plugin_init options
//       devices: all                  # optional; "all" (default) or a list:
//         - select: 0                 # required; index, device name or UUID
//           options: {}               # optional map of scalars -> device_open options
//           hardware: configs/hardware/generic-cpu.yaml  # optional spec-peak file
//
// Details the schema above leaves open:
// - model, workload, scheduler, metrics, output, backend and device are top-level keys owned by
//   the bench config (hwinfer/bench_config.h); this parser accepts them without reading them
//   (KnownTopLevelConfigKeys lists them all).
// - select: a plain non-negative integer is an index; 8-4-4-4-12 hex (any case; nvidia-smi's
//   "GPU-" prefix allowed) is a UUID, kept in lowercase; any other text, including a quoted
//   number ("0"), is a device name.
// - Numbers may be written plain or quoted; flags are true | false; option values must be
//   scalars and are kept as written. A key may appear once per map.
// - Each backend name appears once; a device is selected at most once per backend; an empty
//   `devices: []` is an error (remove the backend instead).
// - A `hardware:` file that does not exist is NotFound; its errors name the hardware file's own
//   line first, then "(hardware file named at <config location>)".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hwinfer/hardware_spec.h"
#include "hwinfer/status.h"

namespace hwinfer {

// Where a value came from, for error messages. line and column are 1-based; 0 = unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  // "configs/default.yaml:12:7" (or just the file when line is unknown)
  std::string ToString() const;
};

// Scalars from an `options:` map, stringified ("2", "true", "fast").
using OptionMap = std::map<std::string, std::string>;

struct DeviceSelector {
  enum class Kind { kIndex, kName, kUuid };
  Kind kind = Kind::kIndex;
  int index = 0;     // for kIndex
  std::string text;  // as written in the file (name, or UUID in canonical 8-4-4-4-12 hex form)
  SourceLocation location;
};

struct DeviceConfig {
  DeviceSelector select;
  OptionMap options;
  std::optional<HardwareSpec> hardware;  // loaded and validated from `hardware:` when given
  SourceLocation location;
};

struct BackendConfig {
  std::string name;
  std::optional<std::string> path;  // resolved relative to the config file's folder
  int priority = 0;
  OptionMap options;
  bool all_devices = true;  // `devices: all` or absent
  std::vector<DeviceConfig> devices;
  SourceLocation location;       // of the list item
  SourceLocation name_location;  // of the `name:` value (for "unknown backend")
};

struct RuntimeConfig {
  std::string file;  // path it was loaded from, or the display name given to ParseRuntimeConfig
  std::vector<std::string> plugin_paths;  // resolved relative to the config file's folder
  bool allow_duplicate_devices = false;
  std::string log_level = "warning";
  std::vector<BackendConfig> backends;
};

// Reads and validates |path|. NotFound when the file does not exist; InvalidArgument with
// "file:line:col: <what is wrong>; expected <form>" for anything malformed.
StatusOr<RuntimeConfig> LoadRuntimeConfig(const std::string& path);

// Same, from text already in memory; |display_name| is used as the file in locations and
// relative paths resolve against |base_dir|.
StatusOr<RuntimeConfig> ParseRuntimeConfig(const std::string& yaml_text,
                                           const std::string& display_name,
                                           const std::string& base_dir = ".");

// The top-level keys other sections may own (model:, workload:, scheduler: ... land with later
// work). ParseRuntimeConfig rejects every key not listed here or owned by the runtime section.
const std::vector<std::string>& KnownTopLevelConfigKeys();

}  // namespace hwinfer
