// conformance_runner.h — the reusable entry point of the conformance suite, shared by
// `hwinfer conformance` and the ctest runner (hwinfer_conformance_tests).
//
// RunConformance finds the backends, reads their expectations, runs every registered TEST_P
// once per backend device, prints one summary line and returns the exit code. It must not call
// exit(): the caller owns the process.
#pragma once

#include <string>

#include "conformance_backends.h"

namespace hwinfer::conformance {

struct ConformanceOptions {
  BackendSelection selection;
  // --expectations: one file applied to every backend in the run, instead of the in-tree or
  // installed <backend>.yaml.
  std::string expectations_file;
};

// Runs the suite. |argv| is a program name followed by GoogleTest flags (--gtest_filter=...,
// --gtest_output=..., --gtest_list_tests); any other argument is a usage error (exit code 2).
// Returns 0 when at least one case ran and none failed; 1 when a case failed, a plugin failed to
// load, a backend or expectations file could not be found or read, or zero cases ran (everything
// skipped, no backend, or a filter that matched nothing). The last stdout line is the summary:
//   conformance: 57 passed, 0 failed, 12 skipped (cpu:0)
// GoogleTest registers the parameterised tests once per process, so call this once per process.
int RunConformance(const ConformanceOptions& options, int argc, char** argv);

}  // namespace hwinfer::conformance
