// plugin_api_test.cpp — the plugin kit's C tables (sdk/include/hwinfer/kit/plugin_api.h,
// object_slots.h, host_memory.h) on a fake host-memory backend with its own handle structs (so this
// is its own executable): every slot is called through the C table as a host would, and the checks,
// messages, live counts, guards and optional slots are what the kit promises.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/kit/handles.h"

struct hwinfer_plugin : hwinfer::kit::PluginBase {};
struct hwinfer_device : hwinfer::kit::DeviceBase {};
struct hwinfer_buffer : hwinfer::kit::HostBuffer {};
struct hwinfer_stream : hwinfer::kit::StreamBase {
  int copies = 0;
};
struct hwinfer_event : hwinfer::kit::EventBase {
  bool recorded = false;
};

#include "hwinfer/kit/host_memory.h"
#include "hwinfer/kit/plugin_api.h"
#include "kit_test_support.h"

namespace hwinfer::kit {
namespace {

using ::testing::HasSubstr;

enum class Fault { kNone, kOpenThrows, kAllocateBadAlloc };

// Two devices of host memory; copies run at once; events complete when recorded.
struct FakeBackend : HostMemory<FakeBackend> {
  static constexpr const char* kName = "fake";
  static constexpr const char* kVersion = "9.9.9";
  static inline Fault fault = Fault::kNone;
  static inline int closes = 0;

  static hwinfer_error* init(const hwinfer_host_api&, const hwinfer_option*, size_t,
                             std::unique_ptr<hwinfer_plugin>* out) {
    *out = std::make_unique<hwinfer_plugin>();
    (*out)->device_count = 2;
    return nullptr;
  }
  static hwinfer_error* device_info(const hwinfer_plugin&, uint32_t ordinal,
                                    hwinfer_device_info& info) {
    info.memory_total_bytes = 1000 + ordinal;
    return nullptr;
  }
  static hwinfer_error* open_device(hwinfer_plugin&, uint32_t, const hwinfer_option*, size_t,
                                    std::unique_ptr<hwinfer_device>* out) {
    if (fault == Fault::kOpenThrows) throw std::runtime_error("boom");
    *out = std::make_unique<hwinfer_device>();
    (*out)->max_allocation_bytes = 1 << 20;
    return nullptr;
  }
  static void close_device(hwinfer_device&) { ++closes; }
  static hwinfer_error* allocate(hwinfer_device& device, hwinfer_buffer& buffer) {
    if (fault == Fault::kAllocateBadAlloc) throw std::bad_alloc();
    return HostMemory<FakeBackend>::allocate(device, buffer);
  }
  static backend::CheckContext check_context(const hwinfer_device& device, bool require_buffers) {
    return host_check_context(kName, device, require_buffers);
  }
  static hwinfer_error* synchronize(hwinfer_stream&) { return nullptr; }
  static hwinfer_error* submit_copy(hwinfer_stream& stream, uint8_t* dst, const uint8_t* src,
                                    size_t size) {
    std::memmove(dst, src, size);
    ++stream.copies;
    return nullptr;
  }
  static hwinfer_error* record(hwinfer_event& event, hwinfer_stream&) {
    event.recorded = true;
    return nullptr;
  }
  static hwinfer_error* wait(hwinfer_stream&, hwinfer_event&) { return nullptr; }
  static hwinfer_error* synchronize(hwinfer_event&) { return nullptr; }
  static hwinfer_error* is_complete(hwinfer_event& event, bool* complete) {
    *complete = event.recorded;
    return nullptr;
  }
  static hwinfer_error* elapsed_ns(hwinfer_event&, hwinfer_event&, uint64_t* out) {
    *out = 7;
    return nullptr;
  }
  static hwinfer_error* enqueue(hwinfer_stream&, const hwinfer_bandwidth_probe_desc&) {
    return nullptr;
  }
};

class PluginApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeBackend::fault = Fault::kNone;
    host_.struct_size = sizeof(host_);
    host_.host_context = &logs_;
    host_.log = [](void* context, uint32_t, const char*, const char* message) {
      static_cast<std::vector<std::string>*>(context)->push_back(message);
    };
    ASSERT_EQ(plugin_query<FakeBackend>(HWINFER_ABI_MAJOR, &api_), nullptr);
    ASSERT_EQ(api_->plugin_init(&host_, nullptr, 0, &plugin_), nullptr);
    ASSERT_EQ(api_->device_open(plugin_, 0, nullptr, 0, &device_), nullptr);
    ASSERT_EQ(api_->stream_create(device_, &stream_), nullptr);
  }
  void TearDown() override {
    if (stream_ != nullptr) api_->stream_destroy(stream_);
    if (device_ != nullptr) api_->device_close(device_);
    api_->plugin_destroy(plugin_);
  }
  hwinfer_buffer* Alloc(uint64_t size) {
    hwinfer_buffer* buffer = nullptr;
    EXPECT_EQ(Take(api_->buffer_alloc(device_, size, HWINFER_MEMORY_DEVICE, &buffer)).second, "");
    return buffer;
  }

