// conformance_fixture.h — the base fixture every conformance TEST_P derives from, and the small
// host-side helpers the tests share (status assertions, poisoned/random bytes, upload/download,
// byte comparisons that report the first difference, the reproducible random seed).
//
// The fixture applies the backend's declarations before each test: no device -> skip with the
// reason; unsupported -> skip with the reason; expected failure -> the test runs with its
// failures captured, passes with a note when it fails, and fails when it unexpectedly passes.
// It must not relax any check for a particular backend: that is what the expectation files are for.
#pragma once

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "conformance_backends.h"
#include "hwinfer/device.h"
#include "hwinfer/status.h"

// Status assertions: the failure message carries the expression and the full status.
#define ASSERT_OK(expr)                                            \
  do {                                                             \
    const ::hwinfer::Status conformance_status_ = (expr);          \
    ASSERT_TRUE(conformance_status_.ok())                          \
        << #expr << " failed: " << conformance_status_.ToString(); \
  } while (0)
#define EXPECT_OK(expr)                                            \
  do {                                                             \
    const ::hwinfer::Status conformance_status_ = (expr);          \
    EXPECT_TRUE(conformance_status_.ok())                          \
        << #expr << " failed: " << conformance_status_.ToString(); \
  } while (0)
// `ASSERT_OK_AND_ASSIGN(Buffer b, device().Allocate(64));`
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  CONFORMANCE_ASSIGN_IMPL_(HWINFER_CONCAT_(conformance_statusor_, __LINE__), lhs, expr)
#define CONFORMANCE_ASSIGN_IMPL_(tmp, lhs, expr)                            \
  auto tmp = (expr);                                                        \
  ASSERT_TRUE(tmp.ok()) << #expr << " failed: " << tmp.status().ToString(); \
  lhs = std::move(tmp).value()

namespace hwinfer::conformance {

class ConformanceTest : public testing::TestWithParam<BackendParam> {
 protected:
  void SetUp() override;
  void TearDown() override;

  ConformanceBackend& backend() const;
  Device& device() const { return *device_; }
  const std::shared_ptr<Device>& shared_device() const { return device_; }
  const DeviceInfo& info() const { return device_->info(); }
  // A stream created for this test (the device itself is shared by every test of the backend).
  Stream& stream() { return stream_; }

 private:
  std::shared_ptr<Device> device_;
  Stream stream_;
  const Expectation* expected_failure_ = nullptr;
  std::unique_ptr<testing::TestPartResultArray> captured_;
  std::unique_ptr<testing::ScopedFakeTestPartResultReporter> capture_;
};

// Synchronizes |stream| when it goes out of scope. Declared after the host memory and buffers
// that queued work uses, it keeps an ASSERT that returns early from freeing them under that work.
class SyncOnExit {
 public:
  explicit SyncOnExit(Stream& stream) : stream_(stream) {}
  SyncOnExit(const SyncOnExit&) = delete;
  SyncOnExit& operator=(const SyncOnExit&) = delete;
  ~SyncOnExit() { (void)stream_.Synchronize(); }

 private:
  Stream& stream_;
};

// True when |device| says it can run |desc|. When it answers UNSUPPORTED this records a skip
// carrying the plugin's reason; when the query itself fails it records a failure. Either way it
// returns false and the test should return.
bool RequireKernel(const Device& device, const hwinfer_kernel_desc& desc);

// "Suite.Test" ("BufferTest.AllocateMapFree") of |test| / of the running test: without the
// instantiation prefix and the backend suffix; what expectation patterns match.
std::string ShortTestName(const testing::TestInfo& test);
std::string CurrentTestName();

// The seed for this test's random inputs: HWINFER_CONFORMANCE_SEED when set (to reproduce a
// failure), otherwise fresh from std::random_device. Tests put it in a SCOPED_TRACE.
uint64_t TestSeed();

constexpr uint8_t kPoisonByte = 0xA5;

// |n| random bytes that never equal kPoisonByte, so a stray write of data over a guard band is
// always visible.
std::vector<uint8_t> RandomBytes(size_t n, std::mt19937_64& rng);

// Blocking helpers: enqueue on |stream| and synchronize.
Status Upload(Stream& stream, const Buffer& buffer, const std::vector<uint8_t>& bytes,
              uint64_t offset = 0);
StatusOr<std::vector<uint8_t>> Download(Stream& stream, const Buffer& buffer);
// A buffer of |size| bytes of |kind| filled with |fill|.
StatusOr<Buffer> FilledBuffer(Device& device, Stream& stream, uint64_t size, uint8_t fill,
                              MemoryKind kind = MemoryKind::kDevice);

// Success when actual[0, n) == expected[0, n); otherwise names |what|, the first differing offset,
// both bytes there, and how many bytes differ.
testing::AssertionResult BytesEqual(const uint8_t* actual, const uint8_t* expected, size_t n,
                                    const std::string& what);
// Success when every byte of [p, p + n) is |value| (a guard band left untouched).
testing::AssertionResult BytesAre(const uint8_t* p, size_t n, uint8_t value,
                                  const std::string& what);

}  // namespace hwinfer::conformance
