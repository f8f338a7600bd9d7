// device.cpp — the GPU plugins' devices: enumeration at plugin_init (identity and properties from
// the runtime: name, UUID, PCI address, memory, multiprocessors), device_get_info (free memory
// re-read per call), and device open/close.
//
// Must not report spec peaks: the core's hardware files (configs/hardware, matched by device name)
// give them, from the vendor's data sheet.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "gpu_internal.h"
#include "hwinfer/kit/plugin_options.h"

namespace hwinfer::gpu {

namespace {

void copy_text(char* out, size_t capacity, const std::string& text) {
  std::snprintf(out, capacity, "%s", text.c_str());
}

// The driver and runtime versions, as free text for hwinfer_device_info::driver.
std::string driver_text() {
  int driver = 0;
  int runtime = 0;
  (void)GPU(DriverGetVersion)(&driver);
  (void)GPU(RuntimeGetVersion)(&runtime);
  return vendor_driver_text(driver, runtime);
}

// The identity and properties of runtime device |ordinal|; false (with |why|) when unreadable.
bool read_device_info(int ordinal, hwinfer_device_info* info, std::string* why) {
  DeviceProp prop{};
  const gpuError_t result = GPU(GetDeviceProperties)(&prop, ordinal);
  if (result != gpuSuccess) {
    *why = std::string("GetDeviceProperties failed: ") + GPU(GetErrorString)(result);
    return false;
  }
  info->struct_size = sizeof(hwinfer_device_info);
  info->device_type = vendor_device_type(prop);
  copy_text(info->name, sizeof(info->name), prop.name);
  copy_text(info->vendor, sizeof(info->vendor), vendor_name());
  copy_text(info->driver, sizeof(info->driver), driver_text() + ", " + vendor_arch(prop));
  vendor_read_uuid(ordinal, info->uuid);
  std::snprintf(info->pci_address, sizeof(info->pci_address), "%04x:%02x:%02x.0",
                static_cast<unsigned>(prop.pciDomainID), static_cast<unsigned>(prop.pciBusID),
                static_cast<unsigned>(prop.pciDeviceID));
  info->memory_total_bytes = prop.totalGlobalMem;
  info->max_allocation_bytes = prop.totalGlobalMem;
  info->alignment_bytes = 256;  // the runtime's allocations are aligned to at least 256 bytes
  info->compute_units = static_cast<uint32_t>(prop.multiProcessorCount);
  return true;
}

uint64_t memory_free_bytes(uint32_t ordinal) {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  if (GPU(SetDevice)(static_cast<int>(ordinal)) != gpuSuccess) return 0;
  if (GPU(MemGetInfo)(&free_bytes, &total_bytes) != gpuSuccess) return 0;
  return free_bytes;
}

}  // namespace

void enumerate_devices(hwinfer_plugin* plugin) {
  int count = 0;
  const gpuError_t result = GPU(GetDeviceCount)(&count);
  if (result != gpuSuccess) {
    plugin->unavailable_reason =
        std::string(HWINFER_GPU_VENDOR_RUNTIME) + ": " + GPU(GetErrorString)(result);
    (void)GPU(GetLastError)();  // clear it, so later calls do not see it again
    return;
  }
  if (count == 0) {
    plugin->unavailable_reason = std::string(HWINFER_GPU_VENDOR_RUNTIME) + " reports 0 devices";
    return;
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    hwinfer_device_info info{};
    std::string why;
    if (!read_device_info(ordinal, &info, &why)) {
      log_message(plugin->host, HWINFER_LOG_WARNING, "device %d skipped: %s", ordinal, why.c_str());
      continue;
    }
    plugin->devices.push_back(info);
  }
  if (plugin->devices.empty()) {
    plugin->unavailable_reason = "no device's properties could be read";
  }
}

hwinfer_error* use_device(const hwinfer_device* device, const char* what) {
  GPU_CHECK(what, GPU(SetDevice)(static_cast<int>(device->ordinal)));
  // The runtime keeps the error of any failed call (an allocation refused as out of memory, say)
  // as the thread's last error until GetLastError reads it, and every launcher reads it to learn
  // whether its launch failed: clear it here, so an entry point reports only its own launches.
  // (On an H200 the conformance suite's over-sized allocation otherwise failed the next test's
  // good silu_mul launch with "out of memory".) A sticky error (a kernel fault) stays.
  (void)GPU(GetLastError)();
  return nullptr;
}

hwinfer_error* device_count(hwinfer_plugin* plugin, uint32_t* out_count) {
  return guarded("device_count", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(plugin, "device_count: plugin"));
    GPU_RETURN_IF_ERROR(require_non_null(out_count, "device_count: out_count"));
    *out_count = static_cast<uint32_t>(plugin->devices.size());
    return nullptr;
  });
}

