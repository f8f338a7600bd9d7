// template_plugin.cpp — the plugin's one exported symbol (made by HWINFER_KIT_PLUGIN), the driver
// and the devices: plugin_init's options, device_get_info, device_open.
//
// TEMPLATE: replace `template` with your backend's name. Must not keep per-instance state in
// globals (a host may create several instances), and must never abort or print: errors are
// values, logs go to the host (hwinfer::backend::log_message).
#include <unistd.h>

#include <cstring>
#include <memory>
#include <utility>

#include "hwinfer/kit/plugin_api.h"
#include "template_backend.h"

namespace hwinfer_template {
namespace {

constexpr uint64_t kAlignmentBytes = 64;  // kit::HostMemory aligns every buffer to this

uint64_t physical_memory_bytes(int pages_name) {
  const long pages = sysconf(pages_name);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;  // 0 = unknown, which the ABI allows
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

// DRIVER: accept your own keys (copy the values: the strings live only during the call). Anything
// else is an error naming the key, so a typo in a user's config is reported, not ignored.
hwinfer_error* reject_options(const hwinfer_option* options, size_t n_options, const char* slot) {
  if (n_options == 0) return nullptr;
  const bool readable = options[0].struct_size >= offsetof(hwinfer_option, key) + sizeof(char*);
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "template %s: unknown option '%s' (the template plugin takes none)",
                            slot, readable && options[0].key ? options[0].key : "(null)");
}

}  // namespace

hwinfer_error* TemplateBackend::init(const hwinfer_host_api&, const hwinfer_option* options,
                                     size_t n_options, std::unique_ptr<hwinfer_plugin>* out) {
  if (hwinfer_error* error = reject_options(options, n_options, "plugin_init")) return error;
  // DRIVER: load and initialise your driver (cuInit, vkCreateInstance...). A missing driver is
  // UNAVAILABLE with a message the user can act on; a driver without hardware is 0 devices.
  *out = std::make_unique<hwinfer_plugin>();
  (*out)->device_count = 1;  // DRIVER: cuDeviceGetCount, vkEnumeratePhysicalDevices...
  return nullptr;
}

hwinfer_error* TemplateBackend::device_info(const hwinfer_plugin&, uint32_t,
                                            hwinfer_device_info& info) {
  // |info| is zeroed and sized; the kit copies as much of it as the host's struct holds.
  info.device_type = HWINFER_DEVICE_TYPE_OTHER;  // not VIRTUAL: that is a timing model (the sim)
  hwinfer_copy_string(info.name, sizeof(info.name), "Template device");
  hwinfer_copy_string(info.vendor, sizeof(info.vendor), "hwinfer");
  hwinfer_copy_string(info.driver, sizeof(info.driver), "template 0.1.0 (host memory)");
  // DRIVER: the UUID and PCI address the vendor's tools show (nvidia-smi -L,
  // VkPhysicalDeviceIDProperties::deviceUUID), so the host recognises one card in two plugins.
  info.memory_total_bytes = physical_memory_bytes(_SC_PHYS_PAGES);
  info.memory_free_bytes = physical_memory_bytes(_SC_AVPHYS_PAGES);
  info.max_allocation_bytes = info.memory_total_bytes;
  info.alignment_bytes = kAlignmentBytes;
  info.compute_units = 1;  // the template runs everything on the calling thread
  // Spec peaks stay 0 ("unknown"). DRIVER: the datasheet's figures.
  return nullptr;
}

hwinfer_error* TemplateBackend::open_device(hwinfer_plugin&, uint32_t,
                                            const hwinfer_option* options, size_t n_options,
                                            std::unique_ptr<hwinfer_device>* out) {
  if (hwinfer_error* error = reject_options(options, n_options, "device_open")) return error;
  auto device = std::make_unique<hwinfer_device>();
  // buffer_alloc refuses more than this, the limit device_get_info reports. DRIVER: the driver's.
  device->max_allocation_bytes = physical_memory_bytes(_SC_PHYS_PAGES);
  *out = std::move(device);
  return nullptr;
}

}  // namespace hwinfer_template

HWINFER_KIT_PLUGIN(hwinfer_template::TemplateBackend);
