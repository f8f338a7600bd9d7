// template_device.cpp — enumerating, describing, opening and closing devices.
//
// TEMPLATE: replace `template` with your backend's name. The template reports one device of type
// VIRTUAL whose "device memory" is host memory. A real backend enumerates its hardware here
// (DRIVER: cuDeviceGetCount, vkEnumeratePhysicalDevices...) and fills in identity (UUID, PCI
// address) so the host can recognise one card reported by two plugins. device_get_info must not
// open the device or allocate on it.
#include <unistd.h>

#include <cstring>
#include <new>

#include "template_internal.h"

namespace hwinfer_template {
namespace {

constexpr uint32_t kDeviceCount = 1;
constexpr uint64_t kAlignmentBytes = 64;  // every buffer_alloc result is aligned to this

uint64_t physical_memory_bytes(int pages_name) {
  const long pages = sysconf(pages_name);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;  // 0 = unknown, which the ABI allows
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

}  // namespace

uint64_t device_max_allocation_bytes() {
  // One allocation may use all of physical memory. DRIVER: the driver's limit (e.g.
  // VkPhysicalDeviceMaintenance3Properties::maxMemoryAllocationSize).
  return physical_memory_bytes(_SC_PHYS_PAGES);
}

hwinfer_error* device_count(hwinfer_plugin* plugin, uint32_t* out_count) {
  if (plugin == nullptr || out_count == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "device_count: plugin and out_count must not be NULL");
  }
  // DRIVER: ask the driver. Zero devices is a valid answer, not an error: the host then skips this
  // backend (e.g. the conformance suite reports "no device" instead of failing).
  *out_count = kDeviceCount;
  return nullptr;
}

hwinfer_error* device_get_info(hwinfer_plugin* plugin, uint32_t ordinal, hwinfer_device_info* out) {
  if (plugin == nullptr || out == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "device_get_info: plugin and out must not be NULL");
  }
  if (ordinal >= kDeviceCount) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_RANGE,
                              "device_get_info: ordinal %u, but the template has %u device(s)",
                              ordinal, kDeviceCount);
  }
  // Fill a complete struct of OUR header's version, then copy only as many bytes as the caller's
  // struct_size says it has room for: an older host passes a shorter struct.
  hwinfer_device_info info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  info.device_type = HWINFER_DEVICE_TYPE_VIRTUAL;
  hwinfer_copy_string(info.name, sizeof(info.name), "Template device");
  hwinfer_copy_string(info.vendor, sizeof(info.vendor), "hwinfer");
  hwinfer_copy_string(info.driver, sizeof(info.driver), "template 0.1.0 (host memory)");
  // info.uuid stays all-zero: "no UUID". DRIVER: a GPU reports the UUID the vendor's tools show
  // (nvidia-smi -L, VkPhysicalDeviceIDProperties::deviceUUID), identical in every plugin.
  // info.pci_address stays "" for the same reason.
  info.memory_total_bytes = physical_memory_bytes(_SC_PHYS_PAGES);
  info.memory_free_bytes = physical_memory_bytes(_SC_AVPHYS_PAGES);
  info.max_allocation_bytes = device_max_allocation_bytes();
  info.alignment_bytes = kAlignmentBytes;
  info.compute_units = 1;  // the template runs everything on the calling thread
  // Spec peaks stay 0 ("unknown"): a virtual device has no datasheet. DRIVER: report the vendor's
  // figures; users can override them with a hardware file in the config.
  hwinfer_copy_out(out, &info, sizeof(info));
  return nullptr;
}

hwinfer_error* device_open(hwinfer_plugin* plugin, uint32_t ordinal, const hwinfer_option* options,
                           size_t n_options, hwinfer_device** out) {
  if (plugin == nullptr || out == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "device_open: plugin and out must not be NULL");
  }
  if (ordinal >= kDeviceCount) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_RANGE,
                              "device_open: ordinal %u, but the template has %u device(s)", ordinal,
                              kDeviceCount);
  }
  if (hwinfer_error* error = reject_unknown_options(options, n_options, "device_open")) {
    return error;
  }
  // A device may be open once per plugin instance at a time. compare_exchange makes the check and
  // the claim one atomic step, so two threads cannot both open it.
  bool expected = false;
  if (!plugin->device_is_open.compare_exchange_strong(expected, true)) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "device_open: template device %u is already open", ordinal);
  }
  hwinfer_device* device = new (std::nothrow) hwinfer_device();
  if (device == nullptr) {
    plugin->device_is_open.store(false);
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY, "device_open: out of memory");
  }
  device->plugin = plugin;
  device->ordinal = ordinal;
  device->max_allocation_bytes = device_max_allocation_bytes();
  // DRIVER: create the device context / logical device and its queues here.
  *out = device;
  return nullptr;
}

void device_close(hwinfer_device* device) {
  if (device == nullptr) return;
  // The host must have destroyed everything first. If it did not, say so through the host's log;
  // never abort. (The objects themselves are the host's leak; we cannot free what it still holds.)
  const int64_t buffers = device->live_buffers.load();
  const int64_t streams = device->live_streams.load();
  const int64_t events = device->live_events.load();
  if (buffers != 0 || streams != 0 || events != 0) {
    log_message(device->plugin, HWINFER_LOG_WARNING,
                "device_close: %lld buffer(s), %lld stream(s), %lld event(s) still alive",
                static_cast<long long>(buffers), static_cast<long long>(streams),
                static_cast<long long>(events));
  }
  // DRIVER: wait for the device to go idle and destroy its context.
  device->plugin->device_is_open.store(false);
  delete device;
}

}  // namespace hwinfer_template
