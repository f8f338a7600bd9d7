// prometheus_text.cpp — see hwinfer/prometheus_text.h. Counters are written as their `_total`
// samples with HELP and TYPE on that name (as Python's prometheus_client writes vLLM's);
// histograms as cumulative `_bucket{le=...}` samples ending at +Inf, then `_count` and `_sum`.
#include "hwinfer/prometheus_text.h"

#include <fmt/format.h>

#include <string>
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

  void Family(const std::string& name, const char* type, const std::string& help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  // One sample; |labels| are extra labels written before model_name ("" for none).
  void Sample(const std::string& name, double value, const std::string& labels = "") {
    text_ += fmt::format("{}{{{}{}}} {}\n", name, labels, model_label_, value);
  }
  void Histogram(const std::string& name, const std::string& help, const hwinfer::Histogram& h) {
    Family(name, "histogram", help);
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
  // MBU or MFU of a phase against both peaks.
  void Utilisation(const std::string& name, const std::string& help, double spec, double measured) {
    Family(name, "gauge", help);
    Sample(name, spec, "peak=\"spec\",");
    Sample(name, measured, "peak=\"measured\",");
  }
  // A comment line; |text| must hold no line break.
  void Comment(const std::string& text) { text_ += "# " + text + "\n"; }
  std::string Take() { return std::move(text_); }

 private:
  std::string model_label_;
  std::string text_;
};

}  // namespace

std::string PrometheusText(const ServingMetrics& m, const std::string& model_name) {
  Writer w(model_name);
  w.Family("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.");
  w.Sample("vllm:num_requests_running", static_cast<double>(m.requests_running));
  w.Family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
  w.Sample("vllm:num_requests_waiting", static_cast<double>(m.requests_waiting));
  w.Family("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.");
  w.Sample("vllm:kv_cache_usage_perc", m.kv_cache_usage);
  w.Family("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
  w.Sample("vllm:prompt_tokens_total", static_cast<double>(m.prompt_tokens));
  w.Family("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.");
  w.Sample("vllm:generation_tokens_total", static_cast<double>(m.generation_tokens));
  w.Family("vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (const char* reason : {"stop", "length"}) {
    const auto found = m.request_success.find(reason);
    w.Sample("vllm:request_success_total",
             found == m.request_success.end() ? 0.0 : static_cast<double>(found->second),
             fmt::format("finished_reason=\"{}\",", reason));
  }
  w.Family("vllm:num_preemptions_total", "counter", "Cumulative number of preemptions.");
  w.Sample("vllm:num_preemptions_total", static_cast<double>(m.preemptions));
  w.Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              m.time_to_first_token);
  w.Histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
              m.inter_token_latency);
  w.Histogram("vllm:e2e_request_latency_seconds",
              "Histogram of end to end request latency in seconds.", m.e2e_request_latency);
  w.Histogram("vllm:request_queue_time_seconds",
              "Histogram of time spent waiting in the queue in seconds.", m.request_queue_time);
  w.Family("hwinfer:requests_cancelled_total", "counter",
           "Requests ended before their end (client disconnected or shutdown).");
  w.Sample("hwinfer:requests_cancelled_total", static_cast<double>(m.requests_cancelled));
  w.Family("hwinfer:requests_rejected_total", "counter",
           "Requests refused because the queue was full, or by the scheduler when queued.");
  w.Sample("hwinfer:requests_rejected_total", static_cast<double>(m.requests_rejected));
  w.Family("hwinfer:metrics_window_seconds", "gauge",
           "The window of recent steps the hwinfer: utilisation gauges cover.");
  w.Sample("hwinfer:metrics_window_seconds", m.window_seconds);
  const std::string window = " over the recent window, against the spec or measured peak.";
  w.Utilisation("hwinfer:decode_mbu", "Decode model bandwidth utilisation" + window,
                m.decode_window.mbu_spec, m.decode_window.mbu_measured);
  w.Utilisation("hwinfer:decode_mfu", "Decode model FLOPs utilisation" + window,
                m.decode_window.mfu_spec, m.decode_window.mfu_measured);
  w.Utilisation("hwinfer:prefill_mbu", "Prefill model bandwidth utilisation" + window,
                m.prefill_window.mbu_spec, m.prefill_window.mbu_measured);
  w.Utilisation("hwinfer:prefill_mfu", "Prefill model FLOPs utilisation" + window,
                m.prefill_window.mfu_spec, m.prefill_window.mfu_measured);
  w.Family("hwinfer:peak_flops_per_second", "gauge",
           "The FLOP/s peaks MFU is against: the spec figure of the dtype the model computes in, "
           "and the probed matmul of the model's weight dtype (0 = unknown).");
  w.Sample("hwinfer:peak_flops_per_second", m.peaks.spec_flops,
           fmt::format("peak=\"spec\",dtype=\"{}\",", SpecDtypeName(m.peaks.spec_flops_dtype)));
  w.Sample("hwinfer:peak_flops_per_second", m.peaks.measured_flops,
           fmt::format("peak=\"measured\",dtype=\"{}\",", DtypeName(m.peaks.flops_weight_dtype)));
  w.Family("hwinfer:peak_bandwidth_bytes_per_second", "gauge",
           "The bandwidth peaks MBU is against (0 = unknown).");
  w.Sample("hwinfer:peak_bandwidth_bytes_per_second", m.peaks.spec_bandwidth_bytes_per_s,
           "peak=\"spec\",");
  w.Sample("hwinfer:peak_bandwidth_bytes_per_second", m.peaks.measured_bandwidth_bytes_per_s,
           "peak=\"measured\",");
  // A gauge above 1 comes with a comment line (ignored by parsers) naming the peak and why.
  std::vector<UtilisationFigure> figures = PhaseFigures("decode", m.decode_window);
  for (UtilisationFigure& figure : PhaseFigures("prefill", m.prefill_window)) {
    figures.push_back(figure);
  }
  for (const std::string& line : UtilisationWarnings(figures, m.peaks)) {
    w.Comment("hwinfer: warning: " + line);
  }
  return w.Take();
}

}  // namespace hwinfer
