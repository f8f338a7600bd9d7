// result_tables.cpp — the human- and spreadsheet-facing forms of a run (metrics.h): per-request
// and per-step CSV, the aligned plain-text summary printed at the end of a bench (laid out like
// vLLM's "Serving Benchmark Result"), and the same summary as Markdown. Formatting only: every
// number comes from SummarizeRun or from the records; nothing is written to a file or stdout.
#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/metrics.h"
#include "metrics/request_latency.h"

namespace hwinfer {
namespace {

constexpr size_t kTableWidth = 50;  // characters, as vLLM's printout
constexpr double kPercent = 100.0;

// A utilisation in percent, or "-" when work was done but the ratio is 0: its peak is unknown.
std::string UtilisationCell(double ratio, double work) {
  if (ratio == 0 && work > 0) return "-";
  return fmt::format("{:.2f}", ratio * kPercent);
}

// RFC 4180: quote a field holding a comma, quote or line break; double the quotes inside.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// A derived latency in ms for the CSV: nanosecond resolution, trailing zeros dropped, so
// floating-point noise from differencing times in s does not show ("400", not
// "399.99999999999994").
std::string CsvMs(double ms) {
  std::string text = fmt::format("{:.6f}", ms);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

// "========= Title =========" or "------Title------", centred to kTableWidth.
std::string Rule(const std::string& title, char fill) {
  const size_t width = kTableWidth;
  const size_t pad = title.size() < width ? width - title.size() : 0;
  return std::string(pad / 2, fill) + title + std::string(pad - pad / 2, fill) + "\n";
}

std::string Row(const std::string& label, double value) {
  return fmt::format("{:<40} {:<10.2f}\n", label, value);
}
std::string Row(const std::string& label, int64_t value) {
  return fmt::format("{:<40} {:<10}\n", label, value);
}
std::string Row(const std::string& label, const std::string& value) {
  return fmt::format("{:<40} {:<10}\n", label, value);
}

struct NamedDistribution {
  const char* title;  // section title
  const char* short_name;
  const Distribution* d;  // in ms
};

std::vector<NamedDistribution> Latencies(const RunSummary& s) {
  return {{"Time to First Token", "TTFT", &s.ttft_ms},
          {"Time per Output Token (excl. 1st token)", "TPOT", &s.tpot_ms},
          {"Inter-token Latency", "ITL", &s.itl_ms},
          {"End-to-end Latency", "E2EL", &s.e2el_ms},
          {"Queue Time", "Queue", &s.queue_ms}};
}

struct NamedPhase {
  const char* name;
  const PhaseMetrics* phase;
};

std::vector<NamedPhase> Phases(const RunSummary& s) {
  return {{"prefill", &s.prefill}, {"decode", &s.decode}, {"mixed", &s.mixed}, {"all", &s.all}};
}

// The peaks the MBU and MFU columns are against, one line each: "MBU against: spec bandwidth ...;
// measured read bandwidth ...".
std::vector<std::string> PeakLines(const PeakRates& peaks) {
  return {"MBU against: " + PeakDescription(peaks, PeakKind::kSpecBandwidth) + "; " +
              PeakDescription(peaks, PeakKind::kMeasuredBandwidth),
          "MFU against: " + PeakDescription(peaks, PeakKind::kSpecFlops) + "; " +
              PeakDescription(peaks, PeakKind::kMeasuredFlops)};
}

}  // namespace

std::string RequestsCsv(const std::vector<RequestRecord>& requests) {
  std::string csv =
      "id,line,arrival_s,first_scheduled_s,input_tokens,output_tokens,preemptions,failed,ttft_ms,"
      "tpot_ms,e2el_ms,queue_ms,error\n";
  for (const RequestRecord& r : requests) {
    // Latency columns are empty where the quantity does not exist (no token, one token, never
    // scheduled); they are shown for failed requests too, which the summary excludes.
    std::string ttft, tpot, e2el, queue;
    if (!r.token_times_s.empty()) {
      const auto l = metrics_internal::LatencyOf(r);
      ttft = CsvMs(l.ttft_ms);
      e2el = CsvMs(l.e2el_ms);
      if (l.has_tpot) tpot = CsvMs(l.tpot_ms);
    }
    if (r.first_scheduled_s >= 0) {
      queue = CsvMs((r.first_scheduled_s - r.arrival_s) * metrics_internal::kMsPerS);
    }
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.id, r.line, r.arrival_s,
                       r.first_scheduled_s, r.input_tokens, r.output_tokens, r.preemptions,
                       r.failed ? 1 : 0, ttft, tpot, e2el, queue, CsvField(r.error));
  }
  return csv;
}

std::string StepsCsv(const std::vector<StepRecord>& steps) {
  std::string csv =
      "step,start_s,end_s,phase,prefill_tokens,decode_tokens,sequences,bytes,flops,"
      "kv_used_blocks,kv_used_tokens,preemptions\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepRecord& s = steps[i];
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", i, s.start_s, s.end_s,
                       StepPhaseName(s.phase()), s.prefill_tokens, s.decode_tokens, s.sequences,
                       s.bytes, s.flops, s.kv_used_blocks, s.kv_used_tokens, s.preemptions);
  }
  return csv;
}

