// tools/cli/cli_common.h — what every `hwinfer` subcommand shares: the global options
// (--config, --plugin-path, --log-level), building the Registry from them, and reporting errors
// as one line on stderr with a non-zero exit, strict parsing of numbers and token lists. No CLI11
// here (main.cpp alone includes it; commands.h says why).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hwinfer/config.h"
#include "hwinfer/registry.h"
#include "hwinfer/status.h"

namespace hwinfer::cli {

struct GlobalOptions {
  std::string config_file;                // --config; empty = every plugin on the search path
  std::vector<std::string> plugin_paths;  // --plugin-path (searched first)
  std::string log_level;                  // --log-level; empty = config or HWINFER_LOG_LEVEL
};

// Exit codes: 0 success, 1 an error was reported; usage errors exit with CLI11's own non-zero
// codes.
constexpr int kExitError = 1;

// Prints "hwinfer: error: <status message>" to stderr and returns kExitError.
int ReportError(const Status& status);

// Prints "hwinfer: warning: <prefix><line>" to stderr for each of |lines| (UtilisationWarnings of
// the MBU/MFU figures the command printed).
void PrintWarnings(const std::vector<std::string>& lines, const std::string& prefix = "");

// Applies --log-level / the config's level / HWINFER_LOG_LEVEL, then loads the registry from the
// config file, or from every plugin on the search path when there is none.
StatusOr<Registry> BuildRegistry(const GlobalOptions& options);
// The same from a runtime config already loaded (and possibly edited, e.g. plugin options).
StatusOr<Registry> BuildRegistry(const GlobalOptions& options, RuntimeConfig config);

// "a,b,,c" -> {"a", "b", "", "c"}: every item between commas, empty ones included ("" -> {""}).
std::vector<std::string> SplitCommas(const std::string& text);

// The whole of |text| as a decimal integer (an optional leading '-'); nullopt otherwise.
std::optional<int64_t> ParseDecimal(const std::string& text);

// "1,15043,3186" -> token ids. Every item must be a decimal integer in [0, 2^31 - 1]; an empty
// text or an empty item ("1,,2", ",") is an error naming |flag|, the item and the expected form.
StatusOr<std::vector<int32_t>> ParseTokenIds(const std::string& text, const std::string& flag);

// Human-readable byte counts: "23.4 GiB" (rates: FormatBandwidth and FormatFlops in
// hwinfer/metrics.h).
std::string FormatBytes(double bytes);

// A model shape given as a YAML path or a name: ./configs/models/NAME.yaml, then the installed
// <prefix>/share/hwinfer/models/, then the source tree's configs/models/.
StatusOr<std::string> FindModelShapeFile(const std::string& model);

}  // namespace hwinfer::cli
