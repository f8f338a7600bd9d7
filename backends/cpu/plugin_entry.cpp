// plugin_entry.cpp — the CPU plugin's one exported symbol (hwinfer_plugin_query), its static API
// table, and the plugin lifecycle: plugin_init parses the options and starts the thread pool,
// plugin_destroy stops and joins it.
//
// Options (plugin_init): threads = integer >= 0, the threads a kernel runs on (0 = one per hardware
// thread, the default). Anything else is INVALID_ARGUMENT naming the key and value.
// Must not print, abort or throw across the ABI; everything goes through errors and host->log.
#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>

#include "cpu_internal.h"
#include "kit/plugin_log.h"
#include "kit/plugin_options.h"
#include "kit/plugin_query.h"

namespace hwinfer::cpu {

namespace {

constexpr int kMaxThreads = 4096;

// Parses "0".."4096" (decimal digits only, at most 6 of them). Returns false for anything else.
bool parse_thread_count(std::string_view text, int* out) {
  uint64_t value = 0;
  if (!backend::parse_uint(text, 0, kMaxThreads, &value, /*max_digits=*/6)) return false;
  *out = static_cast<int>(value);
  return true;
}
struct PluginOptions {
  int threads = 0;  // 0 = one per hardware thread
};

hwinfer_error* parse_plugin_options(const hwinfer_option* options, size_t n_options,
                                    PluginOptions* out) {
  if (hwinfer_error* error =
          backend::check_option_array(kPluginName, "plugin_init", options, n_options)) {
    return error;
  }
  bool seen_threads = false;
  for (size_t i = 0; i < n_options; ++i) {
    const hwinfer_option& option = options[i];
    if (hwinfer_error* error = backend::check_option(kPluginName, "plugin_init", option, i)) {
      return error;
    }
    if (std::strcmp(option.key, "threads") != 0) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu plugin_init: unknown option '%s' (value '%s'); the cpu plugin "
                                "accepts: threads",
                                option.key, option.value);
    }
    if (seen_threads) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu plugin_init: option 'threads' is given more than once "
                                "(again as '%s')",
                                option.value);
    }
    seen_threads = true;
    if (!parse_thread_count(option.value, &out->threads)) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "cpu plugin_init: option 'threads' has invalid value '%s'; "
                                "expected an integer from 0 to %d (0 = one per hardware thread)",
                                option.value, kMaxThreads);
    }
  }
  return nullptr;
}

const hwinfer_plugin_api kApi = {
    .struct_size = sizeof(hwinfer_plugin_api),
    .abi_major = HWINFER_ABI_MAJOR,
    .abi_minor = HWINFER_ABI_MINOR,
    .reserved0 = 0,
    .name = kPluginName,
    .version = HWINFER_CPU_PLUGIN_VERSION,
    .plugin_init = &plugin_init,
    .plugin_destroy = &plugin_destroy,
    .device_count = &device_count,
    .device_get_info = &device_get_info,
    .device_open = &device_open,
    .device_close = &device_close,
    .buffer_alloc = &buffer_alloc,
    .buffer_free = &buffer_free,
    .buffer_map = &buffer_map,
    .buffer_import_host = &buffer_import_host,
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
    .kernels = nullptr,  // set by hwinfer_plugin_query (kernel_table() lives in kernels.cpp)
    .stream_begin_capture = nullptr,  // graphs (ABI 1.1): not provided
    .stream_end_capture = nullptr,
    .graph_launch = nullptr,
    .graph_destroy = nullptr,
};

}  // namespace

void log_message(const hwinfer_host_api* host, uint32_t level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  backend::vlog_message(host, level, kPluginName, format, args);
  va_end(args);
}

hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                           size_t n_options, hwinfer_plugin** out) {
  return guarded("plugin_init", [&]() -> hwinfer_error* {
    if (hwinfer_error* error = require_non_null(host, "plugin_init: host")) return error;
    if (hwinfer_error* error = require_non_null(out, "plugin_init: out")) return error;
    PluginOptions parsed;
    if (hwinfer_error* error = parse_plugin_options(options, n_options, &parsed)) return error;

    int threads = parsed.threads;
    if (threads == 0) threads = static_cast<int>(std::thread::hardware_concurrency());
    if (threads <= 0) threads = 1;  // hardware_concurrency() may not know

    auto plugin = std::make_unique<hwinfer_plugin>();
    plugin->host = host;
    plugin->thread_count = threads;
    plugin->gemm_isa = detect_gemm_isa();
    try {
      plugin->pool = std::make_unique<ThreadPool>(threads);
    } catch (const std::system_error& e) {
      return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE,
                                "cpu plugin_init: cannot start %d threads: %s", threads, e.what());
    }
    log_message(host, HWINFER_LOG_INFO, "cpu plugin %s: %d thread%s, gemm micro-kernel %s",
                HWINFER_CPU_PLUGIN_VERSION, threads, threads == 1 ? "" : "s",
                gemm_isa_name(plugin->gemm_isa));
    *out = plugin.release();
    return nullptr;
  });
}

void plugin_destroy(hwinfer_plugin* plugin) {
  if (plugin == nullptr) return;
  try {
    if (plugin->device_is_open.load()) {
      log_message(plugin->host, HWINFER_LOG_WARNING,
                  "cpu plugin_destroy: device 0 is still open; the host must close it first "
                  "(its handle now dangles)");
    }
    delete plugin;  // ~ThreadPool stops and joins every worker
  } catch (...) {
    // Joining cannot fail for threads we own; nothing may escape across the ABI regardless.
  }
}

}  // namespace hwinfer::cpu

extern "C" HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(
    uint32_t abi_major, uint32_t host_max_minor, const hwinfer_host_api* host,
    const hwinfer_plugin_api** out_api) {
  (void)host_max_minor;  // minor 0 is the oldest there is: every host of major 1 understands it
  (void)host;            // plugin_init receives it again
  if (hwinfer_error* error =
          hwinfer::backend::check_plugin_query(hwinfer::cpu::kPluginName, abi_major, out_api)) {
    return error;
  }
  // The table is static; it is filled once (kernel_table() comes from another file, so it is not
  // a constant expression here) and only read afterwards.
  static const hwinfer_plugin_api api = [] {
    hwinfer_plugin_api table = hwinfer::cpu::kApi;
    table.kernels = hwinfer::cpu::kernel_table();
    return table;
  }();
  *out_api = &api;
  return nullptr;
}

static_assert(std::is_same_v<decltype(&hwinfer_plugin_query), hwinfer_plugin_query_fn>,
              "hwinfer_plugin_query must match plugin.h's hwinfer_plugin_query_fn");
