// device.cpp — the simulated devices: identity and properties from the hardware file, open and
// close. Every ordinal is the same hardware; the UUID is derived from the hardware name and the
// ordinal so it is stable across runs and distinct from any real device.
//
// One device option, fail_after_kernels (README.md); must not report a real clock.
#include <cstring>
#include <memory>
#include <string>

#include "hwinfer/kit/plugin_options.h"
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
  const HardwareSpec& spec = plugin.spec(ordinal);
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
  const uint64_t total = plugin.memory_total_bytes[ordinal];
  info.memory_total_bytes = total;
  info.memory_free_bytes = total - allocated;
  info.max_allocation_bytes = total;
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
  constexpr uint64_t kMaxFailAfter = 1000000000000ull;
  uint64_t fail_after = 0;
  for (size_t i = 0; i < n_options; ++i) {
    if (hwinfer_error* error = backend::check_option(kPluginName, "device_open", options[i], i)) {
      return error;
    }
    if (std::strcmp(options[i].key, "fail_after_kernels") != 0) {
      return hwinfer_make_error(
          HWINFER_STATUS_INVALID_ARGUMENT,
          "sim device_open: unknown option '%s'; the sim device takes fail_after_kernels (plugin "
          "options: hardware, devices, backed_limit_mib)",
          options[i].key);
    }
    if (!backend::parse_uint(options[i].value, 1, kMaxFailAfter, &fail_after)) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "sim device_open: option 'fail_after_kernels' has invalid value "
                                "'%s'; expected an integer in [1, %llu]",
                                options[i].value, static_cast<unsigned long long>(kMaxFailAfter));
    }
  }
  *out = std::make_unique<hwinfer_device>();
  (*out)->fail_after_kernels = fail_after;
  return nullptr;
}

}  // namespace hwinfer::sim
