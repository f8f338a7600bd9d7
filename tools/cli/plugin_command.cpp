// plugin_command.cpp — `hwinfer plugin check PATH [--json] [--option KEY=VALUE]...
// [--timeout SECONDS]`: loads one plugin file and reports everything about it (identity, ABI,
// devices, kernel support, a memory round trip), or exactly why it cannot be loaded (not found,
// not a shared library, no query symbol, ABI major mismatch, init failure) as one line with a
// non-zero exit. It is the vendor's diagnosis tool, so the plugin runs in a watched child process
// (watched_child.h): a plugin that crashes, exits or hangs is reported as what it did and when
// ("killed by SIGSEGV during plugin_init", "no answer from hwinfer_plugin_query within 10 s").
#include <fmt/format.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "device_json.h"
#include "hwinfer/log.h"
#include "hwinfer/text_escape.h"
#include "kernel_catalog.h"
#include "watched_child.h"

namespace hwinfer::cli {
namespace {

// Allocates a buffer, copies 4099 bytes in and out through a stream and compares them.
Status RoundTrip(Device& device) {
  constexpr uint64_t kSize = 4099;
  HWINFER_ASSIGN_OR_RETURN(Buffer buffer, device.Allocate(kSize + 13));
  HWINFER_ASSIGN_OR_RETURN(Stream stream, device.CreateStream());
  std::vector<uint8_t> in(kSize), out(kSize, 0);
  for (uint64_t i = 0; i < kSize; ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);
  HWINFER_RETURN_IF_ERROR(stream.CopyH2D(in.data(), buffer, 13, kSize));
  HWINFER_RETURN_IF_ERROR(stream.CopyD2H(buffer, 13, out.data(), kSize));
  HWINFER_RETURN_IF_ERROR(stream.Synchronize());
  if (in != out) return Internal("host->device->host round trip returned different bytes");
  return Status::Ok();
}

// Opens every device of |plugin|, queries every kernel, runs a memory round trip, and prints it
// all (text or JSON). |phase| names each step that runs plugin code.
int ReportPlugin(Plugin& plugin, uint32_t count, bool json, const PhaseReporter& phase) {
  nlohmann::json out = {{"plugin", PluginJson(plugin)}, {"devices", nlohmann::json::array()}};
  const std::vector<CatalogEntry> catalog = KernelCatalog();
  for (uint32_t ordinal = 0; ordinal < count; ++ordinal) {
    phase(fmt::format("device_open({})", ordinal));
    auto device = plugin.OpenDevice(ordinal);
    if (!device.ok()) return ReportError(device.status());
    nlohmann::json entry = DeviceInfoJson((*device)->info());
    entry["id"] = (*device)->id();
    nlohmann::json kernels = nlohmann::json::array();
    for (const CatalogEntry& kernel : catalog) {
      phase(fmt::format("kernel_query({}) on device {}", kernel.name, ordinal));
      auto support = (*device)->QueryKernel(*kernel.desc);
      if (!support.ok()) return ReportError(support.status());
      kernels.push_back({{"kernel", kernel.name},
                         {"supported", support->supported},
                         {"reason", support->reason}});
    }
    entry["kernels"] = kernels;
    phase(fmt::format("the memory round trip on device {}", ordinal));
    Status round_trip = RoundTrip(**device);
    if (!round_trip.ok()) return ReportError(round_trip.WithContext((*device)->id()));
    entry["memory_round_trip"] = "ok";
    out["devices"].push_back(entry);
    phase(fmt::format("device_close({})", ordinal));
  }

  if (json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  const PluginIdentity& id = plugin.identity();
  fmt::print("plugin:   {}\n", EscapeControlCharacters(id.path));
  fmt::print("name:     {}\nversion:  {}\nABI:      {}.{} (host {}.{})\n",
             EscapeControlCharacters(id.name), EscapeControlCharacters(id.version), id.abi_major,
             id.abi_minor, HWINFER_ABI_MAJOR, HWINFER_ABI_MINOR);
  fmt::print("devices:  {}\n", count);
  for (uint32_t ordinal = 0; ordinal < count; ++ordinal) {
    const nlohmann::json& entry = out["devices"][ordinal];
    fmt::print("  {}\n", EscapeControlCharacters(entry["id"].get<std::string>()));
    auto info = plugin.GetDeviceInfo(ordinal);
    if (info.ok()) PrintDeviceInfo(*info, "      ");
    fmt::print("      memory round trip: ok\n      kernels:\n");
    for (const nlohmann::json& kernel : entry["kernels"]) {
      const bool supported = kernel["supported"].get<bool>();
      const std::string reason = EscapeControlCharacters(kernel["reason"].get<std::string>());
      fmt::print("        {:<32} {}{}\n", kernel["kernel"].get<std::string>(),
                 supported ? "supported" : "unsupported",
                 reason.empty() ? "" : " (" + reason + ")");
    }
  }
  fmt::print("result:   OK\n");
  return 0;
}

// The whole check, as the watched child runs it.
int CheckInChild(const GlobalOptions& global, const PluginCheckOptions& options,
                 const PhaseReporter& phase) {
  if (!global.log_level.empty()) {
    auto level = ParseLogLevel(global.log_level);
    if (!level.ok()) return ReportError(level.status());
    SetLogLevel(*level);
  }
  OptionMap plugin_options;
  for (const std::string& option : options.options) {
    const size_t eq = option.find('=');
    if (eq == std::string::npos || eq == 0) {
      return ReportError(InvalidArgument("--option '" + option + "': expected KEY=VALUE"));
    }
    plugin_options[option.substr(0, eq)] = option.substr(eq + 1);
  }
  auto plugin =
      Plugin::Load(options.path, plugin_options, [&phase](const char* name) { phase(name); });
  if (!plugin.ok()) return ReportError(plugin.status());
  phase("device_count");
  auto count = (*plugin)->DeviceCount();
  if (!count.ok()) return ReportError(count.status());
  const int code = ReportPlugin(**plugin, *count, options.json, phase);
  phase("plugin_destroy");
  plugin = StatusOr<std::shared_ptr<Plugin>>(Internal("released"));  // destroys the plugin now
  return code;
}

}  // namespace

// Runs the check in a watched child and turns what became of it into the command's result.
int RunPluginCheck(const GlobalOptions& global, const PluginCheckOptions& options) {
  const ChildOutcome outcome =
      RunWatched([&](const PhaseReporter& phase) { return CheckInChild(global, options, phase); },
                 options.timeout_s);
  const std::string during = outcome.phase.empty() ? "" : " during " + outcome.phase;
  const std::string plugin = "plugin '" + options.path + "'";
  switch (outcome.kind) {
    case ChildOutcome::Kind::kFinished:
      fmt::print("{}", outcome.stdout_text);
      return outcome.exit_code;
    case ChildOutcome::Kind::kSignaled:
      return ReportError(Internal(
          fmt::format("{} was killed by {}{}", plugin, SignalName(outcome.signal_number), during)));
    case ChildOutcome::Kind::kTimedOut:
      return ReportError(Unavailable(fmt::format(
          "{}: no answer from {} within {} s; the check "
          "was stopped (--timeout sets the limit)",
          plugin, outcome.phase.empty() ? "the plugin" : outcome.phase, options.timeout_s)));
    case ChildOutcome::Kind::kExited:
      if (outcome.exit_code < 0) {
        return ReportError(Internal("plugin check could not start its child: " + outcome.phase));
      }
      return ReportError(Internal(fmt::format(
          "{} exited the process (status {}){}; a plugin must return errors, never exit", plugin,
          outcome.exit_code, during)));
  }
  return kExitError;
}

}  // namespace hwinfer::cli
