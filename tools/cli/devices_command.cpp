// devices_command.cpp — `hwinfer devices [--json] [--no-probe]`: every loaded plugin (path, name,
// version, ABI) and every selected device with identity, properties and a quick measured read
// bandwidth (a short run of the device's own probe kernel; --no-probe skips it).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "device_json.h"
#include "hwinfer/log.h"
#include "hwinfer/metrics.h"
#include "hwinfer/probe.h"
#include "hwinfer/text_escape.h"

namespace hwinfer::cli {
namespace {

// A short read-bandwidth probe: 64 MiB, 3 timed launches.
StatusOr<ProbeMeasurement> QuickReadProbe(Registry& registry, const RegisteredDevice& device) {
  HWINFER_ASSIGN_OR_RETURN(std::shared_ptr<Device> opened, registry.Open(device));
  ProbeOptions options;
  options.bandwidth_bytes = 64ull << 20;
  options.bandwidth_iterations = 2;
  options.repetitions = 3;
  return MeasureBandwidth(opened, HWINFER_PROBE_READ, options);
}

}  // namespace

int RunDevices(const GlobalOptions& global, const DevicesOptions& options) {
  auto registry = BuildRegistry(global);
  if (!registry.ok()) return ReportError(registry.status());

  nlohmann::json out = {{"plugins", nlohmann::json::array()},
                        {"devices", nlohmann::json::array()},
                        {"hidden_duplicates", nlohmann::json::array()}};
  for (const auto& plugin : registry->plugins()) out["plugins"].push_back(PluginJson(*plugin));
  for (const RegisteredDevice& device : registry->devices()) {
    nlohmann::json entry = DeviceInfoJson(device.info);
    entry["id"] = device.id();
    entry["backend"] = device.plugin->name();
    entry["ordinal"] = device.ordinal;
    entry["priority"] = device.priority;
    if (!options.no_probe) {
      // A device that will not open or probe is listed with the reason; the others still are.
      auto probe = QuickReadProbe(*registry, device);
      if (probe.ok()) {
        entry["measured"] = {{"read_bandwidth_bytes_per_s", probe->value},
                             {"probe", probe->measured ? "ok" : probe->reason}};
      } else {
        entry["measured"] = {{"read_bandwidth_bytes_per_s", 0.0},
                             {"probe", "failed: " + probe.status().message()}};
        Log(LogLevel::kWarning, "core", device.id() + ": " + probe.status().message());
      }
    }
    out["devices"].push_back(entry);
  }
  for (const HiddenDuplicate& hidden : registry->hidden_duplicates()) {
    out["hidden_duplicates"].push_back(
        {{"id", hidden.id}, {"shown_as", hidden.shown_as}, {"uuid", hidden.uuid}});
  }

  if (options.json) {
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("Plugins ({}):\n", registry->plugins().size());
  for (const auto& plugin : registry->plugins()) {
    const PluginIdentity& id = plugin->identity();
    fmt::print("  {:<10} {:<8} ABI {}.{}  {}\n", id.name, id.version, id.abi_major, id.abi_minor,
               id.path);
  }
  fmt::print("Devices ({}):\n", registry->devices().size());
  size_t index = 0;
  for (const RegisteredDevice& device : registry->devices()) {
    fmt::print("  [{}] {}\n", index, device.id());
    PrintDeviceInfo(device.info, "      ");
    const nlohmann::json& entry = out["devices"][index];
    if (entry.contains("measured")) {
      const std::string probe = entry["measured"]["probe"].get<std::string>();
      fmt::print(
          "      measured read:   {}\n",
          probe.starts_with("failed: ")
              ? EscapeControlCharacters(probe)
              : FormatBandwidth(entry["measured"]["read_bandwidth_bytes_per_s"].get<double>()));
    }
    ++index;
  }
  for (const HiddenDuplicate& hidden : registry->hidden_duplicates()) {
    fmt::print("  ({} hidden: same device as {}, UUID {})\n", hidden.id, hidden.shown_as,
               hidden.uuid);
  }
  return 0;
}

}  // namespace hwinfer::cli
