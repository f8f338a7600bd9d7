// workload_random.h — the seeded random streams a benchmark workload is drawn from (internal to
// core/src/bench: the workload generator and the dataset sampler share them).
//
// One std::mt19937_64 per aspect (arrivals, lengths, tokens, dataset order), each seeded from the
// spec's seed, so changing one aspect leaves the others unchanged. The distributions are written
// here rather than taken from <random>, whose distributions differ between standard libraries:
// the same seed gives the same workload with libstdc++ and libc++ (up to libm's last-bit
// differences in log/sqrt/cos).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>

#include "hwinfer/workload.h"

namespace hwinfer::bench_internal {

// Independent streams derived from one seed (SplitMix64 finaliser of seed + stream constant).
enum class RandomStream : uint64_t { kArrivals = 1, kLengths = 2, kTokens = 3, kDatasetOrder = 4 };

inline std::mt19937_64 MakeRng(uint64_t seed, RandomStream stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(stream);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return std::mt19937_64(z ^ (z >> 31));
}

// Uniform in [0, 1) with 53 random bits.
inline double Uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Uniform integer in [lo, hi] (hi >= lo), without modulo bias (rejection sampling).
inline int64_t UniformInt(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) return static_cast<int64_t>(rng());  // the full 64-bit range
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % range;
  uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return lo + static_cast<int64_t>(draw % range);
}

// Standard normal (Box-Muller; one of the pair is used, so each draw costs two uniforms).
inline double StandardNormal(std::mt19937_64& rng) {
  const double u1 = 1.0 - Uniform01(rng);  // (0, 1]: log(u1) is finite
  const double u2 = Uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// One length drawn from |dist| (already validated).
inline int64_t DrawLength(const LengthDistribution& dist, std::mt19937_64& rng) {
  switch (dist.kind) {
    case LengthDistribution::Kind::kFixed:
      return dist.value;
    case LengthDistribution::Kind::kUniform:
      return UniformInt(rng, dist.min, dist.max);
    case LengthDistribution::Kind::kNormal: {
      const double x = std::round(dist.mean + dist.std * StandardNormal(rng));
      return static_cast<int64_t>(
          std::clamp(x, static_cast<double>(dist.min), static_cast<double>(dist.max)));
    }
  }
  return dist.value;
}

}  // namespace hwinfer::bench_internal
