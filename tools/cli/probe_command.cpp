// probe_command.cpp — `hwinfer probe [--device D] [--json]`: measured read and copy bandwidth and
// the matmul FLOP/s of every weight dtype the executor computes with (f32, f16, bf16 through gemm;
// q8_0, q4_0, q4_k through matmul_quantized; hwinfer/probe.h) per device, beside the spec peaks
// when they are known. A dtype the device cannot run is listed as not measured, with the reason.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "device_json.h"
#include "hwinfer/bench_runner.h"
#include "hwinfer/metrics.h"
#include "hwinfer/probe.h"
#include "hwinfer/tensor_view.h"

namespace hwinfer::cli {
namespace {

nlohmann::json MeasurementJson(const ProbeMeasurement& m, const char* unit_key) {
  nlohmann::json out = {{"measured", m.measured}, {unit_key, m.value}, {"samples", m.samples}};
  if (!m.measured) out["reason"] = m.reason;
  return out;
}

const char* KernelName(uint32_t kernel) {
  return kernel == HWINFER_KERNEL_GEMM ? "gemm" : "matmul_quantized";
}

// " (88% of the spec int8 peak)", " (12% of the spec f32 peak: no int8 figure)", or "" when
// either figure is unknown.
std::string OfSpec(double measured, double spec, const std::string& spec_name) {
  if (measured <= 0 || spec <= 0) return "";
  return fmt::format(" ({:.0f}% of the {})", 100.0 * measured / spec, spec_name);
}

void PrintLine(const std::string& what, const ProbeMeasurement& m, const std::string& value) {
  if (m.measured) {
    fmt::print("  {:<16} {}\n", what, value);
  } else {
    fmt::print("  {:<16} not measured: {}\n", what, m.reason);
  }
}

// The warnings for every measured figure above its spec peak, one line per spec figure exceeded.
std::vector<std::string> AboveSpecWarnings(const DeviceInfo& info, const ProbeResult& result) {
  const double bandwidth = info.spec_peak_bandwidth_bytes_per_s;
  std::vector<std::string> lines =
      UtilisationWarnings({{"measured read bandwidth", PeakKind::kSpecBandwidth,
                            bandwidth > 0 ? result.read_bandwidth.value / bandwidth : 0},
                           {"measured copy bandwidth", PeakKind::kSpecBandwidth,
                            bandwidth > 0 ? result.copy_bandwidth.value / bandwidth : 0}},
                          SpecPeaks(info, HWINFER_DTYPE_F32));
  // Dtypes read against the same spec figure share a line (its PeakRates from a dtype that
  // computes in that figure, so the line names the figure alone).
  std::map<uint32_t, std::vector<UtilisationFigure>> by_figure;
  for (const MatmulPeak& peak : result.matmul) {
    const PeakRates spec = SpecPeaks(info, peak.weight_dtype);
    if (spec.spec_flops <= 0) continue;
    by_figure[spec.spec_flops_dtype].push_back(
        {fmt::format("measured {} matmul", DtypeName(peak.weight_dtype)), PeakKind::kSpecFlops,
         peak.flops.value / spec.spec_flops});
  }
  for (const auto& [figure, figures] : by_figure) {
    const uint32_t computes_in = figure == HWINFER_DTYPE_I8 ? HWINFER_DTYPE_Q8_0 : figure;
    for (std::string& line : UtilisationWarnings(figures, SpecPeaks(info, computes_in))) {
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

// Prints one device's results as text, then a warning for each measured figure above its spec.
void PrintDevice(const RegisteredDevice& target, const ProbeResult& result,
                 uint64_t bandwidth_bytes) {
  const DeviceInfo& info = target.info;
  fmt::print("{} ({})\n", target.id(), info.name);
  for (const auto& [what, m] : {std::pair{"read bandwidth", &result.read_bandwidth},
                                std::pair{"copy bandwidth", &result.copy_bandwidth}}) {
    PrintLine(what, *m,
              FormatBandwidth(m->value) +
                  OfSpec(m->value, info.spec_peak_bandwidth_bytes_per_s, "spec bandwidth"));
  }
  fmt::print(
      "  (bandwidth over {:.0f} MiB; matmul FLOP/s = 2*m*n*k per launch, F32 activations "
      "x weights of each dtype, the kernel the executor runs for them)\n",
      static_cast<double>(bandwidth_bytes) / (1 << 20));
  for (const MatmulPeak& peak : result.matmul) {
    const PeakRates spec = SpecPeaks(info, peak.weight_dtype);
    const uint32_t computes_in = SpecFlopsDtypeOf(peak.weight_dtype);
    std::string spec_name = fmt::format("spec {} peak", SpecDtypeName(spec.spec_flops_dtype));
    if (spec.spec_flops_dtype != computes_in) {
      spec_name += fmt::format(": no {} figure", SpecDtypeName(computes_in));
    }
    PrintLine(fmt::format("{} matmul", DtypeName(peak.weight_dtype)), peak.flops,
              fmt::format("{:<16} ({}, m={} n={} k={}){}", FormatFlops(peak.flops.value),
                          KernelName(peak.kernel), peak.m, peak.n, peak.k,
                          OfSpec(peak.flops.value, spec.spec_flops, spec_name)));
  }
  for (const std::string& line : AboveSpecWarnings(info, result)) {
    fmt::print("  warning: {}\n", line);
  }
}

nlohmann::json DeviceJson(const RegisteredDevice& target, const ProbeResult& result,
                          uint64_t bandwidth_bytes) {
  nlohmann::json matmul = nlohmann::json::object();
  for (const MatmulPeak& peak : result.matmul) {
    const PeakRates spec = SpecPeaks(target.info, peak.weight_dtype);
    nlohmann::json entry = MeasurementJson(peak.flops, "flops_per_s");
    entry.update({{"kernel", KernelName(peak.kernel)},
                  {"m", peak.m},
                  {"n", peak.n},
                  {"k", peak.k},
                  {"spec_flops_per_s", spec.spec_flops},
                  {"spec_flops_dtype", SpecDtypeName(spec.spec_flops_dtype)}});
    matmul[DtypeName(peak.weight_dtype)] = std::move(entry);
  }
  return {{"id", target.id()},
          {"info", DeviceInfoJson(target.info)},
          {"read_bandwidth", MeasurementJson(result.read_bandwidth, "bytes_per_s")},
          {"copy_bandwidth", MeasurementJson(result.copy_bandwidth, "bytes_per_s")},
          {"bandwidth_working_set_bytes", bandwidth_bytes},
          {"matmul", std::move(matmul)}};
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
    const uint64_t bandwidth_bytes = BandwidthProbeBytes(**device, probe_options);
    if (!options.json) PrintDevice(*target, *result, bandwidth_bytes);
    out["devices"].push_back(DeviceJson(*target, *result, bandwidth_bytes));
  }
  if (options.json) fmt::print("{}\n", out.dump(2));
  return 0;
}

}  // namespace hwinfer::cli
