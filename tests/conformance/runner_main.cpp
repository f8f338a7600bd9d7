// runner_main.cpp — hwinfer_conformance_tests, the ctest runner: the conformance suite on every
// plugin in the plugin search path (HWINFER_PLUGIN_PATH, then the build tree's plugin folder).
// Accepts the same selection flags as `hwinfer conformance` (--plugin FILE, --backend NAME,
// --expectations FILE, --plugin-path DIR, --option KEY=VALUE: a plugin option, repeatable) and
// passes --gtest_* flags through. Only argument
// handling lives here; everything else is RunConformance's.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "conformance_runner.h"

int main(int argc, char** argv) {
  hwinfer::conformance::ConformanceOptions options;
  std::vector<char*> passed_on = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string* target = nullptr;
    std::string flag;
    for (auto [name, field] : {std::pair{"--plugin", &options.selection.plugin_file},
                               std::pair{"--backend", &options.selection.backend},
                               std::pair{"--expectations", &options.expectations_file}}) {
      if (arg == name || arg.rfind(std::string(name) + "=", 0) == 0) {
        target = field;
        flag = name;
      }
    }
    const bool is_path = arg == "--plugin-path" || arg.rfind("--plugin-path=", 0) == 0;
    const bool is_option = arg == "--option" || arg.rfind("--option=", 0) == 0;
    if (target == nullptr && !is_path && !is_option) {
      passed_on.push_back(argv[i]);
      continue;
    }
    if (is_path) flag = "--plugin-path";
    if (is_option) flag = "--option";
    std::string value;
    if (arg.size() > flag.size()) {
      value = arg.substr(flag.size() + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "conformance: error: %s needs a value\n", flag.c_str());
      return 2;
    }
    if (is_path) {
      options.selection.plugin_paths.push_back(value);
    } else if (is_option) {
      if (auto added =
              hwinfer::conformance::AddPluginOption(value, options.selection.plugin_options);
          !added.ok()) {
        std::fprintf(stderr, "conformance: error: %s\n", added.message().c_str());
        return 2;
      }
    } else {
      *target = value;
    }
  }
  int passed_argc = static_cast<int>(passed_on.size());
  passed_on.push_back(nullptr);
  return hwinfer::conformance::RunConformance(options, passed_argc, passed_on.data());
}
