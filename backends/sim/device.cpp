// device.cpp — the simulated devices: identity and properties from the hardware file, open and
// close. Every ordinal is the same hardware; the UUID is derived from the hardware name and the
// ordinal so it is stable across runs and distinct from any real device.
//
// Must not accept device options (there are none) and must not report a real clock.
#include <cstring>
#include <memory>
#include <string>

#include "sim_internal.h"

namespace hwinfer::sim {

namespace {

constexpr uint64_t kAlignmentBytes = 256;

// FNV-1a 64-bit over |text| continuing from |hash|.
uint64_t fnv1a(const std::string& text, uint64_t hash) {
  for (const char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// A name-based (RFC 4122 version 5 layout) UUID of "hwinfer-sim/<hardware name>/<ordinal>".
void make_uuid(const std::string& hardware_name, uint32_t ordinal, uint8_t out[16]) {
  const std::string key = "hwinfer-sim/" + hardware_name + "/" + std::to_string(ordinal);
  const uint64_t high = fnv1a(key, 0xcbf29ce484222325ull);
  const uint64_t low = fnv1a(key + "#", high ^ 0x9e3779b97f4a7c15ull);
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<uint8_t>(high >> (56 - 8 * i));
    out[8 + i] = static_cast<uint8_t>(low >> (56 - 8 * i));
  }
  out[6] = static_cast<uint8_t>((out[6] & 0x0f) | 0x50);  // version 5
  out[8] = static_cast<uint8_t>((out[8] & 0x3f) | 0x80);  // RFC 4122 variant
}

}  // namespace

hwinfer_error* SimBackend::device_info(const hwinfer_plugin& plugin, uint32_t ordinal,
                                       hwinfer_device_info& info) {
  const HardwareSpec& spec = plugin.spec;
  uint64_t allocated = 0;
  {
    std::lock_guard<std::mutex> lock(plugin.mutex);
    allocated = plugin.allocated[ordinal];
  }
  info.device_type = HWINFER_DEVICE_TYPE_VIRTUAL;
  hwinfer_copy_string(info.name, sizeof(info.name), ("sim: " + spec.name).c_str());
  hwinfer_copy_string(info.vendor, sizeof(info.vendor), "hwinfer-sim");
  hwinfer_copy_string(
      info.driver, sizeof(info.driver),
      ("hwinfer-sim " HWINFER_SIM_PLUGIN_VERSION " (virtual clock; " + spec.file + ")").c_str());
  make_uuid(spec.name, ordinal, info.uuid);
  info.memory_total_bytes = plugin.memory_total_bytes;
  info.memory_free_bytes = plugin.memory_total_bytes - allocated;
  info.max_allocation_bytes = plugin.memory_total_bytes;
  info.alignment_bytes = kAlignmentBytes;
  info.compute_units = 0;  // unknown: the model has no notion of cores
  info.spec_peak_bandwidth_bytes_per_s = spec.peak_bandwidth_bytes_per_s;
  info.spec_peak_flops_f32 = spec.peak_flops_f32;
  info.spec_peak_flops_f16 = spec.peak_flops_f16;
  info.spec_peak_flops_bf16 = spec.peak_flops_bf16;
  info.spec_peak_flops_int8 = spec.peak_flops_int8;
  return nullptr;
}

hwinfer_error* SimBackend::open_device(hwinfer_plugin&, uint32_t, const hwinfer_option* options,
                                       size_t n_options, std::unique_ptr<hwinfer_device>* out) {
  if (n_options > 0) {
    const bool readable =
        options[0].struct_size >= offsetof(hwinfer_option, value) + sizeof(options[0].value);
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "sim device_open: unknown option '%s'; the sim device takes no options (plugin "
        "options: hardware, devices, backed_limit_mib)",
        readable && options[0].key != nullptr ? options[0].key : "(null)");
  }
  *out = std::make_unique<hwinfer_device>();
  return nullptr;
}

}  // namespace hwinfer::sim
