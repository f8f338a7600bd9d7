// plugin_entry.cpp — the GPU plugins' one exported symbol (hwinfer_plugin_query, made by the plugin
// kit from GpuBackend) and plugin_init's part (compiled once per vendor: hwinfer-cuda.so,
// hwinfer-hip.so).
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
#include <utility>

#include "gpu_internal.h"
#include "hwinfer/kit/plugin_api.h"
#include "hwinfer/kit/plugin_log.h"
#include "hwinfer/kit/plugin_options.h"
#include "vendor_blas.h"

namespace hwinfer::gpu {

namespace {

// The plugin options: `gemm` (vendor_blas.h: auto | cublas | builtin); any other key is
// INVALID_ARGUMENT naming it.
hwinfer_error* check_plugin_options(const hwinfer_option* options, size_t n_options,
                                    GemmOption* gemm) {
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

hwinfer_error* GpuBackend::init(const hwinfer_host_api& host, const hwinfer_option* options,
                                size_t n_options, std::unique_ptr<hwinfer_plugin>* out) {
  // This plugin stays mapped once loaded, even when plugin_init fails below: hipcc's module
  // constructor registered the kernels' code object with the HIP runtime at load, and the only
  // pointer to what that allocated is in this library's data; unmapping it (the host dlcloses a
  // plugin whose init failed) turned that into a leak under LeakSanitizer. Kept mapped, it keeps
  // the vendor runtime it links (libamdhip64 and the HSA runtime), what that runtime dlopened
  // (libcuda for the static cudart) and the cuBLAS handle (vendor_blas.cpp) loaded and reachable.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&GpuBackend::init), &self) != 0 && self.dli_fname != nullptr) {
    pin_loaded_library(self.dli_fname);
  }
  GemmOption gemm = GemmOption::kAuto;
  GPU_RETURN_IF_ERROR(check_plugin_options(options, n_options, &gemm));
  auto plugin = std::make_unique<hwinfer_plugin>();
  plugin->host = &host;  // enumerate_devices logs through it
  enumerate_devices(plugin.get());
  GPU_RETURN_IF_ERROR(select_gemm_path(plugin.get(), gemm));
  if (plugin->devices.empty()) {
    log_message(&host, HWINFER_LOG_INFO, "no devices: %s", plugin->unavailable_reason.c_str());
  }
  plugin->device_count = static_cast<uint32_t>(plugin->devices.size());
  *out = std::move(plugin);
  return nullptr;
}

}  // namespace hwinfer::gpu

HWINFER_KIT_PLUGIN(hwinfer::gpu::GpuBackend);
