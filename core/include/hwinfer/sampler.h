// hwinfer/sampler.h — picking the next token from a row of logits: greedy, temperature, top-k and
// top-p (nucleus), seeded per request so a run replays exactly.
//
// Host-side and backend-independent (the executor copies one logits row per sequence back, as
// llama.cpp and vLLM's CPU path do). Order of operations, as in vLLM: temperature, then top-k,
// then top-p over the renormalised distribution, then one draw. Must not allocate per call beyond
// the candidate list, and never returns an id outside [0, vocab).
#pragma once

#include <cstdint>
#include <random>
#include <span>

#include "hwinfer/status.h"

namespace hwinfer {

struct SamplingParams {
  float temperature = 0.0f;  // 0 = greedy (argmax; ties -> lowest id)
  int32_t top_k = 0;         // 0 = no limit
  float top_p = 1.0f;        // (0, 1]; 1 = no limit
  uint64_t seed = 0;

  // InvalidArgument naming the field for a negative temperature, top_k < 0, or top_p outside
  // (0, 1].
  Status Validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

  // The next token id from |logits| [vocab]. InvalidArgument for an empty row or a row whose
  // values are all NaN.
  StatusOr<int32_t> Sample(std::span<const float> logits);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace hwinfer
