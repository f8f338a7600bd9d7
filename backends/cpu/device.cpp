// device.cpp — the CPU plugin's one device (ordinal 0): identity and properties read from the
// machine (host_info.h), and open/close.
//
// Spec peaks are reported as 0 (unknown): the core overlays declared hardware specs, and the
// bandwidth probe measures the real ceiling. Must not cache machine state (memory_free changes) and
// must not accept device options until some exist.
#include <cinttypes>
#include <cstring>

#include "cpu_internal.h"
#include "host_info.h"
#include "kit/plugin_options.h"

namespace hwinfer::cpu {

namespace {

constexpr uint32_t kDeviceCount = 1;
constexpr uint64_t kAlignmentBytes = 64;

hwinfer_error* check_ordinal(uint32_t ordinal, const char* what) {
  if (ordinal < kDeviceCount) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_OUT_OF_RANGE,
                            "cpu %s: device ordinal %" PRIu32
                            " is out of range (the cpu plugin "
                            "has %" PRIu32 " device)",
                            what, ordinal, kDeviceCount);
}

}  // namespace

hwinfer_error* device_count(hwinfer_plugin* plugin, uint32_t* out_count) {
  if (hwinfer_error* error = require_non_null(plugin, "device_count: plugin")) return error;
  if (hwinfer_error* error = require_non_null(out_count, "device_count: out_count")) return error;
  *out_count = kDeviceCount;
  return nullptr;
}

hwinfer_error* device_get_info(hwinfer_plugin* plugin, uint32_t ordinal, hwinfer_device_info* out) {
  return guarded("device_get_info", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(plugin, "device_get_info: plugin")) return error;
    if (hwinfer_error* error = require_non_null(out, "device_get_info: out")) return error;
    if (hwinfer_error* error = check_ordinal(ordinal, "device_get_info")) return error;

    const CpuIdentity identity = read_cpu_identity();
    const HostMemory memory = read_host_memory();
    hwinfer_device_info info;
    std::memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    info.device_type = HWINFER_DEVICE_TYPE_CPU;
    hwinfer_copy_string(info.name, sizeof(info.name), identity.model_name.c_str());
    hwinfer_copy_string(info.vendor, sizeof(info.vendor), identity.vendor.c_str());
    hwinfer_copy_string(info.driver, sizeof(info.driver),
                        "hwinfer-cpu " HWINFER_CPU_PLUGIN_VERSION);
    std::memcpy(info.uuid, identity.uuid.data(), sizeof(info.uuid));
    info.pci_address[0] = '\0';
    info.memory_total_bytes = memory.total_bytes;
    info.memory_free_bytes = memory.available_bytes;
    info.max_allocation_bytes = memory.total_bytes;
    info.alignment_bytes = kAlignmentBytes;
    info.compute_units = static_cast<uint32_t>(plugin->thread_count);
    // spec_peak_* stay 0: unknown here; the core overlays configs/hardware specs.
    hwinfer_copy_out(out, &info, sizeof(info));
    return nullptr;
  });
}

hwinfer_error* device_open(hwinfer_plugin* plugin, uint32_t ordinal, const hwinfer_option* options,
                           size_t n_options, hwinfer_device** out) {
  return guarded("device_open", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(plugin, "device_open: plugin")) return error;
    if (hwinfer_error* error = require_non_null(out, "device_open: out")) return error;
    if (hwinfer_error* error = check_ordinal(ordinal, "device_open")) return error;
    if (hwinfer_error* error =
            backend::check_option_array(kPluginName, "device_open", options, n_options)) {
      return error;
    }
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
    if (plugin->device_is_open.exchange(true)) {
      return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                "cpu device_open: device %" PRIu32
                                " is already open in this plugin instance (close it first)",
                                ordinal);
    }
    hwinfer_device* device = new (std::nothrow) hwinfer_device;
    if (device == nullptr) {
      plugin->device_is_open.store(false);
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "cpu device_open: out of memory");
    }
    device->plugin = plugin;
    device->max_allocation_bytes = read_host_memory().total_bytes;
    *out = device;
    return nullptr;
  });
}

void device_close(hwinfer_device* device) {
  if (device == nullptr) return;
  const int64_t buffers = device->live_buffers.load();
  const int64_t streams = device->live_streams.load();
  const int64_t events = device->live_events.load();
  if (buffers != 0 || streams != 0 || events != 0) {
    log_message(device->plugin->host, HWINFER_LOG_WARNING,
                "cpu device_close: %" PRId64 " buffers, %" PRId64 " streams and %" PRId64
                " events are still alive; the host must destroy them before closing the device "
                "(the device object is leaked so they stay safe to destroy)",
                buffers, streams, events);
    // Those objects still point at the device: leak it rather than leave them dangling.
    device->plugin->device_is_open.store(false);
    return;
  }
  device->plugin->device_is_open.store(false);
  delete device;
}

}  // namespace hwinfer::cpu