hwinfer_error* device_get_info(hwinfer_plugin* plugin, uint32_t ordinal, hwinfer_device_info* out) {
  return guarded("device_get_info", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(plugin, "device_get_info: plugin"));
    GPU_RETURN_IF_ERROR(require_non_null(out, "device_get_info: out"));
    if (ordinal >= plugin->devices.size()) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_RANGE,
                                "%s device_get_info: ordinal %" PRIu32
                                " out of range (%zu devices)",
                                kPluginName, ordinal, plugin->devices.size());
    }
    hwinfer_device_info info = plugin->devices[ordinal];
    info.memory_free_bytes = memory_free_bytes(ordinal);
    hwinfer_copy_out(out, &info, sizeof(info));
    return nullptr;
  });
}

hwinfer_error* device_open(hwinfer_plugin* plugin, uint32_t ordinal, const hwinfer_option* options,
                           size_t n_options, hwinfer_device** out) {
  return guarded("device_open", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(plugin, "device_open: plugin"));
    GPU_RETURN_IF_ERROR(require_non_null(out, "device_open: out"));
    GPU_RETURN_IF_ERROR(
        backend::check_option_array(kPluginName, "device_open", options, n_options));
    for (size_t i = 0; i < n_options; ++i) {
      GPU_RETURN_IF_ERROR(backend::check_option(kPluginName, "device_open", options[i], i));
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s device_open: unknown option '%s'; the %s plugin has no device "
                                "options yet",
                                kPluginName, options[i].key, kPluginName);
    }
    if (ordinal >= plugin->devices.size()) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_RANGE,
                                "%s device_open: ordinal %" PRIu32 " out of range (%zu devices)",
                                kPluginName, ordinal, plugin->devices.size());
    }
    auto device = std::make_unique<hwinfer_device>();
    device->plugin = plugin;
    device->ordinal = ordinal;
    device->info = plugin->devices[ordinal];
    GPU_RETURN_IF_ERROR(use_device(device.get(), "device_open"));
    std::lock_guard<std::mutex> lock(plugin->mutex);
    if (plugin->open[ordinal]) {
      return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                "%s device_open: device %" PRIu32 " is already open", kPluginName,
                                ordinal);
    }
    plugin->open[ordinal] = true;
    *out = device.release();
    return nullptr;
  });
}

void device_close(hwinfer_device* device) {
  if (device == nullptr) return;
  try {
    if (device->live_buffers != 0 || device->live_streams != 0 || device->live_events != 0) {
      log_message(device->plugin->host, HWINFER_LOG_WARNING,
                  "device_close: device %" PRIu32 " still has %" PRId64 " buffers, %" PRId64
                  " streams and %" PRId64 " events; the host must destroy them first",
                  device->ordinal, device->live_buffers.load(), device->live_streams.load(),
                  device->live_events.load());
    }
    {
      std::lock_guard<std::mutex> lock(device->plugin->mutex);
      device->plugin->open[device->ordinal] = false;
    }
    delete device;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

}  // namespace hwinfer::gpu
