// conformance_runner.cpp — RunConformance: discovery -> expectations -> the global parameter list
// -> InitGoogleTest -> RUN_ALL_TESTS, with a listener that counts what really ran, so a run in
// which nothing was checked fails instead of passing. Must not call exit() or abort().
#include "conformance_runner.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "conformance_fixture.h"

namespace hwinfer::conformance {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int Error(const std::string& message) {
  std::fprintf(stderr, "conformance: error: %s\n", message.c_str());
  return kExitFailure;
}

// Counts finished tests: skipped, failed, passed (and, of those, expected failures).
class CountingListener : public testing::EmptyTestEventListener {
 public:
  int passed = 0, failed = 0, skipped = 0, expected_failures = 0;

  void OnTestEnd(const testing::TestInfo& test) override {
    const testing::TestResult& result = *test.result();
    if (result.Failed()) {
      ++failed;
    } else if (result.Skipped()) {
      ++skipped;
    } else {
      ++passed;
      for (int i = 0; i < result.test_property_count(); ++i) {
        if (std::string(result.GetTestProperty(i).key()) == "expected_failure") {
          ++expected_failures;
          break;
        }
      }
    }
  }
};

Status AssignExpectations(const ConformanceOptions& options,
                          std::vector<ConformanceBackend>& backends) {
  if (!options.expectations_file.empty()) {
    HWINFER_ASSIGN_OR_RETURN(Expectations shared, LoadExpectations(options.expectations_file));
    for (ConformanceBackend& backend : backends) backend.expectations = shared;
    return Status::Ok();
  }
  std::map<std::string, Expectations> by_name;  // one read per backend, not per device
  for (ConformanceBackend& backend : backends) {
    auto it = by_name.find(backend.name);
    if (it == by_name.end()) {
      Expectations loaded;
      if (const std::string file = FindExpectationsFile(backend.name); !file.empty()) {
        HWINFER_ASSIGN_OR_RETURN(loaded, LoadExpectations(file));
      }
      it = by_name.emplace(backend.name, std::move(loaded)).first;
    }
    backend.expectations = it->second;
  }
  return Status::Ok();
}

void PrintBackends(const std::vector<ConformanceBackend>& backends) {
  for (const ConformanceBackend& backend : backends) {
    std::string device;
    if (backend.has_device()) {
      auto info = backend.plugin->GetDeviceInfo(backend.ordinal);
      device = info.ok() ? " '" + info->name + "'" : "";
      if (!backend.simulated_reason.empty()) device += " skipped: " + backend.simulated_reason;
    } else {
      device = " skipped: " + backend.no_device_reason;
    }
    const std::string expectations = backend.expectations.source.empty()
                                         ? "no expectations file"
                                         : "expectations " + backend.expectations.source;
    std::printf("conformance: %s%s (%s; %s)\n", backend.label().c_str(), device.c_str(),
                backend.plugin_path.c_str(), expectations.c_str());
  }
  std::fflush(stdout);
}

// Warns about expectation patterns that match no registered test (stale or misspelt entries).
void WarnAboutUnmatchedPatterns(const std::vector<ConformanceBackend>& backends) {
  std::vector<std::string> names;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      names.push_back(ShortTestName(*suite.GetTestInfo(t)));
    }
  }
  std::map<std::string, bool> warned;
  for (const ConformanceBackend& backend : backends) {
    for (const auto* list :
         {&backend.expectations.unsupported, &backend.expectations.expected_failures}) {
      for (const Expectation& expectation : *list) {
        bool matched = false;
        for (const std::string& name : names)
          matched = matched || GlobMatch(expectation.pattern, name);
        const std::string key = backend.expectations.source + "\n" + expectation.pattern;
        if (!matched && !warned[key]) {
          warned[key] = true;
          std::fprintf(stderr, "conformance: warning: %s: pattern \"%s\" matches no test\n",
                       backend.expectations.source.c_str(), expectation.pattern.c_str());
        }
      }
    }
  }
}

