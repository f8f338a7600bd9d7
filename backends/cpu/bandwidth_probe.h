// bandwidth_probe.h — the CPU backend's memory-bandwidth probe on host pointers: READ, COPY or
// WRITE |size_bytes| |iterations| times, split over the ThreadPool, so the host can time it between
// two events and report the measured peak.
//
// Every byte is touched every iteration. READ sums its chunk with independent 64-bit accumulators
// (the loop vectorises) and stores the total in sink, so the reads cannot be optimised away. It
// must not validate ABI views (kernels.cpp does) nor create threads.
#ifndef HWINFER_BACKENDS_CPU_BANDWIDTH_PROBE_H_
#define HWINFER_BACKENDS_CPU_BANDWIDTH_PROBE_H_

#include <cstdint>

#include "thread_pool.h"

namespace hwinfer::cpu {

struct BandwidthProbeArgs {
  uint32_t mode = 0;  // HWINFER_PROBE_READ / _COPY / _WRITE
  uint32_t iterations = 0;
  uint64_t size_bytes = 0;
  const uint8_t* src = nullptr;  // [size_bytes]   READ, COPY
  uint8_t* dst = nullptr;        // [size_bytes]   COPY, WRITE (must not overlap src)
  uint8_t* sink = nullptr;       // [>= 8]         READ: the sum of every word read
};

// Runs the probe; an unknown mode does nothing (callers validate first).
void bandwidth_probe(const BandwidthProbeArgs& args, ThreadPool& pool);

// The 64-bit wrapping sum of |bytes| read as little-endian words (a tail shorter than a word is
// added byte by byte). Exposed for tests.
uint64_t sum_words(const uint8_t* bytes, uint64_t size_bytes);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_BANDWIDTH_PROBE_H_
