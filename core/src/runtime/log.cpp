// log.cpp — the host log sink (stderr, level-filtered) and the host API table given to plugins.
// Must not write to stdout: command output (tables, --json) owns it.
#include "hwinfer/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "hwinfer/text_escape.h"

namespace hwinfer {
namespace {

std::atomic<uint32_t>& LevelStorage() {
  static std::atomic<uint32_t> level = [] {
    const char* env = std::getenv("HWINFER_LOG_LEVEL");
    if (env != nullptr) {
      auto parsed = ParseLogLevel(env);
      if (parsed.ok()) return static_cast<uint32_t>(*parsed);
    }
    return static_cast<uint32_t>(LogLevel::kWarning);
  }();
  return level;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "log";
}

void HostLogCallback(void* /*host_context*/, uint32_t level, const char* plugin_name,
                     const char* message) {
  LogLevel mapped = level > HWINFER_LOG_ERROR ? LogLevel::kError : static_cast<LogLevel>(level);
  Log(mapped, plugin_name != nullptr ? plugin_name : "plugin",
      message != nullptr ? message : "(null message)");
}

}  // namespace

StatusOr<LogLevel> ParseLogLevel(const std::string& text) {
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warning") return LogLevel::kWarning;
  if (text == "error") return LogLevel::kError;
  return InvalidArgument("log level '" + text + "' is not one of debug, info, warning, error");
}

void SetLogLevel(LogLevel level) { LevelStorage().store(static_cast<uint32_t>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(LevelStorage().load()); }

void Log(LogLevel level, const std::string& source, const std::string& message) {
  if (static_cast<uint32_t>(level) < LevelStorage().load()) return;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "[hwinfer %s] %s: %s\n", LevelName(level),
               EscapeControlCharacters(source).c_str(), EscapeControlCharacters(message).c_str());
}

const hwinfer_host_api* HostApi() {
  static const hwinfer_host_api api = {
      sizeof(hwinfer_host_api), HWINFER_ABI_MAJOR, HWINFER_ABI_MINOR, nullptr, HostLogCallback,
  };
  return &api;
}

}  // namespace hwinfer
