// device_json.cpp — see device_json.h.
#include "device_json.h"

#include <fmt/format.h>

#include "cli_common.h"
#include "hwinfer/metrics.h"

namespace hwinfer::cli {

nlohmann::json PluginJson(const Plugin& plugin) {
  const PluginIdentity& id = plugin.identity();
  return {{"path", id.path},
          {"name", id.name},
          {"version", id.version},
          {"abi_major", id.abi_major},
          {"abi_minor", id.abi_minor}};
}

nlohmann::json DeviceInfoJson(const DeviceInfo& info) {
  return {{"name", info.name},
          {"type", info.device_type_name()},
          {"vendor", info.vendor},
          {"driver", info.driver},
          {"uuid", info.uuid_string()},
          {"pci_address", info.pci_address},
          {"memory_total_bytes", info.memory_total_bytes},
          {"memory_free_bytes", info.memory_free_bytes},
          {"max_allocation_bytes", info.max_allocation_bytes},
          {"alignment_bytes", info.alignment_bytes},
          {"compute_units", info.compute_units},
          {"spec",
           {{"source", info.spec_source},
            {"peak_bandwidth_bytes_per_s", info.spec_peak_bandwidth_bytes_per_s},
            {"peak_flops_f32", info.spec_peak_flops_f32},
            {"peak_flops_f16", info.spec_peak_flops_f16},
            {"peak_flops_bf16", info.spec_peak_flops_bf16},
            {"peak_flops_int8", info.spec_peak_flops_int8}}}};
}

void PrintDeviceInfo(const DeviceInfo& info, const char* indent) {
  fmt::print("{}name:            {}\n", indent, info.name);
  fmt::print("{}type:            {}\n", indent, info.device_type_name());
  fmt::print("{}vendor:          {}\n", indent, info.vendor.empty() ? "-" : info.vendor);
  fmt::print("{}driver:          {}\n", indent, info.driver.empty() ? "-" : info.driver);
  fmt::print("{}uuid:            {}\n", indent, info.has_uuid() ? info.uuid_string() : "-");
  fmt::print("{}pci address:     {}\n", indent, info.pci_address.empty() ? "-" : info.pci_address);
  fmt::print("{}memory:          {} total, {} free\n", indent,
             FormatBytes(static_cast<double>(info.memory_total_bytes)),
             FormatBytes(static_cast<double>(info.memory_free_bytes)));
  fmt::print("{}max allocation:  {}\n", indent,
             FormatBytes(static_cast<double>(info.max_allocation_bytes)));
  fmt::print("{}alignment:       {} bytes\n", indent, info.alignment_bytes);
  fmt::print("{}compute units:   {}\n", indent, info.compute_units);
  fmt::print("{}spec bandwidth:  {}{}\n", indent,
             FormatBandwidth(info.spec_peak_bandwidth_bytes_per_s),
             info.spec_source.empty() ? " (declare it with a hardware file in the config)"
                                      : " (from " + info.spec_source + ")");
  fmt::print("{}spec FLOP/s:     f32 {}, f16 {}, bf16 {}, int8 {}\n", indent,
             FormatFlops(info.spec_peak_flops_f32), FormatFlops(info.spec_peak_flops_f16),
             FormatFlops(info.spec_peak_flops_bf16), FormatFlops(info.spec_peak_flops_int8));
}

}  // namespace hwinfer::cli