  std::vector<std::string> logs_;
  hwinfer_host_api host_{};
  const hwinfer_plugin_api* api_ = nullptr;
  hwinfer_plugin* plugin_ = nullptr;
  hwinfer_device* device_ = nullptr;
  hwinfer_stream* stream_ = nullptr;
};

TEST_F(PluginApiTest, TheTableCarriesTheBackendAndEveryObjectSlot) {
  EXPECT_STREQ(api_->name, "fake");
  EXPECT_STREQ(api_->version, "9.9.9");
  EXPECT_EQ(api_->struct_size, sizeof(hwinfer_plugin_api));
  EXPECT_NE(api_->buffer_import_host, nullptr);  // HostMemory provides import_host
  EXPECT_EQ(api_->stream_begin_capture, nullptr);
  ASSERT_NE(api_->kernels, nullptr);
  EXPECT_NE(api_->kernels->bandwidth_probe, nullptr);
  EXPECT_EQ(api_->kernels->gemm, nullptr);
  uint32_t count = 0;
  ASSERT_EQ(api_->device_count(plugin_, &count), nullptr);
  EXPECT_EQ(count, 2u);
  hwinfer_device_info info{};
  info.struct_size = sizeof(info);  // the host's size: the kit copies that much
  ASSERT_EQ(api_->device_get_info(plugin_, 1, &info), nullptr);
  EXPECT_EQ(info.memory_total_bytes, 1001u);
}

TEST_F(PluginApiTest, NullArgumentsAreNamedAfterPluginH) {
  EXPECT_EQ(Take(api_->plugin_init(nullptr, nullptr, 0, nullptr)).second,
            "fake: plugin_init: host must not be NULL");
  EXPECT_EQ(Take(api_->device_count(plugin_, nullptr)).second,
            "fake: device_count: out_count must not be NULL");
  EXPECT_EQ(Take(api_->copy_d2d(stream_, nullptr, 0, nullptr, 0, 0)).second,
            "fake: copy_d2d: src must not be NULL");
  EXPECT_EQ(Take(api_->event_elapsed_ns(nullptr, nullptr, nullptr)).second,
            "fake: event_elapsed_ns: start must not be NULL");
  EXPECT_EQ(Take(api_->kernels->bandwidth_probe(stream_, nullptr)).second,
            "fake: bandwidth_probe: desc must not be NULL");
  EXPECT_EQ(Take(api_->plugin_init(&host_, nullptr, 2, &plugin_)).first,
            HWINFER_STATUS_INVALID_ARGUMENT);
}

TEST_F(PluginApiTest, OrdinalsAreCheckedAndADeviceOpensOnce) {
  hwinfer_device* second = nullptr;
  EXPECT_EQ(Take(api_->device_open(plugin_, 2, nullptr, 0, &second)),
            std::make_pair(uint32_t{HWINFER_STATUS_OUT_OF_RANGE},
                           std::string("fake device_open: device ordinal 2 is out of range (the "
                                       "fake plugin has 2 device(s))")));
  EXPECT_EQ(Take(api_->device_open(plugin_, 0, nullptr, 0, &second)).first,
            HWINFER_STATUS_FAILED_PRECONDITION);
  ASSERT_EQ(api_->device_open(plugin_, 1, nullptr, 0, &second), nullptr);
  EXPECT_EQ(second->ordinal, 1u);
  EXPECT_EQ(second->plugin, plugin_);
  api_->device_close(second);
  ASSERT_EQ(api_->device_open(plugin_, 1, nullptr, 0, &second), nullptr);  // closed: opens again
  api_->device_close(second);
}

