// conformance_expectations.h — what a backend declares it cannot do (unsupported) and what it is
// known to get wrong (expected failures), each as {glob pattern over "Suite.Test", reason}.
//
// Read from tests/conformance/expectations/<backend>.yaml (in-tree), from the installed copy in
// share/hwinfer/conformance/, or from a vendor's --expectations FILE:
//
//   unsupported:                      # optional list; matching tests are skipped with the reason
//     - pattern: "StreamEventTest.*"
//       reason: "no device timestamps"
//   expected_failures:                # optional list; matching tests run, must fail, and pass
//     - pattern: "GemmTest.PaddedLeadingDimensions"
//       reason: "issue #12: ignores row strides"
//
// This file only parses and matches; it must not decide what a match does to a test.
#pragma once

#include <string>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer::conformance {

struct Expectation {
  std::string pattern;  // glob over "Suite.Test": '*' any run of characters, '?' one character
  std::string reason;
};

struct Expectations {
  std::string source;  // the file they came from; "" when the backend has none
  std::vector<Expectation> unsupported;
  std::vector<Expectation> expected_failures;
};

// True when |text| matches the glob |pattern| ('*' and '?'; everything else literal).
bool GlobMatch(const std::string& pattern, const std::string& text);

// The first entry of |list| whose pattern matches |test_name| ("Suite.Test"), or nullptr.
const Expectation* FindExpectation(const std::vector<Expectation>& list,
                                   const std::string& test_name);

// Parses an expectations file. Strict: unknown keys, missing or empty pattern/reason and wrong
// types are InvalidArgument naming file:line:column; a missing file is NotFound.
StatusOr<Expectations> LoadExpectations(const std::string& path);
StatusOr<Expectations> ParseExpectations(const std::string& yaml_text,
                                         const std::string& display_name);

// The expectations file for backend |backend_name|: the installed copy beside the default plugin
// folder first, then the source tree's. "" when neither exists (the backend declares nothing).
std::string FindExpectationsFile(const std::string& backend_name);

}  // namespace hwinfer::conformance
