// hwinfer/prometheus_text.h — a serving engine's metrics in Prometheus' text exposition format
// (version 0.0.4), under vLLM's metric names so dashboards and scrapers built for vLLM read
// hwinfer unchanged, plus hwinfer's own utilisation gauges under `hwinfer:` with the peaks they are
// against (hwinfer:peak_*); a utilisation above 1 comes with a `# hwinfer: warning: ...` comment
// line naming the peak it exceeds (UtilisationWarnings). Every sample carries the label
// model_name.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hwinfer/serving_metrics.h"

namespace hwinfer {

// The Content-Type that goes with it.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string PrometheusText(const ServingMetrics& metrics, const std::string& model_name);
// Several devices' engines behind one server (hwinfer/serving_replicas.h): every family once, with
// one sample set per device under the label device="cpu:0" (written only when there are two or
// more: one device's text is the one above).
std::string PrometheusText(const std::vector<std::pair<std::string, ServingMetrics>>& devices,
                           const std::string& model_name);

}  // namespace hwinfer
