// bench_common.h — what every microbenchmark binary shares: the device under test (chosen with
// --backend=NAME, default cpu, its plugin loaded with the --plugin-option=KEY=VALUE options,
// opened once), uploading inputs, timing one kernel launch per
// iteration between two device events (manual time), and main(). No benchmark lives here.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <memory>

#include "hwinfer/device.h"

namespace hwinfer::bench {

// The device under test; marks |state| skipped (and returns nullptr) when it cannot be opened.
std::shared_ptr<Device> BenchDevice(benchmark::State& state);

// A device buffer holding |bytes| bytes copied from |data| (synchronised). When the device cannot
// allocate it (e.g. more than its max_allocation_bytes), skips |state| with the error and returns
// an empty Buffer; TimeKernel then does nothing.
Buffer Upload(benchmark::State& state, Device& device, Stream& stream, const void* data,
              size_t bytes);

// An uninitialised device buffer of |bytes| bytes; like Upload when it cannot be allocated.
Buffer Allocate(benchmark::State& state, Device& device, uint64_t bytes);

// Runs |desc| once to warm up, then once per iteration between two events; skips |state| with
// the error when the warm-up launch or its synchronisation fails. Does nothing when |state| is
// already skipped.
void TimeKernel(benchmark::State& state, Device& device, Stream& stream,
                const hwinfer_kernel_desc& desc);

// Reads --backend=NAME and --plugin-option=KEY=VALUE (repeatable), then runs Google Benchmark.
int BenchMain(int argc, char** argv);

}  // namespace hwinfer::bench
