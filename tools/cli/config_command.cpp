// config_command.cpp — `hwinfer config check FILE`: validates a runtime config the way every
// command will use it: YAML schema (file:line:column errors), then the backends' plugins load and
// every device selector matches a device. Prints the resulting device list.
#include <fmt/format.h>

#include "cli_common.h"

namespace hwinfer::cli {
namespace {

int RunConfigCheck(const GlobalOptions& global, const std::string& file) {
  GlobalOptions with_file = global;
  with_file.config_file = file;
  auto registry = BuildRegistry(with_file);
  if (!registry.ok()) return ReportError(registry.status());
  fmt::print("{}: OK — {} backend(s), {} device(s)\n", file, registry->plugins().size(),
             registry->devices().size());
  for (const RegisteredDevice& device : registry->devices()) {
    fmt::print("  {:<10} priority {:<4} {}{}\n", device.id(), device.priority, device.info.name,
               device.info.spec_source.empty() ? "" : "  [spec: " + device.info.spec_source + "]");
  }
  for (const HiddenDuplicate& hidden : registry->hidden_duplicates()) {
    fmt::print("  {:<10} hidden: same device as {} (set allow_duplicate_devices: true to keep)\n",
               hidden.id, hidden.shown_as);
  }
  return 0;
}

}  // namespace

void AddConfigCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  CLI::App* config = app.add_subcommand("config", "Work with config files");
  config->require_subcommand(1);
  auto file = std::make_shared<std::string>();
  CLI::App* check = config->add_subcommand("check", "Validate a config file");
  check->add_option("file", *file, "Config YAML")->required();
  check->callback([&global, &exit_code, file] { exit_code = RunConfigCheck(global, *file); });
}

}  // namespace hwinfer::cli
