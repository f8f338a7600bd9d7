// prometheus_text_test.cpp — /metrics' text: vLLM's names with model_name, counters as _total
// samples, histograms cumulative to +Inf with _count and _sum, label values escaped. (The serve
// tests also parse it with prometheus_client's own parser.)
#include "hwinfer/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace hwinfer {
namespace {

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

// The value of the sample whose line starts with |prefix| (NaN when there is none).
double SampleValue(const std::string& text, const std::string& prefix) {
  const size_t start = text.find("\n" + prefix);
  if (start == std::string::npos) return std::nan("");
  const size_t end = text.find('\n', start + 1);
  const std::string line = text.substr(start + 1, end - start - 1);
  return std::stod(line.substr(line.rfind(' ') + 1));
}

TEST(PrometheusText, VllmNamesCountersAndCumulativeHistograms) {
  ServingMetrics m;
  m.requests_running = 3;
  m.requests_waiting = 2;
  m.kv_cache_usage = 0.25;
  m.prompt_tokens = 60;
  m.generation_tokens = 160;
  m.request_success["length"] = 13;
  m.preemptions = 1;
  for (double seconds : {0.0005, 0.003, 0.003, 100.0, 5000.0})
    m.time_to_first_token.Observe(seconds);
  m.decode_window.mbu_spec = 0.5;
  const std::string text = PrometheusText(m, "tiny");
  for (const char* line : {
           "# TYPE vllm:num_requests_running gauge",
           "vllm:num_requests_running{model_name=\"tiny\"} 3",
           "vllm:num_requests_waiting{model_name=\"tiny\"} 2",
           "vllm:kv_cache_usage_perc{model_name=\"tiny\"} 0.25",
           "# TYPE vllm:prompt_tokens_total counter",
           "vllm:prompt_tokens_total{model_name=\"tiny\"} 60",
           "vllm:generation_tokens_total{model_name=\"tiny\"} 160",
           "vllm:request_success_total{finished_reason=\"stop\",model_name=\"tiny\"} 0",
           "vllm:request_success_total{finished_reason=\"length\",model_name=\"tiny\"} 13",
           "vllm:num_preemptions_total{model_name=\"tiny\"} 1",
           "# TYPE vllm:time_to_first_token_seconds histogram",
           "vllm:time_to_first_token_seconds_bucket{le=\"0.001\",model_name=\"tiny\"} 1",
           "vllm:time_to_first_token_seconds_bucket{le=\"0.005\",model_name=\"tiny\"} 3",
           "vllm:time_to_first_token_seconds_bucket{le=\"80\",model_name=\"tiny\"} 3",
           "vllm:time_to_first_token_seconds_bucket{le=\"160\",model_name=\"tiny\"} 4",
           "vllm:time_to_first_token_seconds_bucket{le=\"2560\",model_name=\"tiny\"} 4",
           "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"tiny\"} 5",
           "vllm:time_to_first_token_seconds_count{model_name=\"tiny\"} 5",
           "vllm:time_to_first_token_seconds_sum{model_name=\"tiny\"} 5100.0065",
           "vllm:inter_token_latency_seconds_count{model_name=\"tiny\"} 0",
           "hwinfer:decode_mbu{peak=\"spec\",model_name=\"tiny\"} 0.5",
           "hwinfer:decode_mbu{peak=\"measured\",model_name=\"tiny\"} 0",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << "missing: " << line << "\n" << text;
  }
  for (const char* family : {"vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
                             "hwinfer:prefill_mfu", "hwinfer:requests_cancelled_total"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + family), std::string::npos) << family;
  }
}

TEST(PrometheusText, PeaksAreGaugesAndAGaugeAboveOneComesWithAWarningComment) {
  ServingMetrics m;
  m.peaks.spec_bandwidth_bytes_per_s = 51.2e9;
  m.peaks.measured_bandwidth_bytes_per_s = 4.5e10;
  m.peaks.spec_flops = 1.792e12;
  m.peaks.spec_flops_dtype = HWINFER_DTYPE_I8;
  m.peaks.measured_flops = 9.5e10;
  m.peaks.flops_weight_dtype = HWINFER_DTYPE_Q8_0;
  m.peaks.measured_flops_probe = {512, 512, 512};
  m.decode_window.mfu_measured = 1.5;
  m.prefill_window.mfu_measured = 0.5;
  const std::string text = PrometheusText(m, "tiny");
  EXPECT_DOUBLE_EQ(SampleValue(text, "hwinfer:peak_flops_per_second{peak=\"spec\",dtype=\"int8\","),
                   1.792e12);
  EXPECT_DOUBLE_EQ(
      SampleValue(text, "hwinfer:peak_flops_per_second{peak=\"measured\",dtype=\"q8_0\","), 9.5e10);
  EXPECT_DOUBLE_EQ(SampleValue(text, "hwinfer:peak_bandwidth_bytes_per_second{peak=\"spec\","),
                   51.2e9);
  EXPECT_DOUBLE_EQ(SampleValue(text, "hwinfer:peak_bandwidth_bytes_per_second{peak=\"measured\","),
                   4.5e10);
  EXPECT_DOUBLE_EQ(SampleValue(text, "hwinfer:decode_mfu{peak=\"measured\","), 1.5);
  const size_t warning = text.find(
      "\n# hwinfer: warning: decode MFU 150% exceeds 100% of the "
      "measured q8_0 matmul peak 95.0 GFLOP/s (probe at m=512 n=512 k=512): ");
  EXPECT_NE(warning, std::string::npos) << text;
  EXPECT_EQ(text.find("prefill MFU"), std::string::npos) << "50% needs no warning";
  // Under 100% everywhere: no warning at all.
  m.decode_window.mfu_measured = 1.0;
  EXPECT_EQ(PrometheusText(m, "tiny").find("warning"), std::string::npos);
}

// Several devices: each family's HELP and TYPE once, then every device's samples under its label.
TEST(PrometheusText, SeveralDevicesGetOneSampleSetEachUnderADeviceLabel) {
  ServingMetrics cpu, vulkan;
  cpu.generation_tokens = 10;
  vulkan.generation_tokens = 4;
  vulkan.request_success["length"] = 2;
  vulkan.decode_window.mbu_measured = 1.25;
  const std::string text = PrometheusText({{"cpu:0", cpu}, {"vulkan:0", vulkan}}, "tiny");
  for (const char* line : {
           "vllm:generation_tokens_total{device=\"cpu:0\",model_name=\"tiny\"} 10",
           "vllm:generation_tokens_total{device=\"vulkan:0\",model_name=\"tiny\"} 4",
           "vllm:request_success_total{finished_reason=\"length\",device=\"vulkan:0\","
           "model_name=\"tiny\"} 2",
           "vllm:time_to_first_token_seconds_count{device=\"cpu:0\",model_name=\"tiny\"} 0",
           "hwinfer:decode_mbu{peak=\"measured\",device=\"vulkan:0\",model_name=\"tiny\"} 1.25",
       }) {
    EXPECT_TRUE(HasLine(text, line)) << "missing: " << line << "\n" << text;
  }
  size_t helps = 0;
  for (size_t at = text.find("# HELP vllm:generation_tokens_total"); at != std::string::npos;
       at = text.find("# HELP vllm:generation_tokens_total", at + 1)) {
    ++helps;
  }
  EXPECT_EQ(helps, 1u);
  EXPECT_NE(text.find("# hwinfer: warning: vulkan:0: decode MBU 125% exceeds"), std::string::npos);
  // One device: no device label, exactly the one-engine text.
  EXPECT_EQ(PrometheusText({{"cpu:0", cpu}}, "tiny"), PrometheusText(cpu, "tiny"));
}

TEST(PrometheusText, LabelValuesAreEscaped) {
  const std::string text = PrometheusText(ServingMetrics{}, "a\"b\\c\nd");
  EXPECT_NE(text.find("model_name=\"a\\\"b\\\\c\\nd\""), std::string::npos) << text;
}

}  // namespace
}  // namespace hwinfer
