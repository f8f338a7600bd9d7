// device.cpp — the CPU plugin's one device (ordinal 0): identity and properties read from the
// machine (host_info.h), and open.
//
// Spec peaks are reported as 0 (unknown): the core overlays declared hardware specs, and the
// bandwidth probe measures the real ceiling. Must not cache machine state (memory_free changes) and
// must not accept device options until some exist.
#include <cstring>
#include <memory>
#include <utility>

#include "cpu_backend.h"
#include "host_info.h"

namespace hwinfer::cpu {

namespace {

constexpr uint64_t kAlignmentBytes = 64;

}  // namespace

hwinfer_error* CpuBackend::device_info(const hwinfer_plugin& plugin, uint32_t,
                                       hwinfer_device_info& info) {
  const CpuIdentity identity = read_cpu_identity();
  const HostMemoryInfo memory = read_host_memory();
  info.device_type = HWINFER_DEVICE_TYPE_CPU;
  hwinfer_copy_string(info.name, sizeof(info.name), identity.model_name.c_str());
  hwinfer_copy_string(info.vendor, sizeof(info.vendor), identity.vendor.c_str());
  hwinfer_copy_string(info.driver, sizeof(info.driver), "hwinfer-cpu " HWINFER_CPU_PLUGIN_VERSION);
  std::memcpy(info.uuid, identity.uuid.data(), sizeof(info.uuid));
  info.memory_total_bytes = memory.total_bytes;
  info.memory_free_bytes = memory.available_bytes;
  info.max_allocation_bytes = memory.total_bytes;
  info.alignment_bytes = kAlignmentBytes;
  info.compute_units = static_cast<uint32_t>(plugin.thread_count);
  // spec_peak_* stay 0: unknown here; the core overlays configs/hardware specs.
  return nullptr;
}

hwinfer_error* CpuBackend::open_device(hwinfer_plugin&, uint32_t, const hwinfer_option* options,
                                       size_t n_options, std::unique_ptr<hwinfer_device>* out) {
  if (n_options > 0) {
    const hwinfer_option& option = options[0];
    const bool readable =
        option.struct_size >= offsetof(hwinfer_option, value) + sizeof(option.value);
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "cpu device_open: unknown option '%s' (value '%s'); the cpu device takes no options",
        readable && option.key != nullptr ? option.key : "(null)",
        readable && option.value != nullptr ? option.value : "(null)");
  }
  auto device = std::make_unique<hwinfer_device>();
  device->max_allocation_bytes = read_host_memory().total_bytes;
  *out = std::move(device);
  return nullptr;
}

}  // namespace hwinfer::cpu
