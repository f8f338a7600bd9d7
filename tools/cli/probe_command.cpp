// probe_command.cpp — `hwinfer probe [--device D] [--json]`: measured read and copy bandwidth and
// f32 GEMM FLOP/s per device (hwinfer/probe.h), beside the spec peaks when they are known.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "device_json.h"
#include "hwinfer/probe.h"

namespace hwinfer::cli {
namespace {

nlohmann::json MeasurementJson(const ProbeMeasurement& m, const char* unit_key) {
  nlohmann::json out = {{"measured", m.measured}, {unit_key, m.value}, {"samples", m.samples}};
  if (!m.measured) out["reason"] = m.reason;
  return out;
}

std::string Percent(double measured, double spec) {
  if (measured <= 0 || spec <= 0) return "";
  return fmt::format(" ({:.0f}% of spec)", 100.0 * measured / spec);
}

}  // namespace

int RunProbe(const GlobalOptions& global, const ProbeCommandOptions& options) {
  auto registry = BuildRegistry(global);
  if (!registry.ok()) return ReportError(registry.status());
  std::vector<const RegisteredDevice*> targets;
  if (options.device.empty()) {
    for (const RegisteredDevice& device : registry->devices()) targets.push_back(&device);
  } else {
    auto found = registry->Find(options.device);
    if (!found.ok()) return ReportError(found.status());
    targets.push_back(*found);
  }
  if (targets.empty()) return ReportError(NotFound("no devices to probe"));

  ProbeOptions probe_options;
  probe_options.bandwidth_bytes = options.size_mib << 20;
  probe_options.gemm_size = options.gemm_size;
  probe_options.repetitions = options.repetitions;
  nlohmann::json out = {{"devices", nlohmann::json::array()}};
  for (const RegisteredDevice* target : targets) {
    auto device = registry->Open(*target);
    if (!device.ok()) return ReportError(device.status());
    auto result = ProbeDevice(*device, probe_options);
    if (!result.ok()) return ReportError(result.status().WithContext(target->id()));
    const DeviceInfo& info = target->info;
    if (!options.json) {
      fmt::print("{} ({})\n", target->id(), info.name);
      auto line = [](const char* what, const ProbeMeasurement& m, const std::string& value,
                     const std::string& percent) {
        if (m.measured) {
          fmt::print("  {:<16} {}{}\n", what, value, percent);
        } else {
          fmt::print("  {:<16} not measured: {}\n", what, m.reason);
        }
      };
      line("read bandwidth", result->read_bandwidth, FormatBandwidth(result->read_bandwidth.value),
           Percent(result->read_bandwidth.value, info.spec_peak_bandwidth_bytes_per_s));
      line("copy bandwidth", result->copy_bandwidth, FormatBandwidth(result->copy_bandwidth.value),
           Percent(result->copy_bandwidth.value, info.spec_peak_bandwidth_bytes_per_s));
      line("gemm f32", result->gemm_f32, FormatFlops(result->gemm_f32.value),
           Percent(result->gemm_f32.value, info.spec_peak_flops_f32));
    }
    nlohmann::json entry = {
        {"id", target->id()},
        {"info", DeviceInfoJson(info)},
        {"read_bandwidth", MeasurementJson(result->read_bandwidth, "bytes_per_s")},
        {"copy_bandwidth", MeasurementJson(result->copy_bandwidth, "bytes_per_s")},
        {"gemm_f32", MeasurementJson(result->gemm_f32, "flops_per_s")}};
    entry["gemm_f32"]["size"] = options.gemm_size;
    entry["bandwidth_working_set_bytes"] = probe_options.bandwidth_bytes;
    out["devices"].push_back(entry);
  }
  if (options.json) fmt::print("{}\n", out.dump(2));
  return 0;
}

}  // namespace hwinfer::cli
