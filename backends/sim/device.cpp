// device.cpp — the simulated devices: identity and properties from the hardware file, open and
// close. Every ordinal is the same hardware; the UUID is derived from the hardware name and the
// ordinal so it is stable across runs and distinct from any real device.
//
// Must not accept device options (there are none) and must not report a real clock.
#include <cinttypes>
#include <cstring>
#include <memory>
#include <string>

#include "sim_internal.h"

namespace hwinfer::sim {

namespace {

constexpr uint64_t kAlignmentBytes = 256;

hwinfer_error* check_ordinal(const hwinfer_plugin* plugin, uint32_t ordinal, const char* what) {
  if (ordinal < plugin->device_count) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_OUT_OF_RANGE,
                            "sim %s: device ordinal %" PRIu32
                            " is out of range (the sim plugin has %" PRIu32
                            " device(s); option 'devices')",
                            what, ordinal, plugin->device_count);
}

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

hwinfer_error* device_count(hwinfer_plugin* plugin, uint32_t* out_count) {
  if (hwinfer_error* error = require_non_null(plugin, "device_count: plugin")) return error;
  if (hwinfer_error* error = require_non_null(out_count, "device_count: out_count")) return error;
  *out_count = plugin->device_count;
  return nullptr;
}

hwinfer_error* device_get_info(hwinfer_plugin* plugin, uint32_t ordinal, hwinfer_device_info* out) {
  return guarded("device_get_info", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(plugin, "device_get_info: plugin")) return error;
    if (hwinfer_error* error = require_non_null(out, "device_get_info: out")) return error;
    if (hwinfer_error* error = check_ordinal(plugin, ordinal, "device_get_info")) return error;
    const HardwareSpec& spec = plugin->spec;
    uint64_t allocated = 0;
    {
      std::lock_guard<std::mutex> lock(plugin->mutex);
      allocated = plugin->allocated[ordinal];
    }
    hwinfer_device_info info;
    std::memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    info.device_type = HWINFER_DEVICE_TYPE_VIRTUAL;
    hwinfer_copy_string(info.name, sizeof(info.name), ("sim: " + spec.name).c_str());
    hwinfer_copy_string(info.vendor, sizeof(info.vendor), "hwinfer-sim");
    hwinfer_copy_string(
        info.driver, sizeof(info.driver),
        ("hwinfer-sim " HWINFER_SIM_PLUGIN_VERSION " (virtual clock; " + spec.file + ")").c_str());
    make_uuid(spec.name, ordinal, info.uuid);
    info.memory_total_bytes = plugin->memory_total_bytes;
    info.memory_free_bytes = plugin->memory_total_bytes - allocated;
    info.max_allocation_bytes = plugin->memory_total_bytes;
    info.alignment_bytes = kAlignmentBytes;
    info.compute_units = 0;  // unknown: the model has no notion of cores
    info.spec_peak_bandwidth_bytes_per_s = spec.peak_bandwidth_bytes_per_s;
    info.spec_peak_flops_f32 = spec.peak_flops_f32;
    info.spec_peak_flops_f16 = spec.peak_flops_f16;
    info.spec_peak_flops_bf16 = spec.peak_flops_bf16;
    info.spec_peak_flops_int8 = spec.peak_flops_int8;
    hwinfer_copy_out(out, &info, sizeof(info));
    return nullptr;
  });
}

hwinfer_error* device_open(hwinfer_plugin* plugin, uint32_t ordinal, const hwinfer_option* options,
                           size_t n_options, hwinfer_device** out) {
  return guarded("device_open", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(plugin, "device_open: plugin")) return error;
    if (hwinfer_error* error = require_non_null(out, "device_open: out")) return error;
    if (hwinfer_error* error = check_ordinal(plugin, ordinal, "device_open")) return error;
    if (n_options > 0) {
      const bool readable =
          options != nullptr &&
          options[0].struct_size >= offsetof(hwinfer_option, value) + sizeof(options[0].value);
      return hwinfer_make_error(
          HWINFER_STATUS_INVALID_ARGUMENT,
          "sim device_open: unknown option '%s'; the sim device takes no options (plugin "
          "options: hardware, devices, backed_limit_mib)",
          readable && options[0].key != nullptr ? options[0].key : "(null)");
    }
    auto device = std::make_unique<hwinfer_device>();
    device->plugin = plugin;
    device->ordinal = ordinal;
    {
      std::lock_guard<std::mutex> lock(plugin->mutex);
      if (plugin->open[ordinal]) {
        return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                  "sim device_open: device %" PRIu32
                                  " is already open in this plugin instance (close it first)",
                                  ordinal);
      }
      plugin->open[ordinal] = true;
    }
    *out = device.release();
    return nullptr;
  });
}

void device_close(hwinfer_device* device) {
  if (device == nullptr) return;
  hwinfer_plugin* plugin = device->plugin;
  const int64_t buffers = device->live_buffers.load();
  const int64_t streams = device->live_streams.load();
  const int64_t events = device->live_events.load();
  {
    std::lock_guard<std::mutex> lock(plugin->mutex);
    plugin->open[device->ordinal] = false;
  }
  if (buffers != 0 || streams != 0 || events != 0) {
    log_message(plugin->host, HWINFER_LOG_WARNING,
                "sim device_close: %" PRId64 " buffers, %" PRId64 " streams and %" PRId64
                " events are still alive; the host must destroy them first (the device object "
                "is leaked so they stay safe to destroy)",
                buffers, streams, events);
    return;
  }
  delete device;
}

}  // namespace hwinfer::sim
