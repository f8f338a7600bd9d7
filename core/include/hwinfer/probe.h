// hwinfer/probe.h — measured ceilings of a device: memory bandwidth (read, copy) through the
// plugin's bandwidth-probe kernel, and f32 GEMM FLOP/s through its gemm kernel, both timed with
// device events. The core counts the bytes and FLOPs from the descriptors, so every backend is
// measured the same way. Results are medians of several timed repetitions after a warm-up.
#pragma once

#include <cstdint>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/status.h"

namespace hwinfer {

struct ProbeOptions {
  uint64_t bandwidth_bytes = 256ull << 20;  // working set per probe buffer (at most the device's
                                            // max_allocation_bytes)
  uint32_t bandwidth_iterations = 4;        // passes per timed launch
  int64_t gemm_size = 512;                  // m = n = k
  int repetitions = 5;                      // timed launches; the median is reported
};

struct ProbeMeasurement {
  bool measured = false;  // false when the kernel is unsupported (reason says why)
  std::string reason;
  double value = 0;             // bytes/s or FLOP/s (median)
  std::vector<double> samples;  // every timed repetition
};

struct ProbeResult {
  ProbeMeasurement read_bandwidth;  // bytes/s
  ProbeMeasurement copy_bandwidth;  // bytes/s (read + write bytes)
  ProbeMeasurement gemm_f32;        // FLOP/s, 2*m*n*k per launch
};

StatusOr<ProbeResult> ProbeDevice(const std::shared_ptr<Device>& device,
                                  const ProbeOptions& options = {});

// One bandwidth measurement (mode = HWINFER_PROBE_*), bytes/s per repetition.
StatusOr<ProbeMeasurement> MeasureBandwidth(const std::shared_ptr<Device>& device, uint32_t mode,
                                            const ProbeOptions& options);
StatusOr<ProbeMeasurement> MeasureGemmF32(const std::shared_ptr<Device>& device,
                                          const ProbeOptions& options);

}  // namespace hwinfer
