// sampler.cpp — greedy / temperature / top-k / top-p sampling (sampler.h). Probabilities are
// computed in double with the max subtracted first, so large logits cannot overflow.
#include "hwinfer/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace hwinfer {

Status SamplingParams::Validate() const {
  if (!(temperature >= 0.0f)) {
    return InvalidArgument("temperature must be >= 0; got " + std::to_string(temperature));
  }
  if (top_k < 0) return InvalidArgument("top_k must be >= 0; got " + std::to_string(top_k));
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    return InvalidArgument("top_p must be in (0, 1]; got " + std::to_string(top_p));
  }
  return Status::Ok();
}

StatusOr<int32_t> Sampler::Sample(std::span<const float> logits) {
  HWINFER_RETURN_IF_ERROR(params_.Validate());
  if (logits.empty()) return InvalidArgument("cannot sample from an empty logits row");
  // Greedy: the first maximum, NaN ignored.
  int32_t best = -1;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) continue;
    if (best < 0 || logits[i] > logits[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  }
  if (best < 0) return InvalidArgument("every logit is NaN");
  if (params_.temperature == 0.0f || params_.top_k == 1) return best;

  // Candidates sorted by logit, descending (ties: lower id first), cut to top_k.
  std::vector<int32_t> ids;
  ids.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!std::isnan(logits[i])) ids.push_back(static_cast<int32_t>(i));
  }
  size_t keep = ids.size();
  if (params_.top_k > 0) keep = std::min(keep, static_cast<size_t>(params_.top_k));
  auto by_logit = [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(keep), ids.end(),
                    by_logit);
  ids.resize(keep);

  // Softmax at the temperature, then the smallest prefix whose mass reaches top_p.
  const double max_logit = logits[static_cast<size_t>(ids[0])];
  std::vector<double> probs(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    probs[i] = std::exp((logits[static_cast<size_t>(ids[i])] - max_logit) / params_.temperature);
  }
  double total = std::accumulate(probs.begin(), probs.end(), 0.0);
  if (params_.top_p < 1.0f) {
    double mass = 0;
    size_t cut = 0;
    while (cut < probs.size()) {
      mass += probs[cut++] / total;
      if (mass >= static_cast<double>(params_.top_p)) break;
    }
    probs.resize(cut);
    ids.resize(cut);
    total = std::accumulate(probs.begin(), probs.end(), 0.0);
  }
  std::uniform_real_distribution<double> uniform(0.0, total);
  double draw = uniform(rng_);
  for (size_t i = 0; i < probs.size(); ++i) {
    draw -= probs[i];
    if (draw < 0) return ids[i];
  }
  return ids.back();
}

}  // namespace hwinfer
