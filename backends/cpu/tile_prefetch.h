// tile_prefetch.h — the software prefetches of the CPU matmul kernels. A kernel streaming weight
// rows reads 4 KiB ahead along them: the hardware prefetchers keep up with rows of 4 KiB but fall
// behind on longer ones (k = 5632 f16 rows: 15 -> 19 GB/s on one core with it). And when several
// register tiles of rows of a (or x) run over the same few weight rows, the first reads those
// rows from memory and the later ones find them in L1; the later ones then prefetch the next
// weight rows, spread over their steps, so that memory works while they multiply and the first
// tile of the next block does not wait. Internal linkage only: included from files built with
// different instruction sets (only _mm_prefetch, SSE, is used).
#ifndef HWINFER_BACKENDS_CPU_TILE_PREFETCH_H_
#define HWINFER_BACKENDS_CPU_TILE_PREFETCH_H_

#include <immintrin.h>

#include <cstdint>

namespace hwinfer::cpu {
namespace {

constexpr int64_t kReadAheadBytes = 4096;

// Prefetches (into L1) the line kReadAheadBytes past |p|, along the weight row |p| is in.
inline void read_ahead(const void* p) {
  _mm_prefetch(static_cast<const char*>(p) + kReadAheadBytes, _MM_HINT_T0);
}

// Bytes [begin, end) a tile prefetches for a later one; begin == nullptr: none (the tile reads
// ahead along its own weight rows instead).
struct TilePrefetch {
  const char* begin = nullptr;
  const char* end = nullptr;
};

// The share of tile |tile| (of |tiles| over the same weight rows) of the next |bytes| at |next|:
// none for the first tile, an equal part of the range for each later one.
inline TilePrefetch later_tile_prefetch(const void* next, int64_t bytes, int64_t tile,
                                        int64_t tiles) {
  if (tile <= 0 || tile >= tiles) return TilePrefetch{};
  const auto* base = static_cast<const char*>(next);
  return TilePrefetch{base + (tile - 1) * bytes / (tiles - 1), base + tile * bytes / (tiles - 1)};
}

// Issues a TilePrefetch's lines over |steps| calls of step(), in order, a few per call.
class PrefetchSpreader {
 public:
  PrefetchSpreader(TilePrefetch range, int64_t steps)
      : line_(range.begin), end_(range.end), active_(range.begin != nullptr) {
    const int64_t lines = (range.end - range.begin + 63) / 64;
    const int64_t per_step = steps > 0 ? (lines + steps - 1) / steps : lines;
    step_bytes_ = 64 * per_step;
  }
  bool active() const { return active_; }
  void step() {
    for (const char* stop = line_ + step_bytes_; line_ < stop; line_ += 64) {
      if (line_ < end_) _mm_prefetch(line_, _MM_HINT_T0);
    }
  }

 private:
  const char* line_;
  const char* end_;
  int64_t step_bytes_ = 0;
  bool active_;
};

}  // namespace
}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_TILE_PREFETCH_H_
