// plugin_log.cpp — see plugin_log.h.
#include "hwinfer/kit/plugin_log.h"

#include <cstddef>
#include <cstdio>

namespace hwinfer::backend {

bool host_can_log(const hwinfer_host_api* host) {
  return host != nullptr &&
         host->struct_size >= offsetof(hwinfer_host_api, log) + sizeof(host->log) &&
         host->log != nullptr;
}

void vlog_message(const hwinfer_host_api* host, uint32_t level, const char* plugin_name,
                  const char* format, va_list args) {
  if (!host_can_log(host)) return;
  char message[1024];
  std::vsnprintf(message, sizeof(message), format, args);
  host->log(host->host_context, level, plugin_name, message);
}

void log_message(const hwinfer_host_api* host, uint32_t level, const char* plugin_name,
                 const char* format, ...) {
  va_list args;
  va_start(args, format);
  vlog_message(host, level, plugin_name, format, args);
  va_end(args);
}

}  // namespace hwinfer::backend
