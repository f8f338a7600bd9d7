// host_info.cpp — see host_info.h. Reads small procfs files whole; never throws out of the
// read_* functions (a failed read is an absent field).
#include "host_info.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace hwinfer::cpu {

namespace {

std::string_view trim(std::string_view text) {
  const char* const kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

// Calls fn(key, value) for every "key: value" line of |text| until fn returns true.
template <typename Fn>
void for_each_key_value(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (fn(trim(line.substr(0, colon)), trim(line.substr(colon + 1)))) return;
  }
}

std::string read_file(const char* path) {
  try {
    std::ifstream in(path);
    if (!in) return {};
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  } catch (...) {
    return {};
  }
}

// FNV-1a, 64-bit, continuing from |hash|.
uint64_t fnv1a(std::string_view bytes, uint64_t hash) {
  for (const char byte : bytes) {
    hash ^= static_cast<uint8_t>(byte);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

std::string cpuinfo_field(std::string_view text, std::string_view key) {
  std::string value;
  for_each_key_value(text, [&](std::string_view line_key, std::string_view line_value) {
    if (line_key != key) return false;
    value = std::string(line_value);
    return true;
  });
  return value;
}

uint64_t meminfo_bytes(std::string_view text, std::string_view key) {
  uint64_t bytes = 0;
  for_each_key_value(text, [&](std::string_view line_key, std::string_view line_value) {
    if (line_key != key) return false;
    uint64_t kib = 0;
    for (const char digit : line_value) {
      if (digit < '0' || digit > '9') break;
      kib = kib * 10 + static_cast<uint64_t>(digit - '0');
    }
    bytes = kib * 1024;
    return true;
  });
  return bytes;
}

std::array<uint8_t, 16> uuid_from_machine_id(std::string_view machine_id) {
  std::array<uint8_t, 16> uuid{};
  machine_id = trim(machine_id);
  if (machine_id.empty()) return uuid;
  const uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  const uint64_t halves[2] = {fnv1a(machine_id, fnv1a("hwinfer-cpu uuid/0", kOffsetBasis)),
                              fnv1a(machine_id, fnv1a("hwinfer-cpu uuid/1", kOffsetBasis))};
  for (size_t i = 0; i < uuid.size(); ++i) {
    uuid[i] = static_cast<uint8_t>(halves[i / 8] >> (8 * (i % 8)));
  }
  return uuid;
}

bool cpu_can_use_avx2_kernels() {
#if defined(HWINFER_CPU_HAVE_AVX2_KERNEL) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

CpuIdentity read_cpu_identity() {
  CpuIdentity identity;
  const std::string cpuinfo = read_file("/proc/cpuinfo");
  identity.model_name = cpuinfo_field(cpuinfo, "model name");
  if (identity.model_name.empty()) identity.model_name = "CPU";
  identity.vendor = cpuinfo_field(cpuinfo, "vendor_id");
  identity.uuid = uuid_from_machine_id(read_file("/etc/machine-id"));
  return identity;
}

HostMemoryInfo read_host_memory() {
  HostMemoryInfo memory;
  const long page_bytes = sysconf(_SC_PAGESIZE);
  const long total_pages = sysconf(_SC_PHYS_PAGES);
  const long free_pages = sysconf(_SC_AVPHYS_PAGES);
  if (page_bytes > 0 && total_pages > 0) {
    memory.total_bytes = static_cast<uint64_t>(total_pages) * static_cast<uint64_t>(page_bytes);
  }
  // MemAvailable counts reclaimable page cache too, which is what an allocation can really get.
  const uint64_t available = meminfo_bytes(read_file("/proc/meminfo"), "MemAvailable");
  if (available != 0) {
    memory.available_bytes = available;
  } else if (page_bytes > 0 && free_pages > 0) {
    memory.available_bytes = static_cast<uint64_t>(free_pages) * static_cast<uint64_t>(page_bytes);
  }
  return memory;
}

}  // namespace hwinfer::cpu
