// hwinfer/serving_metrics.h — what a serving engine counts while it runs, in the shape Prometheus
// exposes it (vLLM's metric set): gauges read at the moment, counters and histograms since start.
// The engine fills one under its lock; /metrics renders a copy (hwinfer/prometheus_text.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hwinfer/metrics.h"

namespace hwinfer {

// A cumulative histogram: counts[i] observations <= bounds[i] (not cumulative in storage: each
// bucket counts only its own range; the renderer accumulates), plus everything above the last
// bound in counts.back() (the +Inf bucket).
struct Histogram {
  std::vector<double> bounds;    // ascending upper bounds, without +Inf
  std::vector<uint64_t> counts;  // bounds.size() + 1
  double sum = 0;
  uint64_t count = 0;

  explicit Histogram(std::vector<double> upper_bounds = {});
  void Observe(double value);
};

// vLLM's bucket bounds for its latency histograms (seconds).
std::vector<double> TtftBucketsSeconds();
std::vector<double> InterTokenBucketsSeconds();
std::vector<double> RequestLatencyBucketsSeconds();

struct ServingMetrics {
  // Gauges.
  int64_t requests_running = 0;
  int64_t requests_waiting = 0;
  double kv_cache_usage = 0;  // fraction of the KV blocks in use, [0, 1]
  // Counters.
  int64_t prompt_tokens = 0;                       // prompt tokens of requests admitted
  int64_t generation_tokens = 0;                   // tokens generated (a stop token included)
  std::map<std::string, int64_t> request_success;  // by finish reason: "stop", "length"
  int64_t requests_cancelled = 0;
  int64_t requests_rejected = 0;  // queue full, or refused by the scheduler when queued
  int64_t preemptions = 0;
  // Histograms (seconds).
  Histogram time_to_first_token{TtftBucketsSeconds()};
  Histogram inter_token_latency{InterTokenBucketsSeconds()};
  Histogram e2e_request_latency{RequestLatencyBucketsSeconds()};
  Histogram request_queue_time{RequestLatencyBucketsSeconds()};
  // Utilisation over the steps of the recent window, per phase (hwinfer/metrics.h definitions);
  // 0 when no step of that phase ran in the window or the peak is unknown.
  PhaseMetrics prefill_window, decode_window;
  double window_seconds = 0;
  PeakRates peaks;  // what the window utilisations are against
};

}  // namespace hwinfer
