// prometheus_text_test.cpp — /metrics' text: vLLM's names with model_name, counters as _total
// samples, histograms cumulative to +Inf with _count and _sum, label values escaped. (The serve
// tests also parse it with prometheus_client's own parser.)
#include "hwinfer/prometheus_text.h"

#include <gtest/gtest.h>

#include <string>

namespace hwinfer {
namespace {

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
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

TEST(PrometheusText, LabelValuesAreEscaped) {
  const std::string text = PrometheusText(ServingMetrics{}, "a\"b\\c\nd");
  EXPECT_NE(text.find("model_name=\"a\\\"b\\\\c\\nd\""), std::string::npos) << text;
}

}  // namespace
}  // namespace hwinfer
