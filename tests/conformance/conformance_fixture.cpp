// conformance_fixture.cpp — per-test application of a backend's declarations (no device,
// unsupported, expected failure) and the shared host-side helpers. Must not know any particular
// backend or test.
#include "conformance_fixture.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace hwinfer::conformance {

ConformanceBackend& ConformanceTest::backend() const { return Backends().at(GetParam().index); }

void ConformanceTest::SetUp() {
  ConformanceBackend& under_test = backend();
  const std::string name = CurrentTestName();
  if (!under_test.has_device()) GTEST_SKIP() << under_test.no_device_reason;
  if (!under_test.simulated_reason.empty()) {
    GTEST_SKIP() << under_test.label() << ": " << under_test.simulated_reason;
  }
  if (const Expectation* unsupported = FindExpectation(under_test.expectations.unsupported, name)) {
    GTEST_SKIP() << "unsupported on " << under_test.name << " (" << under_test.expectations.source
                 << ", pattern \"" << unsupported->pattern << "\"): " << unsupported->reason;
  }
  auto device = OpenBackendDevice(GetParam().index);
  ASSERT_TRUE(device.ok()) << "cannot open " << under_test.label() << " from "
                           << under_test.plugin_path << ": " << device.status().ToString();
  device_ = *device;
  auto stream = device_->CreateStream();
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  stream_ = std::move(stream).value();

  expected_failure_ = FindExpectation(under_test.expectations.expected_failures, name);
  if (expected_failure_ != nullptr) {
    captured_ = std::make_unique<testing::TestPartResultArray>();
    capture_ = std::make_unique<testing::ScopedFakeTestPartResultReporter>(
        testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, captured_.get());
  }
}

void ConformanceTest::TearDown() {
  if (capture_ == nullptr) return;
  capture_.reset();  // from here on results reach GoogleTest again
  int failures = 0;
  std::string first_failure;
  std::string skip_message;
  bool skipped = false;
  for (int i = 0; i < captured_->size(); ++i) {
    const testing::TestPartResult& result = captured_->GetTestPartResult(i);
    if (result.failed()) {
      if (failures++ == 0) {
        std::string summary = result.summary();
        for (char& c : summary) c = c == '\n' ? ' ' : c;
        if (summary.size() > 400) summary = summary.substr(0, 400) + "...";
        first_failure = fmt::format("{}:{}: {}", result.file_name() ? result.file_name() : "?",
                                    result.line_number(), summary);
      }
    } else if (result.skipped()) {
      skipped = true;
      skip_message = result.message();
    }
  }
  const ConformanceBackend& under_test = backend();
  if (failures > 0) {
    RecordProperty("expected_failure", expected_failure_->reason);
    std::printf("    expected failure: %s (%d failure%s captured; first: %s)\n",
                expected_failure_->reason.c_str(), failures, failures == 1 ? "" : "s",
                first_failure.c_str());
    std::fflush(stdout);
    return;
  }
  if (skipped) {
    [&] { GTEST_SKIP() << skip_message; }();
    return;
  }
  ADD_FAILURE() << CurrentTestName() << " is declared an expected failure on " << under_test.name
                << " (" << expected_failure_->reason << ") but it passed: remove the "
                << "expected_failures entry \"" << expected_failure_->pattern << "\" from "
                << under_test.expectations.source;
}

bool RequireKernel(const Device& device, const hwinfer_kernel_desc& desc) {
  auto support = device.QueryKernel(desc);
  if (!support.ok()) {
    ADD_FAILURE() << "kernel_query(" << KernelKindName(desc.kind)
                  << ") failed: " << support.status().ToString();
    return false;
  }
  if (!support->supported) {
    [&] {
      GTEST_SKIP() << device.id() << " does not support this " << KernelKindName(desc.kind) << ": "
                   << (support->reason.empty() ? "(no reason given)" : support->reason);
    }();
    return false;
  }
  return true;
}

std::string CurrentTestName() {
  const testing::TestInfo* test = testing::UnitTest::GetInstance()->current_test_info();
  return test == nullptr ? "" : ShortTestName(*test);
}

std::string ShortTestName(const testing::TestInfo& test) {
  std::string suite = test.test_suite_name();  // "Buffers/BufferTest"
  std::string name = test.name();              // "AllocateMapFree/cpu_0"
  if (size_t slash = suite.find('/'); slash != std::string::npos) suite = suite.substr(slash + 1);
  if (size_t slash = name.find('/'); slash != std::string::npos) name = name.substr(0, slash);
  return suite + "." + name;
}

uint64_t TestSeed() {
  if (const char* fixed = std::getenv("HWINFER_CONFORMANCE_SEED"); fixed != nullptr && *fixed) {
    return std::strtoull(fixed, nullptr, 0);
  }
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

std::vector<uint8_t> RandomBytes(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t word = rng();
    for (size_t j = i; j < n && j < i + 8; ++j, word >>= 8) {
      const auto byte = static_cast<uint8_t>(word & 0xff);
      bytes[j] = byte == kPoisonByte ? static_cast<uint8_t>(~kPoisonByte) : byte;
    }
  }
  return bytes;
}

Status Upload(Stream& stream, const Buffer& buffer, const std::vector<uint8_t>& bytes,
              uint64_t offset) {
  HWINFER_RETURN_IF_ERROR(stream.CopyH2D(bytes.data(), buffer, offset, bytes.size()));
  return stream.Synchronize();
}

StatusOr<std::vector<uint8_t>> Download(Stream& stream, const Buffer& buffer) {
  std::vector<uint8_t> bytes(buffer.size_bytes());
  HWINFER_RETURN_IF_ERROR(stream.CopyD2H(buffer, 0, bytes.data(), bytes.size()));
  HWINFER_RETURN_IF_ERROR(stream.Synchronize());
  return bytes;
}

StatusOr<Buffer> FilledBuffer(Device& device, Stream& stream, uint64_t size, uint8_t fill,
                              MemoryKind kind) {
  HWINFER_ASSIGN_OR_RETURN(Buffer buffer, device.Allocate(size, kind));
  HWINFER_RETURN_IF_ERROR(Upload(stream, buffer, std::vector<uint8_t>(size, fill)));
  return buffer;
}

testing::AssertionResult BytesEqual(const uint8_t* actual, const uint8_t* expected, size_t n,
                                    const std::string& what) {
  size_t differing = 0;
  size_t first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (actual[i] != expected[i] && differing++ == 0) first = i;
  }
  if (differing == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << what << ": " << differing << " of " << n << " bytes differ; first at +" << first
         << ": got 0x" << fmt::format("{:02x}", actual[first]) << ", expected 0x"
         << fmt::format("{:02x}", expected[first]);
}

testing::AssertionResult BytesAre(const uint8_t* p, size_t n, uint8_t value,
                                  const std::string& what) {
  const std::vector<uint8_t> expected(n, value);
  return BytesEqual(p, expected.data(), n, what);
}

}  // namespace hwinfer::conformance
