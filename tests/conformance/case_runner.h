// case_runner.h — the loops the kernel suites share:
//  - RunCases: run a list of cases with inputs from one reproducible seed, collect the reasons of
//    the cases the device answers UNSUPPORTED for, and skip the test (with those reasons) when no
//    case ran at all;
//  - UploadAll / DownloadAll: set up a case's operands (one buffer per host image) and read them
//    all back, reporting the first failure;
//  - QueryAndLaunch: kernel_query a case's descriptor, then launch and synchronize it;
//  - ExpectRejected / ExpectVariantsRejected: a malformed descriptor (a valid one with one field
//    mutated) must not be answered SUPPORTED by kernel_query and must fail at enqueue.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "conformance_fixture.h"
#include "hwinfer/device.h"
#include "hwinfer/status.h"
#include "row_matrix.h"

namespace hwinfer::conformance {

// What running one case came to.
enum class CaseResult {
  kRan,          // it ran (its checks recorded their own failures)
  kUnsupported,  // kernel_query answered UNSUPPORTED; the reason says why
  kStop,         // a setup or query failure, already reported: run no further cases
};

// Runs |run_case(c, rng, reason)| for every case in order, all drawing from one std::mt19937_64
// seeded with TestSeed() (the seed is in a SCOPED_TRACE while the cases run). Cases that come back
// kUnsupported are listed in a note, or skip the test when that is all of them; |what| names the
// cases in those messages ("rms_norm cases").
template <typename Case, typename RunCase>
void RunCases(const Device& device, const std::vector<Case>& cases, const char* what,
              RunCase&& run_case) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(testing::Message() << "seed " << seed << " (HWINFER_CONFORMANCE_SEED=" << seed
                                  << " repeats these inputs)");
  std::mt19937_64 rng(seed);
  int ran = 0;
  int unsupported_count = 0;
  std::string unsupported;
  for (const Case& c : cases) {
    std::string reason;
    switch (run_case(c, rng, reason)) {
      case CaseResult::kRan:
        ++ran;
        break;
      case CaseResult::kUnsupported:
        ++unsupported_count;
        unsupported += (unsupported.empty() ? "" : "; ") + reason;
        break;
      case CaseResult::kStop:
        return;
    }
  }
  if (ran == 0) {
    [&] {
      GTEST_SKIP() << device.id() << " does not support these " << what << ": " << unsupported;
    }();
  } else if (unsupported_count > 0) {
    testing::Test::RecordProperty("unsupported_cases", unsupported);
    std::printf("    note: %d of %zu %s unsupported: %s\n", unsupported_count, cases.size(), what,
                unsupported.c_str());
  }
}

// Uploads each image into a buffer of its own (UploadImage) and stores it in the paired Buffer.
// On the first failure reports "setting up the operands: <status>" and returns false.
inline bool UploadAll(
    Device& device, Stream& stream,
    std::initializer_list<std::pair<Buffer*, const std::vector<uint8_t>*>> operands) {
  for (const auto& [buffer, image] : operands) {
    StatusOr<Buffer> uploaded = UploadImage(device, stream, *image);
    if (!uploaded.ok()) {
      ADD_FAILURE() << "setting up the operands: " << uploaded.status().ToString();
      return false;
    }
    *buffer = std::move(uploaded).value();
  }
  return true;
}

// Reads each buffer back into the paired byte vector. On the first failure reports "reading the
// operands back: <status>" and returns false.
inline bool DownloadAll(
    Stream& stream,
    std::initializer_list<std::pair<std::vector<uint8_t>*, const Buffer*>> operands) {
  for (const auto& [bytes, buffer] : operands) {
    StatusOr<std::vector<uint8_t>> downloaded = Download(stream, *buffer);
    if (!downloaded.ok()) {
      ADD_FAILURE() << "reading the operands back: " << downloaded.status().ToString();
      return false;
    }
    *bytes = std::move(downloaded).value();
  }
  return true;
}

// kernel_query for |desc| and, when SUPPORTED, Launch and Synchronize. Empty when it ran (check
// the results); otherwise what the case came to: kUnsupported with |reason| set to "<describe>:
// <plugin's reason>", or kRan when the query or the run failed (reported, naming |kernel|; a
// failed case counts as run).
inline std::optional<CaseResult> QueryAndLaunch(const Device& device, Stream& stream,
                                                const hwinfer_kernel_desc& desc, const char* kernel,
                                                const std::string& describe, std::string& reason) {
  auto support = device.QueryKernel(desc);
  if (!support.ok()) {
    ADD_FAILURE() << "kernel_query(" << kernel << ") failed: " << support.status().ToString();
    return CaseResult::kRan;
  }
  if (!support->supported) {
    reason = describe + ": " + support->reason;
    return CaseResult::kUnsupported;
  }
  Status launched = stream.Launch(desc);
  if (launched.ok()) launched = stream.Synchronize();
  if (!launched.ok()) {
    ADD_FAILURE() << "kernel_query said SUPPORTED but running " << kernel
                  << " failed: " << launched.ToString();
    return CaseResult::kRan;
  }
  return std::nullopt;
}

// What kernel_query must answer for a malformed descriptor.
enum class QueryCheck {
  kNotChecked,    // only enqueue is checked (the flaw is in the buffers, not the shape or dtype)
  kNotSupported,  // anything but SUPPORTED: an error or UNSUPPORTED
  kUnsupported,   // UNSUPPORTED (supported = 0), not an error: well-formed, but not runnable
};

// Expects |desc| to be refused: by kernel_query as |query| says, and by Launch at enqueue, where
// |accepted_message| is the failure when Launch takes it ("a malformed gemm was accepted at
// enqueue"). The caller puts the variant in a SCOPED_TRACE.
inline void ExpectRejected(const Device& device, Stream& stream, const hwinfer_kernel_desc& desc,
                           QueryCheck query, const std::string& accepted_message) {
  if (query != QueryCheck::kNotChecked) {
    auto support = device.QueryKernel(desc);
    EXPECT_FALSE(support.ok() && support->supported)
        << "kernel_query answered SUPPORTED for a malformed descriptor";
    if (query == QueryCheck::kUnsupported) {
      EXPECT_TRUE(support.ok()) << "a well-formed descriptor the backend cannot run is "
                                   "UNSUPPORTED (supported = 0), not an error: "
                                << support.status().ToString();
    }
  }
  Status launched = stream.Launch(desc);
  EXPECT_FALSE(launched.ok()) << accepted_message;
  if (launched.ok()) {
    Status synced = stream.Synchronize();
    ADD_FAILURE() << "... and the next synchronize returned " << synced.ToString();
  }
}

// ExpectRejected for each of |variants| (each with `what`, `bool shape_or_dtype` — kernel_query
// must not answer SUPPORTED either — and `void (*mutate)(Desc&)`) applied to a copy of |valid|.
template <typename Desc, typename Variant, size_t N>
void ExpectVariantsRejected(const Device& device, Stream& stream, const Desc& valid,
                            const Variant (&variants)[N], const std::string& accepted_message) {
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.what);
    Desc desc = valid;
    variant.mutate(desc);
    ExpectRejected(device, stream, AsKernelDesc(desc),
                   variant.shape_or_dtype ? QueryCheck::kNotSupported : QueryCheck::kNotChecked,
                   accepted_message);
  }
}

}  // namespace hwinfer::conformance
