// tools/cli/main.cpp — the `hwinfer` command line: global options and subcommand dispatch.
// Each subcommand lives in its own file (devices, probe, plugin check, config check,
// conformance, kv-size, model synth, generate, bench-model, bench, sweep, compare); this file
// only wires them together.
#include <CLI/CLI.hpp>

#include "cli_common.h"

int main(int argc, char** argv) {
  using namespace hwinfer::cli;
  CLI::App app{"hwinfer — LLM inference runtime for heterogeneous hardware"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("hwinfer ") + HWINFER_CLI_VERSION);
  GlobalOptions global;
  app.add_option("--config", global.config_file, "Runtime config YAML (backends and devices)")
      ->check(CLI::ExistingFile);
  app.add_option("--plugin-path", global.plugin_paths, "Extra folder to search for plugins first");
  app.add_option("--log-level", global.log_level, "debug | info | warning | error");

  int exit_code = 0;
  AddDevicesCommand(app, global, exit_code);
  AddProbeCommand(app, global, exit_code);
  AddPluginCommand(app, global, exit_code);
  AddConfigCommand(app, global, exit_code);
  AddConformanceCommand(app, global, exit_code);
  AddKvSizeCommand(app, exit_code);
  AddModelCommand(app, exit_code);
  AddGenerateCommand(app, global, exit_code);
  AddBenchModelCommand(app, global, exit_code);
  AddBenchCommand(app, global, exit_code);
  AddSweepCommand(app, global, exit_code);
  AddCompareCommand(app, exit_code);

  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
