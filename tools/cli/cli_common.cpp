// cli_common.cpp — shared pieces of the `hwinfer` subcommands: registry construction from the
// global options, one-line error reporting, and number formatting. No subcommand logic here.
#include "cli_common.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

#include "hwinfer/log.h"
#include "hwinfer/text_escape.h"

namespace hwinfer::cli {

int ReportError(const Status& status) {
  // Messages quote file-controlled text (tensor names, YAML keys): escaped, it cannot drive the
  // terminal or break the one-line form.
  std::fprintf(stderr, "hwinfer: error: %s\n", EscapeControlCharacters(status.message()).c_str());
  return kExitError;
}

void PrintWarnings(const std::vector<std::string>& lines, const std::string& prefix) {
  if (!lines.empty()) std::fflush(stdout);  // after the figures they are about
  for (const std::string& line : lines) {
    std::fprintf(stderr, "hwinfer: warning: %s%s\n", prefix.c_str(), line.c_str());
  }
}

StatusOr<Registry> BuildRegistry(const GlobalOptions& options) {
  if (!options.log_level.empty()) {
    HWINFER_ASSIGN_OR_RETURN(LogLevel level, ParseLogLevel(options.log_level));
    SetLogLevel(level);
  }
  if (options.config_file.empty()) {
    return Registry::FromSearchPaths(PluginSearchPaths(options.plugin_paths));
  }
  HWINFER_ASSIGN_OR_RETURN(RuntimeConfig config, LoadRuntimeConfig(options.config_file));
  return BuildRegistry(options, std::move(config));
}

StatusOr<Registry> BuildRegistry(const GlobalOptions& options, RuntimeConfig config) {
  if (!options.log_level.empty()) {
    HWINFER_ASSIGN_OR_RETURN(LogLevel level, ParseLogLevel(options.log_level));
    SetLogLevel(level);
  }
  // Precedence: --log-level, then HWINFER_LOG_LEVEL (read by the log sink), then the config.
  if (options.log_level.empty() && std::getenv("HWINFER_LOG_LEVEL") == nullptr) {
    HWINFER_ASSIGN_OR_RETURN(LogLevel level, ParseLogLevel(config.log_level));
    SetLogLevel(level);
  }
  // --plugin-path folders are searched before the config's own.
  config.plugin_paths.insert(config.plugin_paths.begin(), options.plugin_paths.begin(),
                             options.plugin_paths.end());
  return Registry::FromConfig(config);
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::optional<int64_t> ParseDecimal(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

StatusOr<std::vector<int32_t>> ParseTokenIds(const std::string& text, const std::string& flag) {
  const std::string form = "expected comma-separated token ids like 1,15043,3186";
  if (text.empty()) return InvalidArgument(flag + " is empty; " + form);
  std::vector<int32_t> ids;
  for (const std::string& item : SplitCommas(text)) {
    const std::optional<int64_t> value = ParseDecimal(item);
    if (!value || *value < 0 || *value > std::numeric_limits<int32_t>::max()) {
      const std::string what = item.empty() ? "is empty"
                                            : "('" + item +
                                                  "') is not a token id (an integer in [0, "
                                                  "2147483647])";
      return InvalidArgument(
          fmt::format("{} '{}': item {} {}; {}", flag, text, ids.size() + 1, what, form));
    }
    ids.push_back(static_cast<int32_t>(*value));
  }
  return ids;
}

std::string FormatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", bytes, units[unit]);
}

}  // namespace hwinfer::cli
