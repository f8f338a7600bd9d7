// cli_common.cpp — shared pieces of the `hwinfer` subcommands: registry construction from the
// global options, one-line error reporting, and number formatting. No subcommand logic here.
#include "cli_common.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "hwinfer/log.h"

namespace hwinfer::cli {

int ReportError(const Status& status) {
  std::fprintf(stderr, "hwinfer: error: %s\n", status.message().c_str());
  return kExitError;
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

std::string FormatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", bytes, units[unit]);
}

std::string FormatBandwidth(double bytes_per_s) {
  if (bytes_per_s <= 0) return "unknown";
  return fmt::format("{:.1f} GB/s", bytes_per_s / 1e9);
}

std::string FormatFlops(double flops_per_s) {
  if (flops_per_s <= 0) return "unknown";
  if (flops_per_s >= 1e12) return fmt::format("{:.2f} TFLOP/s", flops_per_s / 1e12);
  return fmt::format("{:.1f} GFLOP/s", flops_per_s / 1e9);
}

}  // namespace hwinfer::cli
