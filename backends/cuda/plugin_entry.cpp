// plugin_entry.cpp — the GPU plugins' one exported symbol (hwinfer_plugin_query), the static API
// table, and the plugin lifecycle (compiled once per vendor: hwinfer-cuda.so, hwinfer-hip.so).
//
// No driver or no device is not an error: plugin_init succeeds, the plugin reports zero devices,
// and the reason goes to the host's log at INFO (a machine without this vendor's GPU is ordinary;
// `hwinfer devices` prints the reason of every plugin with none).
//
// The plugin and the vendor runtime stay loaded for the life of the process once plugin_init has
// run (RTLD_NODELETE; see plugin_init). Options (plugin_init): gemm (vendor_blas.h); any other key
// is INVALID_ARGUMENT. Must not print, abort or throw across the ABI.
#include <dlfcn.h>

#include <cstdarg>
#include <cstring>
#include <memory>
#include <type_traits>

#include "gpu_internal.h"
#include "hwinfer/kit/plugin_log.h"
#include "hwinfer/kit/plugin_options.h"
#include "hwinfer/kit/plugin_query.h"
#include "vendor_blas.h"

namespace hwinfer::gpu {

namespace {

const hwinfer_plugin_api kApi = {
    .struct_size = sizeof(hwinfer_plugin_api),
    .abi_major = HWINFER_ABI_MAJOR,
    .abi_minor = HWINFER_ABI_MINOR,
    .reserved0 = 0,
    .name = kPluginName,
    .version = HWINFER_GPU_PLUGIN_VERSION,
    .plugin_init = &plugin_init,
    .plugin_destroy = &plugin_destroy,
    .device_count = &device_count,
    .device_get_info = &device_get_info,
    .device_open = &device_open,
    .device_close = &device_close,
    .buffer_alloc = &buffer_alloc,
    .buffer_free = &buffer_free,
    .buffer_map = &buffer_map,
    .buffer_import_host = nullptr,  // not yet (GPU(HostRegister) would give it)
    .stream_create = &stream_create,
    .stream_destroy = &stream_destroy,
    .stream_synchronize = &stream_synchronize,
    .copy_h2d = &copy_h2d,
    .copy_d2h = &copy_d2h,
    .copy_d2d = &copy_d2d,
    .event_create = &event_create,
    .event_destroy = &event_destroy,
    .event_record = &event_record,
    .stream_wait_event = &stream_wait_event,
    .event_synchronize = &event_synchronize,
    .event_query = &event_query,
    .event_elapsed_ns = &event_elapsed_ns,
    .kernel_query = &kernel_query,
    .kernels = nullptr,  // set by hwinfer_plugin_query (capture_aware_kernel_table(): graph.cpp)
    .stream_begin_capture = &stream_begin_capture,  // graphs (ABI 1.1): graph.cpp
    .stream_end_capture = &stream_end_capture,
    .graph_launch = &graph_launch,
    .graph_destroy = &graph_destroy,
};

// The plugin options: `gemm` (vendor_blas.h: auto | cublas | builtin); any other key is
// INVALID_ARGUMENT naming it.
hwinfer_error* check_plugin_options(const hwinfer_option* options, size_t n_options,
                                    GemmOption* gemm) {
  GPU_RETURN_IF_ERROR(backend::check_option_array(kPluginName, "plugin_init", options, n_options));
  *gemm = GemmOption::kAuto;
  for (size_t i = 0; i < n_options; ++i) {
    GPU_RETURN_IF_ERROR(backend::check_option(kPluginName, "plugin_init", options[i], i));
    if (std::strcmp(options[i].key, "gemm") == 0) {
      GPU_RETURN_IF_ERROR(parse_gemm_option(options[i].value, gemm));
      continue;
    }
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "%s plugin_init: unknown option '%s' (value '%s'); the %s plugin "
                              "knows gemm (auto, cublas, builtin)",
                              kPluginName, options[i].key, options[i].value, kPluginName);
  }
  return nullptr;
}

// Marks the already-loaded library |path| RTLD_NODELETE (nothing when it is not loaded).
void pin_loaded_library(const char* path) {
  if (void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) {
    dlclose(handle);  // drops the reference just taken; NODELETE stays
  }
}

}  // namespace

