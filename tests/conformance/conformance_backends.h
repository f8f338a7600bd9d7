// conformance_backends.h — the backends the suite runs on: discovery (search path, --plugin,
// --backend, --config), the process-wide list the TEST_P generators read, and the per-backend
// device cache (each device is opened once per run, on first use, not once per test).
//
// The list must be filled (SetBackends) before testing::InitGoogleTest, which is when GoogleTest
// evaluates the INSTANTIATE_TEST_SUITE_P generators. Nothing here runs tests or judges results.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "conformance_expectations.h"
#include "hwinfer/config.h"
#include "hwinfer/device.h"
#include "hwinfer/plugin_loader.h"
#include "hwinfer/status.h"

namespace hwinfer::conformance {

// Which backends to test. With nothing set: every plugin on the search path.
struct BackendSelection {
  std::string plugin_file;                // --plugin: exactly this file (any name)
  std::string backend;                    // --backend: only this backend
  std::string config_file;                // --config: the backends and devices it selects
  std::vector<std::string> plugin_paths;  // --plugin-path: searched first
  // --option KEY=VALUE: plugin_init options of every plugin loaded (with --config, they override
  // the config's `options:` of every backend).
  OptionMap plugin_options;
};

// Adds one --option argument, "KEY=VALUE" (split at the first '='), to |options|.
// InvalidArgument naming the text when it has no '=' or an empty key.
Status AddPluginOption(const std::string& text, OptionMap& options);

// One device of one backend under test, or a backend that has no usable device.
struct ConformanceBackend {
  std::string name;                // the plugin's name ("cpu"), or the file's when it did not load
  std::string plugin_path;         // the file loaded
  std::shared_ptr<Plugin> plugin;  // null when the plugin is unavailable
  uint32_t ordinal = 0;
  OptionMap device_options;  // device_open options from the config
  // Non-empty: there is no device, and every case skips with this ("cuda: 0 devices: ...").
  std::string no_device_reason;
  // Non-empty: the device is simulated (HWINFER_DEVICE_TYPE_VIRTUAL, it computes no numerics), so
  // every case skips with this, and a run of nothing but such devices is not a failure.
  std::string simulated_reason;
  std::string test_name;  // the GoogleTest parameter name: "cpu_0", "cuda_nodevice"
  Expectations expectations;

  // The device cache (see OpenBackendDevice).
  bool open_attempted = false;
  std::shared_ptr<Device> device;
  Status open_status;

  bool has_device() const { return no_device_reason.empty(); }
  // "cpu:0", or "cuda (no device)"
  std::string label() const;
};

struct Discovery {
  std::vector<ConformanceBackend> backends;
  // Plugins that failed to load for a reason other than "unavailable" (a broken plugin is a
  // failure of the run; the other backends still run).
  std::vector<Status> load_errors;
};

// Loads the selected plugins and lists their devices. An explicit --plugin or --backend that
// cannot be loaded or found is an error; so is a --config the registry rejects. While scanning
// the search path, a plugin whose load fails with UNAVAILABLE becomes a no-device backend and any
// other failure goes to Discovery::load_errors.
StatusOr<Discovery> DiscoverBackends(const BackendSelection& selection);

// The GoogleTest parameter: an index into the process-wide list (cheap to copy, printable).
struct BackendParam {
  size_t index = 0;
  std::string test_name;
};
void PrintTo(const BackendParam& param, std::ostream* os);
std::string BackendParamName(const testing::TestParamInfo<BackendParam>& info);

// The process-wide list. SetBackends also assigns unique test names.
void SetBackends(std::vector<ConformanceBackend> backends);
std::vector<ConformanceBackend>& Backends();
// One parameter per backend, in list order; what the INSTANTIATE_TEST_SUITE_P generators read.
const std::vector<BackendParam>& BackendParams();
// Closes every cached device and unloads the plugins (call after RUN_ALL_TESTS).
void ClearBackends();

// The opened device of backend |index|: opened on the first call, then cached (including a
// failure, which every later call returns again).
StatusOr<std::shared_ptr<Device>> OpenBackendDevice(size_t index);

}  // namespace hwinfer::conformance
