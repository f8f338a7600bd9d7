// bandwidth_probe.cpp — see bandwidth_probe.h. Each iteration is one parallel_for over chunks of
// at least kMinChunkBytes (a few per thread, for balance); the barrier between iterations keeps
// iterations from overlapping on one chunk.
#include "bandwidth_probe.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "hwinfer/plugin.h"

namespace hwinfer::cpu {

namespace {

constexpr uint64_t kMinChunkBytes = uint64_t{256} * 1024;
constexpr uint64_t kChunksPerThread = 4;
constexpr uint64_t kChunkAlignBytes = 4096;

}  // namespace

uint64_t sum_words(const uint8_t* bytes, uint64_t size_bytes) {
  constexpr uint64_t kAccumulators = 8;  // 8 x 64-bit lanes: two AVX2 or four SSE2 registers
  uint64_t acc[kAccumulators] = {};
  uint64_t offset = 0;
  for (; offset + kAccumulators * 8 <= size_bytes; offset += kAccumulators * 8) {
    for (uint64_t lane = 0; lane < kAccumulators; ++lane) {
      uint64_t word;
      std::memcpy(&word, bytes + offset + lane * 8, sizeof(word));
      acc[lane] += word;
    }
  }
  uint64_t total = 0;
  for (; offset < size_bytes; ++offset) total += bytes[offset];
  for (uint64_t lane = 0; lane < kAccumulators; ++lane) total += acc[lane];
  return total;
}

void bandwidth_probe(const BandwidthProbeArgs& args, ThreadPool& pool) {
  if (args.size_bytes == 0 || args.iterations == 0) return;
  const uint64_t threads = static_cast<uint64_t>(pool.thread_count());
  uint64_t chunk_bytes = std::max(kMinChunkBytes, args.size_bytes / (threads * kChunksPerThread));
  chunk_bytes = (chunk_bytes + kChunkAlignBytes - 1) / kChunkAlignBytes * kChunkAlignBytes;
  const uint64_t n_chunks = (args.size_bytes + chunk_bytes - 1) / chunk_bytes;
  const auto chunk_size = [&](uint64_t chunk) {
    return std::min(chunk_bytes, args.size_bytes - chunk * chunk_bytes);
  };

  std::atomic<uint64_t> read_total{0};
  for (uint32_t iteration = 0; iteration < args.iterations; ++iteration) {
    const auto fill = static_cast<int>((iteration * 0x9du + 0x5au) & 0xffu);
    pool.parallel_for(static_cast<int64_t>(n_chunks), [&](int64_t item) {
      const auto chunk = static_cast<uint64_t>(item);
      const uint64_t begin = chunk * chunk_bytes;
      const auto size = static_cast<size_t>(chunk_size(chunk));
      switch (args.mode) {
        case HWINFER_PROBE_READ:
          read_total.fetch_add(sum_words(args.src + begin, size), std::memory_order_relaxed);
          break;
        case HWINFER_PROBE_COPY:
          std::memcpy(args.dst + begin, args.src + begin, size);
          break;
        case HWINFER_PROBE_WRITE:
          std::memset(args.dst + begin, fill, size);
          break;
        default:
          break;
      }
    });
  }
  if (args.mode == HWINFER_PROBE_READ && args.sink != nullptr) {
    const uint64_t total = read_total.load(std::memory_order_relaxed);
    std::memcpy(args.sink, &total, sizeof(total));
  }
}

}  // namespace hwinfer::cpu
