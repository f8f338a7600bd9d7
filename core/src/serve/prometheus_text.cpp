// prometheus_text.cpp — see hwinfer/prometheus_text.h. Counters are written as their `_total`
// samples with HELP and TYPE on that name (as Python's prometheus_client writes vLLM's);
// histograms as cumulative `_bucket{le=...}` samples ending at +Inf, then `_count` and `_sum`.
#include "hwinfer/prometheus_text.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "hwinfer/tensor_view.h"

namespace hwinfer {
namespace {

// A label value with \, " and newline escaped as the format requires.
std::string EscapeLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

class Writer {
 public:
  explicit Writer(const std::string& model_name)
      : model_label_("model_name=\"" + EscapeLabel(model_name) + "\"") {}

  // The device label of the samples that follow ("" = none: a one-device server).
  void SetDevice(const std::string& device) {
    device_label_ = device.empty() ? "" : "device=\"" + EscapeLabel(device) + "\",";
  }

  void Family(const std::string& name, const char* type, const std::string& help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  // One sample; |labels| are extra labels written before model_name ("" for none).
  void Sample(const std::string& name, double value, const std::string& labels = "") {
    text_ += fmt::format("{}{{{}{}{}}} {}\n", name, labels, device_label_, model_label_, value);
  }
  // The samples of one histogram (its family written before).
  void HistogramSamples(const std::string& name, const hwinfer::Histogram& h) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds.size(); ++i) {
      cumulative += h.counts[i];
      Sample(name + "_bucket", static_cast<double>(cumulative),
             fmt::format("le=\"{}\",", h.bounds[i]));
    }
    Sample(name + "_bucket", static_cast<double>(h.count), "le=\"+Inf\",");
    Sample(name + "_count", static_cast<double>(h.count));
    Sample(name + "_sum", h.sum);
  }
  // MBU or MFU of a phase against both peaks (its family written before).
  void UtilisationSamples(const std::string& name, double spec, double measured) {
    Sample(name, spec, "peak=\"spec\",");
    Sample(name, measured, "peak=\"measured\",");
  }
  // A comment line; |text| must hold no line break.
  void Comment(const std::string& text) { text_ += "# " + text + "\n"; }
  std::string Take() { return std::move(text_); }

 private:
  std::string model_label_;
  std::string device_label_;
  std::string text_;
};

}  // namespace

