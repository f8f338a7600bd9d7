// conformance_command.cpp — `hwinfer conformance [--backend NAME | --plugin FILE]
// [--expectations FILE] [--option KEY=VALUE ...] [--gtest_* ...]`: runs the conformance suite
// (tests/conformance) on the chosen backends and exits non-zero on any failure or when zero cases
// ran. Only maps the command line onto RunConformance; the suite itself lives in the
// hwinfer_conformance library.
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "conformance_runner.h"
#include "hwinfer/log.h"

namespace hwinfer::cli {
namespace {

struct ConformanceCommandOptions {
  std::string backend;
  std::string plugin;
  std::string expectations;
  std::vector<std::string> plugin_options;  // --option KEY=VALUE
};

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

}  // namespace

void AddConformanceCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<ConformanceCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "conformance",
      "Run the backend conformance suite (GoogleTest; --gtest_filter=..., --gtest_output=..., "
      "--gtest_list_tests pass through). Exits non-zero on any failure or when zero cases ran.");
  CLI::Option* backend = command->add_option(
      "--backend", options->backend,
      "Test only this backend (found on the plugin search path or in --config)");
  CLI::Option* plugin = command->add_option("--plugin", options->plugin,
                                            "Test exactly this plugin file (any file name)");
  plugin->excludes(backend);
  command->add_option("--expectations", options->expectations,
                      "Unsupported / expected-failure declarations (YAML) for the backend(s) "
                      "under test, instead of the in-tree or installed <backend>.yaml");
  command
      ->add_option("--option", options->plugin_options,
                   "A plugin option KEY=VALUE passed to every plugin's plugin_init (repeatable; "
                   "e.g. --option gemm=builtin for the GPU plugins)")
      ->allow_extra_args(false);
  command->allow_extras();
  command->callback([&global, &exit_code, options, command] {
    exit_code = RunConformanceCommand(global, *options, command->remaining());
  });
}

}  // namespace hwinfer::cli