std::string BackendList(const std::vector<ConformanceBackend>& backends) {
  std::string out;
  for (const ConformanceBackend& backend : backends) {
    out += (out.empty() ? "" : ", ") + backend.label();
  }
  return out.empty() ? "no backend" : out;
}

std::string WhyNothingRan(const ConformanceOptions& options,
                          const std::vector<ConformanceBackend>& backends, int skipped) {
  if (backends.empty()) {
    std::string searched;
    for (const std::string& dir : PluginSearchPaths(options.selection.plugin_paths)) {
      searched += (searched.empty() ? "" : ", ") + dir;
    }
    return "no backend plugin (hwinfer-*.so) was found in " + searched +
           "; pass --plugin FILE, --plugin-path DIR or set HWINFER_PLUGIN_PATH";
  }
  if (skipped > 0) {
    return "all " + std::to_string(skipped) +
           " cases were skipped (no device, unsupported, or kernels the backend does not claim); "
           "a backend that can run nothing has not shown conformance";
  }
  return "no test matched the --gtest_filter";
}

}  // namespace

int RunConformance(const ConformanceOptions& options, int argc, char** argv) {
  auto discovery = DiscoverBackends(options.selection);
  if (!discovery.ok()) return Error(discovery.status().message());
  std::vector<ConformanceBackend> backends = std::move(discovery->backends);
  if (Status assigned = AssignExpectations(options, backends); !assigned.ok()) {
    return Error(assigned.message());
  }
  SetBackends(std::move(backends));
  const std::vector<ConformanceBackend>& listed = Backends();

  // The TEST_P generators read BackendParams() here, so the list must be complete by now.
  testing::InitGoogleTest(&argc, argv);
  if (argc > 1) {
    std::string unknown;
    for (int i = 1; i < argc; ++i) unknown += std::string(i > 1 ? " " : "") + argv[i];
    std::fprintf(stderr,
                 "conformance: error: unknown argument(s): %s (only --gtest_* flags pass through "
                 "to GoogleTest)\n",
                 unknown.c_str());
    ClearBackends();
    return kExitUsage;
  }
  if (GTEST_FLAG_GET(list_tests)) {
    const int listed_rc = RUN_ALL_TESTS();
    ClearBackends();
    return listed_rc;
  }
  PrintBackends(listed);
  WarnAboutUnmatchedPatterns(listed);

  auto* counter = new CountingListener();
  testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
  listeners.Append(counter);  // owned by GoogleTest until released below
  const int gtest_rc = RUN_ALL_TESTS();
  listeners.Release(counter);
  const CountingListener counts = *counter;
  delete counter;

  const std::string backend_list = BackendList(listed);
  bool failed = gtest_rc != 0 || counts.failed > 0;
  for (const Status& load_error : discovery->load_errors) {
    std::fprintf(stderr, "conformance: error: a plugin failed to load: %s\n",
                 load_error.message().c_str());
    failed = true;
  }
  // Simulated devices have no numerics to check: a run of only those skips without failing.
  bool only_simulated = !listed.empty();
  for (const ConformanceBackend& backend : listed) {
    only_simulated = only_simulated && !backend.simulated_reason.empty();
  }
  if (counts.passed + counts.failed == 0 && counts.skipped > 0 && only_simulated) {
    std::printf("conformance: every device is simulated (timing model only); nothing to check\n");
  } else if (counts.passed + counts.failed == 0) {
    std::fprintf(stderr, "conformance: FAILED: zero test cases ran: %s\n",
                 WhyNothingRan(options, listed, counts.skipped).c_str());
    failed = true;
  }
  ClearBackends();

  if (counts.expected_failures > 0) {
    std::printf("conformance: %d of the passed cases are declared expected failures\n",
                counts.expected_failures);
  }
  std::printf("conformance: %d passed, %d failed, %d skipped (%s)\n", counts.passed, counts.failed,
              counts.skipped, backend_list.c_str());
  std::fflush(stdout);
  return failed ? kExitFailure : 0;
}

}  // namespace hwinfer::conformance