std::string SummaryTable(const RunSummary& s) {
  std::string t = Rule(" Serving Benchmark Result ", '=');
  t += Row("Successful requests:", s.completed);
  t += Row("Failed requests:", s.failed);
  t += Row("Benchmark duration (s):", s.duration_s);
  t += Row("Total input tokens:", s.total_input_tokens);
  t += Row("Total generated tokens:", s.total_output_tokens);
  t += Row("Request throughput (req/s):", s.request_throughput);
  t += Row("Request goodput (req/s):", s.request_goodput);
  t += Row("Output token throughput (tok/s):", s.output_throughput);
  t += Row("Total Token throughput (tok/s):", s.total_token_throughput);
  for (const NamedDistribution& l : Latencies(s)) {
    t += Rule(l.title, '-');
    t += Row(fmt::format("Mean {} (ms):", l.short_name), l.d->mean);
    t += Row(fmt::format("Median {} (ms):", l.short_name), l.d->median);
    t += Row(fmt::format("Std {} (ms):", l.short_name), l.d->std);
    t += Row(fmt::format("P90 {} (ms):", l.short_name), l.d->p90);
    t += Row(fmt::format("P99 {} (ms):", l.short_name), l.d->p99);
  }
  t += Rule("MBU / MFU per phase (%)", '-');
  t += fmt::format("{:<8}{:>6}{:>10}{:>9}{:>10}{:>10}{:>10}{:>10}\n", "phase", "steps", "time (s)",
                   "tokens", "MBU spec", "MBU meas", "MFU spec", "MFU meas");
  for (const NamedPhase& p : Phases(s)) {
    const PhaseMetrics& m = *p.phase;
    t += fmt::format("{:<8}{:>6}{:>10.3f}{:>9}{:>10}{:>10}{:>10}{:>10}\n", p.name, m.steps,
                     m.time_s, m.tokens, UtilisationCell(m.mbu_spec, m.bytes),
                     UtilisationCell(m.mbu_measured, m.bytes), UtilisationCell(m.mfu_spec, m.flops),
                     UtilisationCell(m.mfu_measured, m.flops));
  }
  t += "(-: no such peak known; spec peaks come from a hardware file, measured from the probe)\n";
  for (const std::string& line : PeakLines(s.peaks)) t += line + "\n";
  for (const std::string& line : UtilisationWarnings(s)) t += "warning: " + line + "\n";
  t += Rule("KV Cache", '-');
  t += Row("KV capacity (blocks):", s.kv_capacity_blocks);
  t += Row("KV block size (tokens):", s.kv_block_size);
  t += Row("Peak KV blocks used:", s.peak_kv_blocks);
  t += Row("Mean KV blocks used (per step):", s.mean_kv_blocks);
  t += Row("Peak KV tokens held:", s.peak_kv_tokens);
  t += Row("Mean KV tokens held (per step):", s.mean_kv_tokens);
  t += Rule("Scheduling", '-');
  if (!s.batching_mode.empty()) t += Row("Batching mode:", s.batching_mode);
  if (!s.kv_reservation.empty()) t += Row("KV reservation:", s.kv_reservation);
  t += Row("Steps:", s.steps);
  t += Row("Preemptions:", s.preemptions);
  t += std::string(kTableWidth, '=') + "\n";
  return t;
}

