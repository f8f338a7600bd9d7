// hwinfer/probe.h — measured ceilings of a device: memory bandwidth (read, copy) through the
// plugin's bandwidth-probe kernel, and matmul FLOP/s per weight dtype through the very kernels the
// executor runs for weights of that dtype (gemm for F32/F16/BF16, matmul_quantized for the GGUF
// block types), each timed with device events. The core counts the bytes and FLOPs from the
// descriptors, so every backend is measured the same way. Results are medians of several timed
// repetitions after a warm-up. A kernel the device does not support is reported as not measured
// with its reason; it never fails the probe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/status.h"

namespace hwinfer {

// The weight dtypes `hwinfer probe` measures by default: F32, F16, BF16 (gemm) and Q8_0, Q4_0,
// Q4_K (matmul_quantized: int8 dot products where the backend quantizes the activations).
std::vector<uint32_t> DefaultMatmulProbeDtypes();

struct ProbeOptions {
  uint64_t bandwidth_bytes = 256ull << 20;  // working set per probe buffer (at most the device's
                                            // max_allocation_bytes)
  uint32_t bandwidth_iterations = 4;        // passes per timed launch
  int64_t gemm_size = 512;   // m of every matmul probe (a 512-token prefill chunk), and n = k
                             // unless matmul_width is set
  int64_t matmul_width = 0;  // n = k of the matmul probes (a model's d_model); 0 = gemm_size.
                             // k is rounded up to whole blocks of a block dtype
  int repetitions = 5;       // timed launches; the median is reported
  std::vector<uint32_t> matmul_dtypes = DefaultMatmulProbeDtypes();  // ProbeDevice's, in order
};

struct ProbeMeasurement {
  bool measured = false;  // false when the kernel is unsupported or failed (reason says why)
  std::string reason;
  double value = 0;             // bytes/s or FLOP/s (median)
  std::vector<double> samples;  // every timed repetition
};

// The FLOP/s of the matmul the executor issues for weights of |weight_dtype|:
//   gemm              a [m, k] F32 x b [n, k] weight_dtype (b transposed) -> c [m, n] F32
//   matmul_quantized  x [m, k] F32 x w [n, k] GGUF blocks                 -> y [m, n] F32
// counted as 2*m*n*k per launch, whatever path the backend takes inside (int8 dots on quantized
// activations, dequantize-to-f32 GEMM, tensor cores...).
struct MatmulPeak {
  uint32_t weight_dtype = 0;  // HWINFER_DTYPE_*
  uint32_t kernel = 0;        // HWINFER_KERNEL_GEMM | HWINFER_KERNEL_MATMUL_QUANTIZED
  int64_t m = 0, n = 0, k = 0;
  ProbeMeasurement flops;  // FLOP/s
};

struct ProbeResult {
  ProbeMeasurement read_bandwidth;  // bytes/s
  ProbeMeasurement copy_bandwidth;  // bytes/s (read + write bytes)
  std::vector<MatmulPeak> matmul;   // one per ProbeOptions::matmul_dtypes, in that order
  // The entry of |weight_dtype|; null when it was not probed.
  const MatmulPeak* Matmul(uint32_t weight_dtype) const;
};

StatusOr<ProbeResult> ProbeDevice(const std::shared_ptr<Device>& device,
                                  const ProbeOptions& options = {});

// The working set a bandwidth probe of |device| uses: options.bandwidth_bytes, at most the device's
// largest allocation (lavapipe's buffers stop at 128 MiB).
uint64_t BandwidthProbeBytes(const Device& device, const ProbeOptions& options);

// One bandwidth measurement (mode = HWINFER_PROBE_*), bytes/s per repetition.
StatusOr<ProbeMeasurement> MeasureBandwidth(const std::shared_ptr<Device>& device, uint32_t mode,
                                            const ProbeOptions& options);
// One matmul peak (m = options.gemm_size, n = k = options.matmul_width or gemm_size,
// options.repetitions). Never an error: an unsupported dtype or a failing launch gives
// flops.measured = false with the reason.
MatmulPeak MeasureMatmulPeak(const std::shared_ptr<Device>& device, uint32_t weight_dtype,
                             const ProbeOptions& options);

}  // namespace hwinfer
