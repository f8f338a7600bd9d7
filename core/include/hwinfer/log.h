// hwinfer/log.h — the host's log sink: plugin log callbacks and core messages go to stderr,
// filtered by level. The level comes from HWINFER_LOG_LEVEL or the config's log_level. Library
// code logs here and never prints to stdout (stdout belongs to command output such as --json).
#pragma once

#include <cstdint>
#include <string>

#include "hwinfer/plugin.h"
#include "hwinfer/status.h"

namespace hwinfer {

enum class LogLevel : uint32_t {
  kDebug = HWINFER_LOG_DEBUG,
  kInfo = HWINFER_LOG_INFO,
  kWarning = HWINFER_LOG_WARNING,
  kError = HWINFER_LOG_ERROR,
};

// "debug" | "info" | "warning" | "error" -> level; InvalidArgument otherwise.
StatusOr<LogLevel> ParseLogLevel(const std::string& text);
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Thread-safe. |source| is "core" or a plugin name.
void Log(LogLevel level, const std::string& source, const std::string& message);

// The host API table handed to every plugin (log callback wired to Log). Static storage.
const hwinfer_host_api* HostApi();

}  // namespace hwinfer
