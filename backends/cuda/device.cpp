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

bool use_device_quietly(const hwinfer_device* device, const char* what) {
  hwinfer_error* error = use_device(device, what);
  if (error == nullptr) return true;
  error->destroy(error);
  return false;
}

hwinfer_error* GpuBackend::device_info(const hwinfer_plugin& plugin, uint32_t ordinal,
                                       hwinfer_device_info& info) {
  info = plugin.devices[ordinal];
  info.memory_free_bytes = memory_free_bytes(ordinal);
  return nullptr;
}

hwinfer_error* GpuBackend::open_device(hwinfer_plugin& plugin, uint32_t ordinal,
                                       const hwinfer_option* options, size_t n_options,
                                       std::unique_ptr<hwinfer_device>* out) {
  for (size_t i = 0; i < n_options; ++i) {
    GPU_RETURN_IF_ERROR(backend::check_option(kPluginName, "device_open", options[i], i));
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s device_open: unknown option '%s'; the %s plugin has no device "
                              "options yet",
                              kPluginName, options[i].key, kPluginName);
  }
  auto device = std::make_unique<hwinfer_device>();
  device->plugin = &plugin;
  device->ordinal = ordinal;
  device->info = plugin.devices[ordinal];
  GPU_RETURN_IF_ERROR(use_device(device.get(), "device_open"));
  *out = std::move(device);
  return nullptr;
}

}  // namespace hwinfer::gpu
