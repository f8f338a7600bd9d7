// hwinfer/hardware_spec.h — vendor spec peaks of one device, from configs/hardware/*.yaml.
//
// These are the "spec" ceilings MBU and MFU are reported against (beside the measured probe).
// The file is a declaration by the user; nothing here measures anything.
//
//   name: NVIDIA H200 SXM              # required string
//   vendor: NVIDIA                     # optional string
//   memory_gib: 141                    # optional number in [0.001, 1048576]
//   peak_bandwidth_gb_per_s: 4800      # required number in [0.1, 100000] (GB = 1e9 bytes)
//   peak_tflops:                       # required map, at least one entry, each in
//     f32: 67                          #   [0.001, 100000]
//     f16: 989
//     bf16: 989
//     int8: 1979                       # tera-ops/s
//   launch_overhead_us: 5              # optional number in [0, 1e6] (the simulated backend)
// Every number must lie in its physical range (a unit slip such as 1e300 or 0.001 GB/s would
// make MBU infinite or absurd, and stall the simulator's virtual clock).
//   match: ["H200"]                    # optional list of strings: a device whose reported name
//                                      # contains one of them (ignoring case) is this hardware
//   interconnect:                      # optional: the link between devices of this kind (the
//     kind: nvlink                     #   simulator's tensor-parallel all-reduces): nvlink |
//     bandwidth_gb_per_s: 450          #   pcie | infinity_fabric | other; per direction per
//     latency_us: 5                    #   device, in [0.1, 100000]; per hop, in [0, 1e6]
//
// A device with no declared `hardware:` file and no spec peaks of its own gets the spec of the
// known hardware file that matches its name (FindKnownHardware), so a GPU's MBU is reported
// against its datasheet without configuration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer {

// The link between devices (tensor parallelism). A ring all-reduce of |bytes| over |ranks| moves
// 2 (N-1)/N x bytes through each device's link in 2 (N-1) hops:
//   seconds = 2 (N-1)/N x bytes / bandwidth + 2 (N-1) x latency.
struct InterconnectSpec {
  std::string kind;                  // "" = not given
  double bandwidth_bytes_per_s = 0;  // per direction, per device
  double latency_s = 0;              // per hop
  double AllReduceSeconds(int ranks, double bytes) const;
};

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
  std::vector<std::string> match;  // device-name substrings (case-insensitive)
  InterconnectSpec interconnect;
};

// Reads and validates a hardware file; errors name file:line:column and the expected form.
StatusOr<HardwareSpec> LoadHardwareSpec(const std::string& path);

// True when |device_name| contains one of |spec|'s match strings, ignoring ASCII case.
bool HardwareMatchesDevice(const HardwareSpec& spec, const std::string& device_name);

// The folders known hardware files are looked up in, in order: <config dir>/hardware and
// <config dir>/../configs/hardware for |config_file| (when not empty), then the installed
// <prefix>/share/hwinfer/hardware next to the loaded libhwinfer. Only folders that exist.
std::vector<std::string> KnownHardwareDirs(const std::string& config_file);

// The first *.yaml (by file name) in |dirs| that matches |device_name|; nullopt when none does.
// A file there that does not load is an error naming it.
StatusOr<std::optional<HardwareSpec>> FindKnownHardware(const std::string& device_name,
                                                        const std::vector<std::string>& dirs);

}  // namespace hwinfer