void log_message(const hwinfer_host_api* host, uint32_t level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  backend::vlog_message(host, level, kPluginName, format, args);
  va_end(args);
}

hwinfer_error* runtime_error(gpuError_t result, const char* what, const char* call) {
  const uint32_t code =
      result == kErrorOutOfMemory ? HWINFER_STATUS_OUT_OF_MEMORY : HWINFER_STATUS_INTERNAL;
  return hwinfer_make_error(code, "%s %s: %s failed: %s", kPluginName, what, call,
                            GPU(GetErrorString)(result));
}

hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                           size_t n_options, hwinfer_plugin** out) {
  return guarded("plugin_init", [&]() -> hwinfer_error* {
    GPU_RETURN_IF_ERROR(require_non_null(host, "plugin_init: host"));
    GPU_RETURN_IF_ERROR(require_non_null(out, "plugin_init: out"));
    // This plugin stays mapped once loaded, even when plugin_init fails below: hipcc's module
    // constructor registered the kernels' code object with the HIP runtime at load, and the only
    // pointer to what that allocated is in this library's data; unmapping it (the host dlcloses a
    // plugin whose init failed) turned that into a leak under LeakSanitizer. Kept mapped, it keeps
    // the vendor runtime it links (libamdhip64 and the HSA runtime), what that runtime dlopened
    // (libcuda for the static cudart) and the cuBLAS handle (vendor_blas.cpp) loaded and reachable.
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&plugin_init), &self) != 0 && self.dli_fname != nullptr) {
      pin_loaded_library(self.dli_fname);
    }
    GemmOption gemm = GemmOption::kAuto;
    GPU_RETURN_IF_ERROR(check_plugin_options(options, n_options, &gemm));
    auto plugin = std::make_unique<hwinfer_plugin>();
    plugin->host = host;
    enumerate_devices(plugin.get());
    GPU_RETURN_IF_ERROR(select_gemm_path(plugin.get(), gemm));
    if (plugin->devices.empty()) {
      log_message(host, HWINFER_LOG_INFO, "no devices: %s", plugin->unavailable_reason.c_str());
    }
    plugin->open.assign(plugin->devices.size(), false);
    *out = plugin.release();
    return nullptr;
  });
}

void plugin_destroy(hwinfer_plugin* plugin) {
  if (plugin == nullptr) return;
  try {
    for (size_t i = 0; i < plugin->open.size(); ++i) {
      if (plugin->open[i]) {
        log_message(plugin->host, HWINFER_LOG_WARNING,
                    "plugin_destroy: device %zu is still open; the host must close it first", i);
      }
    }
    delete plugin;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

}  // namespace hwinfer::gpu

extern "C" HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(
    uint32_t abi_major, uint32_t host_max_minor, const hwinfer_host_api* host,
    const hwinfer_plugin_api** out_api) {
  (void)host_max_minor;  // minor 0 is the oldest there is
  (void)host;            // plugin_init receives it again
  if (hwinfer_error* error =
          hwinfer::backend::check_plugin_query(hwinfer::gpu::kPluginName, abi_major, out_api)) {
    return error;
  }
  static const hwinfer_plugin_api api = [] {
    hwinfer_plugin_api table = hwinfer::gpu::kApi;
    table.kernels = hwinfer::gpu::capture_aware_kernel_table();
    return table;
  }();
  *out_api = &api;
  return nullptr;
}

static_assert(std::is_same_v<decltype(&hwinfer_plugin_query), hwinfer_plugin_query_fn>,
              "hwinfer_plugin_query must match plugin.h's hwinfer_plugin_query_fn");