TEST_F(PluginApiTest, ExceptionsBecomeErrorsAndLeaveNothingHalfDone) {
  FakeBackend::fault = Fault::kOpenThrows;
  hwinfer_device* second = nullptr;
  EXPECT_EQ(
      Take(api_->device_open(plugin_, 1, nullptr, 0, &second)),
      std::make_pair(uint32_t{HWINFER_STATUS_INTERNAL}, std::string("fake device_open: boom")));
  FakeBackend::fault = Fault::kNone;
  ASSERT_EQ(api_->device_open(plugin_, 1, nullptr, 0, &second), nullptr);  // not left "open"
  api_->device_close(second);

  FakeBackend::fault = Fault::kAllocateBadAlloc;
  hwinfer_buffer* buffer = nullptr;
  EXPECT_EQ(Take(api_->buffer_alloc(device_, 64, HWINFER_MEMORY_DEVICE, &buffer)).first,
            HWINFER_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(buffer, nullptr);
  EXPECT_EQ(device_->live_buffers.load(), 0);
}

TEST_F(PluginApiTest, BuffersAreCheckedAndCounted) {
  hwinfer_buffer* buffer = nullptr;
  EXPECT_EQ(Take(api_->buffer_alloc(device_, 0, HWINFER_MEMORY_DEVICE, &buffer)).second,
            "fake buffer_alloc: size_bytes must be > 0");
  EXPECT_EQ(Take(api_->buffer_alloc(device_, 8, 7, &buffer)).first, HWINFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(Take(api_->buffer_alloc(device_, 2 << 20, HWINFER_MEMORY_DEVICE, &buffer)).first,
            HWINFER_STATUS_OUT_OF_MEMORY);  // over max_allocation_bytes
  buffer = Alloc(64);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->size_bytes, 64u);
  EXPECT_EQ(device_->live_buffers.load(), 1);
  void* mapped = nullptr;
  ASSERT_EQ(api_->buffer_map(buffer, &mapped), nullptr);
  EXPECT_EQ(mapped, buffer->data);
  api_->buffer_free(buffer);
  EXPECT_EQ(device_->live_buffers.load(), 0);
}

TEST_F(PluginApiTest, CopiesAreCheckedBeforeTheBackendRunsThem) {
  hwinfer_buffer* buffer = Alloc(64);
  const char text[] = "0123456789abcdef";
  EXPECT_EQ(Take(api_->copy_h2d(stream_, nullptr, buffer, 0, 0)).second, "");  // size 0: no-op
  EXPECT_EQ(Take(api_->copy_h2d(stream_, text, buffer, 60, 8)).second,
            "fake copy_h2d (dst): range [offset 60, size 8) lies outside the 64-byte buffer");
  EXPECT_EQ(Take(api_->copy_d2d(stream_, buffer, 0, buffer, 4, 16)).first,
            HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(stream_->copies, 0);
  ASSERT_EQ(api_->copy_h2d(stream_, text, buffer, 0, 16), nullptr);
  char back[16] = {};
  ASSERT_EQ(api_->copy_d2h(stream_, buffer, 0, back, 16), nullptr);
  EXPECT_EQ(std::memcmp(back, text, 16), 0);
  EXPECT_EQ(stream_->copies, 2);

  // Two imports of one host range alias: overlap is found by address.
  std::vector<uint8_t> host(64);
  hwinfer_buffer* a = nullptr;
  hwinfer_buffer* b = nullptr;
  ASSERT_EQ(api_->buffer_import_host(device_, host.data(), 64, &a), nullptr);
  ASSERT_EQ(api_->buffer_import_host(device_, host.data() + 8, 32, &b), nullptr);
  EXPECT_EQ(Take(api_->copy_d2d(stream_, a, 0, b, 0, 16)).second,
            "fake copy_d2d: source [offset 0, size 16) and destination [offset 0, same size) "
            "overlap in memory");
  EXPECT_EQ(api_->copy_d2d(stream_, a, 32, b, 0, 16), nullptr);
  api_->buffer_free(a);
  api_->buffer_free(b);
  api_->buffer_free(buffer);
}

TEST_F(PluginApiTest, HandlesOfAnotherDeviceAreRefused) {
  hwinfer_device* second = nullptr;
  ASSERT_EQ(api_->device_open(plugin_, 1, nullptr, 0, &second), nullptr);
  hwinfer_buffer* other = nullptr;
  ASSERT_EQ(api_->buffer_alloc(second, 16, HWINFER_MEMORY_DEVICE, &other), nullptr);
  hwinfer_event* event = nullptr;
  ASSERT_EQ(api_->event_create(second, &event), nullptr);
  char bytes[16] = {};
  EXPECT_EQ(Take(api_->copy_h2d(stream_, bytes, other, 0, 16)).second,
            "fake copy_h2d (dst): the buffer belongs to another device than the stream");
  EXPECT_EQ(Take(api_->event_record(event, stream_)).second,
            "fake event_record: the event and the stream belong to different devices");
  EXPECT_EQ(Take(api_->stream_wait_event(stream_, event)).first, HWINFER_STATUS_INVALID_ARGUMENT);
  api_->event_destroy(event);
  api_->buffer_free(other);
  api_->device_close(second);
}

TEST_F(PluginApiTest, ADeviceClosedWithLiveObjectsClosesWhenTheLastOneGoes) {
  hwinfer_buffer* buffer = Alloc(16);
  FakeBackend::closes = 0;
  api_->device_close(device_);
  device_ = nullptr;
  ASSERT_EQ(logs_.size(), 1u);
  EXPECT_EQ(logs_[0],
            "fake device_close: 1 buffers, 1 streams and 0 events are still alive; the host must "
            "destroy them before closing the device (it is closed when the last of them is "
            "destroyed)");
  EXPECT_EQ(FakeBackend::closes, 0);
  hwinfer_device* again = nullptr;  // the ordinal is free again at once
  ASSERT_EQ(api_->device_open(plugin_, 0, nullptr, 0, &again), nullptr);
  api_->device_close(again);
  EXPECT_EQ(FakeBackend::closes, 1);
  api_->buffer_free(buffer);  // still safe: the old device is kept for it
  EXPECT_EQ(FakeBackend::closes, 1);
  api_->stream_destroy(stream_);  // the last object: the old device closes now (no leak)
  stream_ = nullptr;
  EXPECT_EQ(FakeBackend::closes, 2);
}

TEST_F(PluginApiTest, KernelQueryAnswersWithTheChecksAndWhatTheBackendRuns) {
  hwinfer_bandwidth_probe_desc probe = CopyProbe(nullptr, nullptr, 4096);
  hwinfer_kernel_support support;
  std::memset(&support, 0, sizeof(support));
  support.struct_size = sizeof(support);
  const auto* desc = reinterpret_cast<const hwinfer_kernel_desc*>(&probe);
  ASSERT_EQ(Take(api_->kernel_query(device_, desc, &support)).second, "");
  EXPECT_EQ(support.supported, HWINFER_KERNEL_SUPPORTED) << support.reason;
  probe.size_bytes = 0;  // the shared check runs first
  EXPECT_EQ(Take(api_->kernel_query(device_, desc, &support)).first,
            HWINFER_STATUS_INVALID_ARGUMENT);

  // A well-formed kind the backend has no enqueue for.
  hwinfer_silu_mul_desc silu;
  std::memset(&silu, 0, sizeof(silu));
  silu.struct_size = sizeof(silu);
  silu.kind = HWINFER_KERNEL_SILU_MUL;
  silu.n_tokens = 1;
  silu.dim = 4;
  for (hwinfer_tensor_view* view : {&silu.gate, &silu.up, &silu.out}) {
    *view = BytesView(nullptr, 4);
    view->dtype = HWINFER_DTYPE_F32;
    view->rank = 2;
    view->shape[0] = 1;
    view->shape[1] = 4;
    view->strides_bytes[0] = 16;
    view->strides_bytes[1] = 4;
  }
  ASSERT_EQ(Take(api_->kernel_query(device_, reinterpret_cast<const hwinfer_kernel_desc*>(&silu),
                                    &support))
                .second,
            "");
  EXPECT_EQ(support.supported, HWINFER_KERNEL_UNSUPPORTED);
  EXPECT_STREQ(support.reason, "silu_mul is not implemented in the fake backend");
}

// A backend of device memory without import: that slot stays NULL.
struct NoImportBackend : FakeBackend {
  static constexpr const char* kName = "noimport";
  static hwinfer_error* import_host(int) = delete;
};

TEST(PluginApiOptionalSlots, ABackendWithoutImportHasNoImportSlot) {
  static_assert(!HasImportHost<NoImportBackend>::value);
  const hwinfer_plugin_api* api = nullptr;
  ASSERT_EQ(plugin_query<NoImportBackend>(HWINFER_ABI_MAJOR, &api), nullptr);
  EXPECT_EQ(api->buffer_import_host, nullptr);
  EXPECT_STREQ(api->name, "noimport");
  EXPECT_EQ(Take(plugin_query<NoImportBackend>(HWINFER_ABI_MAJOR + 1, &api)).first,
            HWINFER_STATUS_UNSUPPORTED);
}

}  // namespace
}  // namespace hwinfer::kit