std::string SummaryMarkdown(const RunSummary& s) {
  std::string md = "| Metric | Value |\n|---|---:|\n";
  const auto row_f = [&](const char* label, double v) {
    md += fmt::format("| {} | {:.2f} |\n", label, v);
  };
  const auto row_i = [&](const char* label, int64_t v) {
    md += fmt::format("| {} | {} |\n", label, v);
  };
  row_i("Successful requests", s.completed);
  row_i("Failed requests", s.failed);
  row_f("Benchmark duration (s)", s.duration_s);
  row_i("Total input tokens", s.total_input_tokens);
  row_i("Total generated tokens", s.total_output_tokens);
  row_f("Request throughput (req/s)", s.request_throughput);
  row_f("Request goodput (req/s)", s.request_goodput);
  row_f("Output token throughput (tok/s)", s.output_throughput);
  row_f("Total token throughput (tok/s)", s.total_token_throughput);
  if (!s.batching_mode.empty()) md += fmt::format("| Batching mode | {} |\n", s.batching_mode);
  if (!s.kv_reservation.empty()) md += fmt::format("| KV reservation | {} |\n", s.kv_reservation);
  row_i("Steps", s.steps);
  row_i("Preemptions", s.preemptions);
  row_i("KV capacity (blocks)", s.kv_capacity_blocks);
  row_i("KV block size (tokens)", s.kv_block_size);
  row_i("Peak KV blocks used", s.peak_kv_blocks);
  row_f("Mean KV blocks used (per step)", s.mean_kv_blocks);
  row_i("Peak KV tokens held", s.peak_kv_tokens);
  row_f("Mean KV tokens held (per step)", s.mean_kv_tokens);

  md += "\n| Latency (ms) | Mean | Median | Std | P90 | P99 | Samples |\n";
  md += "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const NamedDistribution& l : Latencies(s)) {
    md += fmt::format("| {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {} |\n", l.short_name,
                      l.d->mean, l.d->median, l.d->std, l.d->p90, l.d->p99, l.d->count);
  }

  md +=
      "\n| Phase | Steps | Time (s) | Tokens | MBU spec (%) | MBU measured (%) | MFU spec (%) "
      "| MFU measured (%) |\n";
  md += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const NamedPhase& p : Phases(s)) {
    const PhaseMetrics& m = *p.phase;
    md += fmt::format(
        "| {} | {} | {:.3f} | {} | {} | {} | {} | {} |\n", p.name, m.steps, m.time_s, m.tokens,
        UtilisationCell(m.mbu_spec, m.bytes), UtilisationCell(m.mbu_measured, m.bytes),
        UtilisationCell(m.mfu_spec, m.flops), UtilisationCell(m.mfu_measured, m.flops));
  }
  md += "\n";
  for (const std::string& line : PeakLines(s.peaks)) md += line + "  \n";
  for (const std::string& line : UtilisationWarnings(s)) md += "\n> **Warning:** " + line + "\n";
  return md;
}

namespace {

struct DeviceRow {
  std::string device, requests, output, ttft, tpot, decode_mbu_measured, decode_mbu_spec,
      prefill_mfu_measured;
};

std::vector<DeviceRow> DeviceRows(const std::vector<std::pair<std::string, RunSummary>>& devices) {
  std::vector<DeviceRow> rows;
  for (const auto& [name, s] : devices) {
    rows.push_back({name, fmt::format("{}/{}", s.completed, s.completed + s.failed),
                    fmt::format("{:.1f}", s.output_throughput),
                    fmt::format("{:.2f}", s.ttft_ms.median),
                    fmt::format("{:.2f}", s.tpot_ms.median),
                    UtilisationCell(s.decode.mbu_measured, s.decode.bytes),
                    UtilisationCell(s.decode.mbu_spec, s.decode.bytes),
                    UtilisationCell(s.prefill.mfu_measured, s.prefill.flops)});
  }
  return rows;
}

// Each device's utilisation warnings, prefixed with its name.
std::vector<std::string> DeviceWarnings(
    const std::vector<std::pair<std::string, RunSummary>>& devices) {
  std::vector<std::string> lines;
  for (const auto& [name, s] : devices) {
    for (const std::string& line : UtilisationWarnings(s)) lines.push_back(name + ": " + line);
  }
  return lines;
}

}  // namespace

std::string DevicesTable(const std::vector<std::pair<std::string, RunSummary>>& devices) {
  std::string t = Rule(" Per device ", '=');
  const auto line = [](const DeviceRow& r) {
    return fmt::format("{:<12}{:>9}{:>10}{:>10}{:>10}{:>11}{:>11}{:>12}\n", r.device, r.requests,
                       r.output, r.ttft, r.tpot, r.decode_mbu_measured, r.decode_mbu_spec,
                       r.prefill_mfu_measured);
  };
  t += line({"device", "ok/all", "out tok/s", "TTFT ms", "TPOT ms", "dec MBU m%", "dec MBU s%",
             "pre MFU m%"});
  for (const DeviceRow& r : DeviceRows(devices)) t += line(r);
  t += "(medians; MBU/MFU against each device's own peaks, m = measured, s = spec)\n";
  for (const std::string& w : DeviceWarnings(devices)) t += "warning: " + w + "\n";
  t += std::string(kTableWidth, '=') + "\n";
  return t;
}

std::string DevicesMarkdown(const std::vector<std::pair<std::string, RunSummary>>& devices) {
  std::string md =
      "| Device | Completed / all | Output tok/s | Median TTFT (ms) | Median TPOT (ms) | Decode "
      "MBU "
      "measured (%) | Decode MBU spec (%) | Prefill MFU measured (%) |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const DeviceRow& r : DeviceRows(devices)) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", r.device, r.requests, r.output,
                      r.ttft, r.tpot, r.decode_mbu_measured, r.decode_mbu_spec,
                      r.prefill_mfu_measured);
  }
  for (const std::string& w : DeviceWarnings(devices)) md += "\n> **Warning:** " + w + "\n";
  return md;
}

}  // namespace hwinfer
