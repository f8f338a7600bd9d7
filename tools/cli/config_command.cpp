// config_command.cpp — `hwinfer config check FILE`: validates a config the way every command
// will use it, with the same errors: the runtime section (YAML schema with file:line:column
// errors; the backends' plugins load; every device selector matches a device), then every bench
// section `bench` and `sweep` read (model, workload, scheduler, metrics, output; the model file
// opens, the workload file parses within its bounds, a named device exists). Prints the devices.
#include <fmt/format.h>

#include "bench_run.h"
#include "commands.h"
#include "hwinfer/bench_config.h"
#include "hwinfer/text_escape.h"

namespace hwinfer::cli {
int RunConfigCheck(const GlobalOptions& global, const std::string& file) {
  GlobalOptions with_file = global;
  with_file.config_file = file;
  auto registry = BuildRegistry(with_file);
  if (!registry.ok()) return ReportError(registry.status());
  auto bench = LoadBenchConfig(file);
  if (!bench.ok()) return ReportError(bench.status());
  auto model = CheckBenchSections(*bench, *registry);
  if (!model.ok()) return ReportError(model.status());
  fmt::print("{}: OK — {} backend(s), {} device(s); {}\n", file, registry->plugins().size(),
             registry->devices().size(), EscapeControlCharacters(*model));
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

}  // namespace hwinfer::cli
