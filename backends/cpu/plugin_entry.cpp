// plugin_entry.cpp — the CPU plugin's one exported symbol (hwinfer_plugin_query, made by the plugin
// kit from CpuBackend) and plugin_init's part: the options and the thread pool (plugin_destroy
// stops and joins it, in ~ThreadPool).
//
// Options (plugin_init): threads = integer >= 0, the threads a kernel runs on (0 = one per hardware
// thread, the default). Anything else is INVALID_ARGUMENT naming the key and value.
// Must not print, abort or throw across the ABI; everything goes through errors and host->log.
#include <cinttypes>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>

#include "cpu_backend.h"
#include "hwinfer/kit/plugin_api.h"
#include "hwinfer/kit/plugin_log.h"
#include "hwinfer/kit/plugin_options.h"

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

}  // namespace

hwinfer_error* CpuBackend::init(const hwinfer_host_api& host, const hwinfer_option* options,
                                size_t n_options, std::unique_ptr<hwinfer_plugin>* out) {
  PluginOptions parsed;
  if (hwinfer_error* error = parse_plugin_options(options, n_options, &parsed)) return error;

  int threads = parsed.threads;
  if (threads == 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;  // hardware_concurrency() may not know

  auto plugin = std::make_unique<hwinfer_plugin>();
  plugin->device_count = 1;
  plugin->thread_count = threads;
  plugin->gemm_isa = detect_gemm_isa();
  try {
    plugin->pool = std::make_unique<ThreadPool>(threads);
  } catch (const std::system_error& e) {
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE,
                              "cpu plugin_init: cannot start %d threads: %s", threads, e.what());
  }
  backend::log_message(&host, HWINFER_LOG_INFO, kPluginName,
                       "cpu plugin %s: %d thread%s, gemm micro-kernel %s",
                       HWINFER_CPU_PLUGIN_VERSION, threads, threads == 1 ? "" : "s",
                       gemm_isa_name(plugin->gemm_isa));
  *out = std::move(plugin);
  return nullptr;
}

}  // namespace hwinfer::cpu

HWINFER_KIT_PLUGIN(hwinfer::cpu::CpuBackend);
