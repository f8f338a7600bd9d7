// hwinfer/hardware_spec.h — vendor spec peaks of one device, from configs/hardware/*.yaml.
//
// These are the "spec" ceilings MBU and MFU are reported against (beside the measured probe).
// The file is a declaration by the user; nothing here measures anything.
//
//   name: NVIDIA H200 SXM              # required string
//   vendor: NVIDIA                     # optional string
//   memory_gib: 141                    # optional number
//   peak_bandwidth_gb_per_s: 4800      # required number > 0 (GB = 1e9 bytes)
//   peak_tflops:                       # required map, at least one entry, each > 0
//     f32: 67
//     f16: 989
//     bf16: 989
//     int8: 1979                       # tera-ops/s
//   launch_overhead_us: 5              # optional number >= 0 (used by the simulated backend)
#pragma once

#include <string>

#include "hwinfer/status.h"

namespace hwinfer {

struct HardwareSpec {
  std::string file;  // where it was read from
  std::string name;
  std::string vendor;
  double memory_bytes = 0;  // 0 = not given
  double peak_bandwidth_bytes_per_s = 0;
  double peak_flops_f32 = 0;  // 0 = not given
  double peak_flops_f16 = 0;
  double peak_flops_bf16 = 0;
  double peak_flops_int8 = 0;
  double launch_overhead_s = 0;
};

// Reads and validates a hardware file; errors name file:line:column and the expected form.
StatusOr<HardwareSpec> LoadHardwareSpec(const std::string& path);

}  // namespace hwinfer
