// kernel_slots_test.cpp — the plugin kit's kernel slots (sdk/include/hwinfer/kit/kernel_slots.h) on
// a fake backend with its own handle structs (so this is its own executable: no other plugin's
// structs in it): the table has a slot exactly for each enqueue overload, and every slot checks
// NULLs and the descriptor before enqueue runs, and turns exceptions into errors.
#include "hwinfer/kit/kernel_slots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "hwinfer/kit/kernel_query.h"
#include "hwinfer/kit/kernel_samples.h"
#include "kit_test_support.h"

struct hwinfer_device {
  int unused = 0;
};
struct hwinfer_buffer {
  hwinfer_device* device = nullptr;
  uint64_t size_bytes = 0;
};
struct hwinfer_stream {
  hwinfer_device* device = nullptr;
};

namespace hwinfer::kit {
namespace {

using ::testing::HasSubstr;

enum class Behaviour { kOk, kThrowRuntime, kThrowBadAlloc, kReturnError };

struct FakeBackend {
  static constexpr const char* kName = "fake";
  static inline int probe_calls = 0;
  static inline uint64_t probe_size = 0;
  static inline Behaviour behaviour = Behaviour::kOk;

  static backend::CheckContext check_context(const hwinfer_device& device, bool require_buffers) {
    static const backend::BufferInfoFn kBuffers = {
        [](const hwinfer_buffer* b) { return b->size_bytes; },
        [](const hwinfer_buffer* b) -> const hwinfer_device* { return b->device; },
        [](const hwinfer_buffer*) -> uintptr_t { return 0; }};
    backend::CheckContext context;
    context.plugin_name = kName;
    context.buffers = &kBuffers;
    context.device = &device;
    context.require_buffers = require_buffers;
    return context;
  }
  static hwinfer_error* enqueue(hwinfer_stream&, const hwinfer_bandwidth_probe_desc& desc) {
    ++probe_calls;
    probe_size = desc.size_bytes;
    switch (behaviour) {
      case Behaviour::kThrowRuntime:
        throw std::runtime_error("boom");
      case Behaviour::kThrowBadAlloc:
        throw std::bad_alloc();
      case Behaviour::kReturnError:
        return hwinfer_make_error(HWINFER_STATUS_INTERNAL, "fake bandwidth_probe: device lost");
      case Behaviour::kOk:
        break;
    }
    return nullptr;
  }
  static hwinfer_error* enqueue(hwinfer_stream&, const hwinfer_rms_norm_desc&) { return nullptr; }
};

// A backend without a single kernel.
struct EmptyBackend {
  static constexpr const char* kName = "empty";
  static backend::CheckContext check_context(const hwinfer_device&, bool) { return {}; }
};

class KernelSlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeBackend::probe_calls = 0;
    FakeBackend::probe_size = 0;
    FakeBackend::behaviour = Behaviour::kOk;
    src_.device = &device_;
    src_.size_bytes = 4096;
    dst_ = src_;
    probe_ = CopyProbe(&src_, &dst_, 4096);
  }
  hwinfer_error* Launch(hwinfer_stream* stream, const hwinfer_bandwidth_probe_desc* desc) {
    return table_.bandwidth_probe(stream, desc);
  }

  const hwinfer_kernel_table table_ = make_kernel_table<FakeBackend>();
  hwinfer_device device_;
  hwinfer_buffer src_, dst_;
  hwinfer_stream stream_{&device_};
  hwinfer_bandwidth_probe_desc probe_;
};

TEST_F(KernelSlotsTest, TheTableHasASlotForEachEnqueueOverloadAndNoOther) {
  EXPECT_EQ(table_.struct_size, sizeof(hwinfer_kernel_table));
  EXPECT_NE(table_.bandwidth_probe, nullptr);
  EXPECT_NE(table_.rms_norm, nullptr);
  EXPECT_EQ(table_.gemm, nullptr);
  EXPECT_EQ(table_.matmul_quantized, nullptr);
  EXPECT_EQ(table_.rope_kv_append, nullptr);
  EXPECT_EQ(kernel_count<FakeBackend>(), 2);
  EXPECT_EQ(kernel_count<EmptyBackend>(), 0);
  EXPECT_EQ(kKernelKindCount, 12);  // ABI 1.3 added argmax
  const hwinfer_kernel_table empty = make_kernel_table<EmptyBackend>();
  EXPECT_EQ(empty.bandwidth_probe, nullptr);
  EXPECT_EQ(empty.gemm, nullptr);
}

