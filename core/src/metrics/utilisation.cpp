// utilisation.cpp — naming the peaks MBU and MFU are against, and the warning every report prints
// with a figure above 100% of its peak (metrics.h). Text only: no numbers are computed here beyond
// comparing a ratio with 1, and nothing is printed.
#include <fmt/format.h>

#include <string>
#include <type_traits>
#include <vector>

#include "hwinfer/metrics.h"
#include "hwinfer/tensor_view.h"
#include "hwinfer/text_escape.h"

namespace hwinfer {
namespace {

constexpr double kPercent = 100.0;
constexpr double kMiB = 1024.0 * 1024.0;

bool IsBlockDtype(uint32_t dtype) { return hwinfer_dtype_block_bytes(dtype) != 0; }

// "" or " (FILE)", " (plugin)": the source escaped, as it may come from a file or a plugin.
std::string SpecOrigin(const PeakRates& peaks) {
  return peaks.spec_source.empty() ? "" : " (" + EscapeControlCharacters(peaks.spec_source) + ")";
}

std::string SpecFlopsName(const PeakRates& peaks) {
  const std::string name = fmt::format("spec {} peak {}", SpecDtypeName(peaks.spec_flops_dtype),
                                       FormatFlops(peaks.spec_flops));
  // Read against another figure than the one of the dtype the work computes in: the spec lacks it.
  const uint32_t computes_in = SpecFlopsDtypeOf(peaks.flops_weight_dtype);
  if (peaks.spec_flops_dtype == computes_in) return name + SpecOrigin(peaks);
  const std::string missing = fmt::format("no {} figure for {} weights", SpecDtypeName(computes_in),
                                          DtypeName(peaks.flops_weight_dtype));
  return peaks.spec_source.empty() ? fmt::format("{} ({})", name, missing)
                                   : fmt::format("{} ({}; {})", name, missing,
                                                 EscapeControlCharacters(peaks.spec_source));
}

std::string MeasuredFlopsName(const PeakRates& peaks) {
  const MatmulShape& shape = peaks.measured_flops_probe;
  const std::string origin = shape.m > 0
                                 ? fmt::format("probe at m={} n={} k={}", shape.m, shape.n, shape.k)
                                 : std::string("given, not probed");
  return fmt::format("measured {} matmul peak {} ({})", DtypeName(peaks.flops_weight_dtype),
                     FormatFlops(peaks.measured_flops), origin);
}

std::string MeasuredBandwidthName(const PeakRates& peaks) {
  const std::string origin =
      peaks.measured_bandwidth_probe_bytes > 0
          ? fmt::format("probe over {:.1f} MiB",
                        static_cast<double>(peaks.measured_bandwidth_probe_bytes) / kMiB)
          : std::string("given, not probed");
  return fmt::format("measured read bandwidth {} ({})",
                     FormatBandwidth(peaks.measured_bandwidth_bytes_per_s), origin);
}

// Why a figure can exceed |kind|: the reader's next step.
std::string WhyAbove(const PeakRates& peaks, PeakKind kind) {
  switch (kind) {
    case PeakKind::kSpecBandwidth:
      return "bytes are counted as if read from memory, so a working set served from the caches "
             "(a small model's weights and KV) reads faster than memory; or the declared peak "
             "(hardware file or plugin) is too low";
    case PeakKind::kMeasuredBandwidth:
      return "the probe streams its working set from memory while the run's bytes are counted as "
             "read from memory once; weights and KV small enough to stay in the caches read "
             "faster, or the machine was busier while the probe ran";
    case PeakKind::kSpecFlops:
      return "more FLOP/s than the declared peak allows: it (hardware file or plugin) is too low, "
             "or not the figure of the dtype the device computes this work in";
    case PeakKind::kMeasuredFlops:
      return peaks.measured_flops_probe.m > 0
                 ? "the probe times one matmul of this weight dtype at that shape; the run's "
                   "matmuls had other shapes, where the backend can take a faster path (int8 dot "
                   "products for a few rows, weights that stay in cache), or the machine was "
                   "busier while the probe ran"
                 : "the peak was given by the caller, not probed on this device";
  }
  return "";
}

}  // namespace

uint32_t SpecFlopsDtypeOf(uint32_t weight_dtype) {
  return IsBlockDtype(weight_dtype) ? HWINFER_DTYPE_I8 : weight_dtype;
}

const char* SpecDtypeName(uint32_t dtype) {
  return dtype == HWINFER_DTYPE_I8 ? "int8" : DtypeName(dtype);
}

std::string FormatBandwidth(double bytes_per_s) {
  if (bytes_per_s <= 0) return "unknown";
  return fmt::format("{:.1f} GB/s", bytes_per_s / 1e9);
}

std::string FormatFlops(double flops_per_s) {
  if (flops_per_s <= 0) return "unknown";
  if (flops_per_s >= 1e12) return fmt::format("{:.2f} TFLOP/s", flops_per_s / 1e12);
  return fmt::format("{:.1f} GFLOP/s", flops_per_s / 1e9);
}

std::string PeakDescription(const PeakRates& peaks, PeakKind kind) {
  switch (kind) {
    case PeakKind::kSpecBandwidth:
      return "spec bandwidth " + FormatBandwidth(peaks.spec_bandwidth_bytes_per_s) +
             SpecOrigin(peaks);
    case PeakKind::kMeasuredBandwidth:
      return MeasuredBandwidthName(peaks);
    case PeakKind::kSpecFlops:
      return SpecFlopsName(peaks);
    case PeakKind::kMeasuredFlops:
      return MeasuredFlopsName(peaks);
  }
  return "";
}

std::vector<std::string> UtilisationWarnings(const std::vector<UtilisationFigure>& figures,
                                             const PeakRates& peaks) {
  std::vector<std::string> lines;
  for (const PeakKind kind : {PeakKind::kSpecBandwidth, PeakKind::kMeasuredBandwidth,
                              PeakKind::kSpecFlops, PeakKind::kMeasuredFlops}) {
    std::string above;
    int count = 0;
    for (const UtilisationFigure& figure : figures) {
      if (figure.peak != kind || !(figure.ratio > 1.0)) continue;
      above += fmt::format("{}{} {:.0f}%", count == 0 ? "" : ", ", figure.label,
                           kPercent * figure.ratio);
      ++count;
    }
    if (count == 0) continue;
    lines.push_back(fmt::format("{} {} 100% of the {}: {}", above,
                                count == 1 ? "exceeds" : "exceed", PeakDescription(peaks, kind),
                                WhyAbove(peaks, kind)));
  }
  return lines;
}

std::vector<UtilisationFigure> PhaseFigures(const std::string& phase, const PhaseMetrics& metrics) {
  return {{phase + " MBU", PeakKind::kSpecBandwidth, metrics.mbu_spec},
          {phase + " MBU", PeakKind::kMeasuredBandwidth, metrics.mbu_measured},
          {phase + " MFU", PeakKind::kSpecFlops, metrics.mfu_spec},
          {phase + " MFU", PeakKind::kMeasuredFlops, metrics.mfu_measured}};
}

std::vector<std::string> UtilisationWarnings(const RunSummary& summary) {
  std::vector<UtilisationFigure> figures;
  const std::pair<const char*, const PhaseMetrics*> phases[] = {{"prefill", &summary.prefill},
                                                                {"decode", &summary.decode},
                                                                {"mixed", &summary.mixed},
                                                                {"all", &summary.all}};
  for (const auto& [name, phase] : phases) {
    for (UtilisationFigure& figure : PhaseFigures(name, *phase)) figures.push_back(figure);
  }
  return UtilisationWarnings(figures, summary.peaks);
}

nlohmann::json PeakRatesJson(const PeakRates& peaks) {
  return {{"peak_bandwidth_bytes_per_s", peaks.spec_bandwidth_bytes_per_s},
          {"peak_flops", peaks.spec_flops},
          {"peak_flops_dtype", SpecDtypeName(peaks.spec_flops_dtype)},
          {"measured_bandwidth_bytes_per_s", peaks.measured_bandwidth_bytes_per_s},
          {"measured_bandwidth_probe_bytes", peaks.measured_bandwidth_probe_bytes},
          {"measured_flops", peaks.measured_flops},
          {"measured_flops_dtype", DtypeName(peaks.flops_weight_dtype)},
          {"measured_flops_probe",
           {{"m", peaks.measured_flops_probe.m},
            {"n", peaks.measured_flops_probe.n},
            {"k", peaks.measured_flops_probe.k}}},
          {"spec_source", peaks.spec_source}};
}

PeakRates PeakRatesFromJson(const nlohmann::json& hardware) {
  PeakRates peaks;
  if (!hardware.is_object()) return peaks;
  auto number = [&](const char* key, auto* out) {
    auto it = hardware.find(key);
    if (it != hardware.end() && it->is_number()) {
      *out = it->get<std::remove_pointer_t<decltype(out)>>();
    }
  };
  auto dtype = [&](const char* key, uint32_t* out) {
    auto it = hardware.find(key);
    if (it == hardware.end() || !it->is_string()) return;
    const std::string name = it->get<std::string>();
    for (const uint32_t candidate :
         {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16, HWINFER_DTYPE_I8,
          HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0, HWINFER_DTYPE_Q4_1, HWINFER_DTYPE_Q5_0,
          HWINFER_DTYPE_Q5_1, HWINFER_DTYPE_IQ4_NL, HWINFER_DTYPE_Q2_K, HWINFER_DTYPE_Q3_K,
          HWINFER_DTYPE_Q4_K, HWINFER_DTYPE_Q5_K, HWINFER_DTYPE_Q6_K}) {
      if (name == SpecDtypeName(candidate) || name == DtypeName(candidate)) *out = candidate;
    }
  };
  number("peak_bandwidth_bytes_per_s", &peaks.spec_bandwidth_bytes_per_s);
  number("peak_flops", &peaks.spec_flops);
  dtype("peak_flops_dtype", &peaks.spec_flops_dtype);
  number("measured_bandwidth_bytes_per_s", &peaks.measured_bandwidth_bytes_per_s);
  number("measured_bandwidth_probe_bytes", &peaks.measured_bandwidth_probe_bytes);
  number("measured_flops", &peaks.measured_flops);
  dtype("measured_flops_dtype", &peaks.flops_weight_dtype);
  auto probe = hardware.find("measured_flops_probe");
  if (probe != hardware.end() && probe->is_object()) {
    for (const auto& [key, field] : {std::pair{"m", &peaks.measured_flops_probe.m},
                                     std::pair{"n", &peaks.measured_flops_probe.n},
                                     std::pair{"k", &peaks.measured_flops_probe.k}}) {
      auto it = probe->find(key);
      if (it != probe->end() && it->is_number_integer()) *field = it->get<int64_t>();
    }
  }
  auto source = hardware.find("spec_source");
  if (source != hardware.end() && source->is_string())
    peaks.spec_source = source->get<std::string>();
  return peaks;
}

}  // namespace hwinfer
