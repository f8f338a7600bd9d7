// host_info.h — what the machine says about its CPU and memory: /proc/cpuinfo, /proc/meminfo,
// /etc/machine-id and sysconf (feeds device_get_info), and the run-time instruction-set check that
// picks between the AVX2 and the portable kernels.
//
// Pure reads: nothing here caches, logs or fails loudly; a missing file or field yields the
// documented fallback. The parsers take text so they can be tested without the real files.
#ifndef HWINFER_BACKENDS_CPU_HOST_INFO_H_
#define HWINFER_BACKENDS_CPU_HOST_INFO_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace hwinfer::cpu {

struct CpuIdentity {
  std::string model_name;        // /proc/cpuinfo "model name", or "CPU"
  std::string vendor;            // /proc/cpuinfo "vendor_id", or ""
  std::array<uint8_t, 16> uuid;  // hash of /etc/machine-id, or all zero
};

struct HostMemoryInfo {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;  // MemAvailable, else free pages
};

// The value of the first "<key> : value" line in /proc/cpuinfo-style |text| (whitespace around key
// and value trimmed), or "" when no line has that key.
std::string cpuinfo_field(std::string_view text, std::string_view key);

// The number of "<key>: <n> kB" in /proc/meminfo-style |text|, in bytes; 0 when absent.
uint64_t meminfo_bytes(std::string_view text, std::string_view key);

// A stable 16-byte id derived from |machine_id| (hashed with an hwinfer-specific salt, so the raw
// machine id is never exposed); all zero when |machine_id| is empty after trimming.
std::array<uint8_t, 16> uuid_from_machine_id(std::string_view machine_id);

CpuIdentity read_cpu_identity();
HostMemoryInfo read_host_memory();

// True when this build has the AVX2 kernels (HWINFER_CPU_HAVE_AVX2_KERNEL) and the CPU runs AVX2,
// FMA and F16C: the one check in front of every *_avx2.cpp kernel (GEMM, quantized matmul,
// attention decode and prefill).
bool cpu_can_use_avx2_kernels();

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_HOST_INFO_H_
