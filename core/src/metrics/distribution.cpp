// distribution.cpp — Summarize and Percentile (metrics.h): mean, median, population std, p90,
// p99, min, max of a sample, with numpy's default ("linear") percentile. Pure arithmetic on
// doubles; knows nothing about requests or units.
#include <algorithm>
#include <cmath>
#include <vector>

#include "hwinfer/metrics.h"

namespace hwinfer {

double Percentile(const std::vector<double>& sorted_values, double q) {
  if (sorted_values.empty()) return 0;
  q = std::clamp(q, 0.0, 100.0);
  // numpy "linear": position (n - 1) * q / 100, interpolated between its two closest ranks.
  const double position = static_cast<double>(sorted_values.size() - 1) * q / 100.0;
  const auto lower = static_cast<size_t>(std::floor(position));
  const size_t upper = std::min(lower + 1, sorted_values.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * fraction;
}

Distribution Summarize(std::vector<double> values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / n;
  double squares = 0;  // population variance (numpy's default ddof = 0)
  for (double v : values) squares += (v - d.mean) * (v - d.mean);
  d.std = std::sqrt(squares / n);
  d.median = Percentile(values, 50);
  d.p90 = Percentile(values, 90);
  d.p99 = Percentile(values, 99);
  d.min = values.front();
  d.max = values.back();
  d.count = static_cast<int64_t>(values.size());
  return d;
}

}  // namespace hwinfer
