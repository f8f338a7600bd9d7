// conformance_command.cpp — `hwinfer conformance [--backend NAME | --plugin FILE]
// [--expectations FILE] [--option KEY=VALUE ...] [--gtest_* ...]`: runs the conformance suite
// (tests/conformance) on the chosen backends and exits non-zero on any failure or when zero cases
// ran. Only maps the command line onto RunConformance; the suite itself lives in the
// hwinfer_conformance library.
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "conformance_runner.h"
#include "hwinfer/log.h"

namespace hwinfer::cli {
int RunConformanceCommand(const GlobalOptions& global, const ConformanceCommandOptions& options,
                          const std::vector<std::string>& gtest_args) {
  if (!global.log_level.empty()) {
    auto level = ParseLogLevel(global.log_level);
    if (!level.ok()) return ReportError(level.status());
    SetLogLevel(*level);
  }
  conformance::ConformanceOptions run;
  run.selection.plugin_file = options.plugin;
  run.selection.backend = options.backend;
  run.selection.config_file = global.config_file;
  run.selection.plugin_paths = global.plugin_paths;
  run.expectations_file = options.expectations;
  for (const std::string& option : options.plugin_options) {
    if (Status added = conformance::AddPluginOption(option, run.selection.plugin_options);
        !added.ok()) {
      return ReportError(added);
    }
  }

  std::vector<std::string> storage = {"hwinfer conformance"};
  storage.insert(storage.end(), gtest_args.begin(), gtest_args.end());
  std::vector<char*> argv;
  argv.reserve(storage.size() + 1);
  for (std::string& arg : storage) argv.push_back(arg.data());
  const int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);
  return conformance::RunConformance(run, argc, argv.data());
}

}  // namespace hwinfer::cli