namespace {

using DeviceMetrics = std::vector<std::pair<std::string, ServingMetrics>>;

// A family's HELP and TYPE, then |samples| of every device under its device label.
template <typename Samples>
void Family(Writer& w, const DeviceMetrics& devices, const std::string& name, const char* type,
            const std::string& help, Samples samples) {
  w.Family(name, type, help);
  for (const auto& [device, m] : devices) {
    w.SetDevice(devices.size() > 1 ? device : "");
    samples(m);
  }
}

void RequestFamilies(Writer& w, const DeviceMetrics& d) {
  Family(w, d, "vllm:num_requests_running", "gauge",
         "Number of requests in model execution batches.", [&](const ServingMetrics& m) {
           w.Sample("vllm:num_requests_running", static_cast<double>(m.requests_running));
         });
  Family(w, d, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
         [&](const ServingMetrics& m) {
           w.Sample("vllm:num_requests_waiting", static_cast<double>(m.requests_waiting));
         });
  Family(w, d, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
         [&](const ServingMetrics& m) { w.Sample("vllm:kv_cache_usage_perc", m.kv_cache_usage); });
  Family(w, d, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
         [&](const ServingMetrics& m) {
           w.Sample("vllm:prompt_tokens_total", static_cast<double>(m.prompt_tokens));
         });
  Family(w, d, "vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
         [&](const ServingMetrics& m) {
           w.Sample("vllm:generation_tokens_total", static_cast<double>(m.generation_tokens));
         });
  Family(w, d, "vllm:request_success_total", "counter", "Count of successfully processed requests.",
         [&](const ServingMetrics& m) {
           for (const char* reason : {"stop", "length"}) {
             const auto found = m.request_success.find(reason);
             w.Sample("vllm:request_success_total",
                      found == m.request_success.end() ? 0.0 : static_cast<double>(found->second),
                      fmt::format("finished_reason=\"{}\",", reason));
           }
         });
  Family(w, d, "vllm:num_preemptions_total", "counter", "Cumulative number of preemptions.",
         [&](const ServingMetrics& m) {
           w.Sample("vllm:num_preemptions_total", static_cast<double>(m.preemptions));
         });
}

void HistogramFamilies(Writer& w, const DeviceMetrics& d) {
  const struct {
    const char* name;
    const char* help;
    Histogram ServingMetrics::*histogram;
  } histograms[] = {
      {"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
       &ServingMetrics::time_to_first_token},
      {"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
       &ServingMetrics::inter_token_latency},
      {"vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.",
       &ServingMetrics::e2e_request_latency},
      {"vllm:request_queue_time_seconds",
       "Histogram of time spent waiting in the queue in seconds.",
       &ServingMetrics::request_queue_time}};
  for (const auto& h : histograms) {
    Family(w, d, h.name, "histogram", h.help,
           [&](const ServingMetrics& m) { w.HistogramSamples(h.name, m.*(h.histogram)); });
  }
}

void HwinferFamilies(Writer& w, const DeviceMetrics& d) {
  Family(w, d, "hwinfer:requests_cancelled_total", "counter",
         "Requests ended before their end (client disconnected or shutdown).",
         [&](const ServingMetrics& m) {
           w.Sample("hwinfer:requests_cancelled_total", static_cast<double>(m.requests_cancelled));
         });
  Family(w, d, "hwinfer:requests_rejected_total", "counter",
         "Requests refused because the queue was full, or by the scheduler when queued.",
         [&](const ServingMetrics& m) {
           w.Sample("hwinfer:requests_rejected_total", static_cast<double>(m.requests_rejected));
         });
  Family(w, d, "hwinfer:metrics_window_seconds", "gauge",
         "The window of recent steps the hwinfer: utilisation gauges cover.",
         [&](const ServingMetrics& m) {
           w.Sample("hwinfer:metrics_window_seconds", m.window_seconds);
         });
  const std::string window = " over the recent window, against the spec or measured peak.";
  const struct {
    const char* name;
    std::string help;
    PhaseMetrics ServingMetrics::*phase;
    bool mbu;
  } utilisations[] = {{"hwinfer:decode_mbu", "Decode model bandwidth utilisation" + window,
                       &ServingMetrics::decode_window, true},
                      {"hwinfer:decode_mfu", "Decode model FLOPs utilisation" + window,
                       &ServingMetrics::decode_window, false},
                      {"hwinfer:prefill_mbu", "Prefill model bandwidth utilisation" + window,
                       &ServingMetrics::prefill_window, true},
                      {"hwinfer:prefill_mfu", "Prefill model FLOPs utilisation" + window,
                       &ServingMetrics::prefill_window, false}};
  for (const auto& u : utilisations) {
    Family(w, d, u.name, "gauge", u.help, [&](const ServingMetrics& m) {
      const PhaseMetrics& p = m.*(u.phase);
      w.UtilisationSamples(u.name, u.mbu ? p.mbu_spec : p.mfu_spec,
                           u.mbu ? p.mbu_measured : p.mfu_measured);
    });
  }
}

void PeakFamilies(Writer& w, const DeviceMetrics& d) {
  Family(w, d, "hwinfer:peak_flops_per_second", "gauge",
         "The FLOP/s peaks MFU is against: the spec figure of the dtype the model computes in, "
         "and the probed matmul of the model's weight dtype (0 = unknown).",
         [&](const ServingMetrics& m) {
           w.Sample(
               "hwinfer:peak_flops_per_second", m.peaks.spec_flops,
               fmt::format("peak=\"spec\",dtype=\"{}\",", SpecDtypeName(m.peaks.spec_flops_dtype)));
           w.Sample("hwinfer:peak_flops_per_second", m.peaks.measured_flops,
                    fmt::format("peak=\"measured\",dtype=\"{}\",",
                                DtypeName(m.peaks.flops_weight_dtype)));
         });
  Family(w, d, "hwinfer:peak_bandwidth_bytes_per_second", "gauge",
         "The bandwidth peaks MBU is against (0 = unknown).", [&](const ServingMetrics& m) {
           w.Sample("hwinfer:peak_bandwidth_bytes_per_second", m.peaks.spec_bandwidth_bytes_per_s,
                    "peak=\"spec\",");
           w.Sample("hwinfer:peak_bandwidth_bytes_per_second",
                    m.peaks.measured_bandwidth_bytes_per_s, "peak=\"measured\",");
         });
}

}  // namespace

std::string PrometheusText(const ServingMetrics& metrics, const std::string& model_name) {
  return PrometheusText(DeviceMetrics{{"", metrics}}, model_name);
}

std::string PrometheusText(const DeviceMetrics& devices, const std::string& model_name) {
  Writer w(model_name);
  RequestFamilies(w, devices);
  HistogramFamilies(w, devices);
  HwinferFamilies(w, devices);
  PeakFamilies(w, devices);
  // A gauge above 1 comes with a comment line (ignored by parsers) naming the peak and why.
  for (const auto& [device, m] : devices) {
    std::vector<UtilisationFigure> figures = PhaseFigures("decode", m.decode_window);
    for (UtilisationFigure& figure : PhaseFigures("prefill", m.prefill_window)) {
      figures.push_back(figure);
    }
    const std::string prefix = devices.size() > 1 ? device + ": " : "";
    for (const std::string& line : UtilisationWarnings(figures, m.peaks)) {
      w.Comment("hwinfer: warning: " + prefix + line);
    }
  }
  return w.Take();
}

}  // namespace hwinfer