TEST_F(KernelSlotsTest, AValidDescriptorReachesEnqueueOnce) {
  EXPECT_EQ(Take(Launch(&stream_, &probe_)).first, HWINFER_STATUS_OK);
  EXPECT_EQ(FakeBackend::probe_calls, 1);
  EXPECT_EQ(FakeBackend::probe_size, 4096u);
}

TEST_F(KernelSlotsTest, NullStreamAndDescAreNamedAndNeverReachEnqueue) {
  auto [code, message] = Take(Launch(nullptr, &probe_));
  EXPECT_EQ(code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(message, "fake: bandwidth_probe: stream must not be NULL");
  std::tie(code, message) = Take(Launch(&stream_, nullptr));
  EXPECT_EQ(code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(message, "fake: bandwidth_probe: desc must not be NULL");
  EXPECT_EQ(FakeBackend::probe_calls, 0);
}

TEST_F(KernelSlotsTest, TheSharedCheckRunsBeforeEnqueue) {
  probe_.size_bytes = 0;
  auto [code, message] = Take(Launch(&stream_, &probe_));
  EXPECT_EQ(code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("fake bandwidth_probe: size_bytes"));
  probe_.size_bytes = 4096;
  probe_.struct_size = 8;  // shorter than the descriptor
  std::tie(code, message) = Take(Launch(&stream_, &probe_));
  EXPECT_EQ(code, HWINFER_STATUS_INVALID_ARGUMENT);
  probe_.struct_size = sizeof(probe_);
  hwinfer_device other;
  dst_.device = &other;  // a view on another device
  std::tie(code, message) = Take(Launch(&stream_, &probe_));
  EXPECT_EQ(code, HWINFER_STATUS_INVALID_ARGUMENT) << message;
  EXPECT_EQ(FakeBackend::probe_calls, 0);
}

TEST_F(KernelSlotsTest, ExceptionsBecomeErrorsAndErrorsPassThrough) {
  FakeBackend::behaviour = Behaviour::kThrowRuntime;
  auto [code, message] = Take(Launch(&stream_, &probe_));
  EXPECT_EQ(code, HWINFER_STATUS_INTERNAL);
  EXPECT_EQ(message, "fake bandwidth_probe: boom");
  FakeBackend::behaviour = Behaviour::kThrowBadAlloc;
  std::tie(code, message) = Take(Launch(&stream_, &probe_));
  EXPECT_EQ(code, HWINFER_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(message, "fake bandwidth_probe: out of memory");
  FakeBackend::behaviour = Behaviour::kReturnError;
  std::tie(code, message) = Take(Launch(&stream_, &probe_));
  EXPECT_EQ(code, HWINFER_STATUS_INTERNAL);
  EXPECT_EQ(message, "fake bandwidth_probe: device lost");
  EXPECT_EQ(FakeBackend::probe_calls, 3);
}

// Every kind's samples (sdk/kit/kinds/<kind>.cpp) are valid descriptors of their kind: the
// shared check, as kernel_query runs it (views without buffers), says SUPPORTED.
TEST(KernelSamples, EverySamplePassesItsKindsCheck) {
  hwinfer_device device;
  backend::CheckContext context = FakeBackend::check_context(device, false);
  context.weight_dtypes = backend::kWeightDtypesAll;
  for (const KernelSample& sample : all_kernel_samples()) {
    hwinfer_kernel_support support;
    std::memset(&support, 0, sizeof(support));
    support.struct_size = sizeof(support);
    EXPECT_EQ(Take(backend::answer_kernel_query(context, sample.desc.get(), &support)).second, "")
        << sample.name;
    EXPECT_EQ(support.supported, HWINFER_KERNEL_SUPPORTED) << sample.name << ": " << support.reason;
  }
}

}  // namespace
}  // namespace hwinfer::kit
