// Unit tests of the plumbing the in-tree backends share (sdk/kit): error messages carry
// the plugin's name, guarded() turns exceptions into errors, option checks and parse_uint accept
// exactly what they document, the view byte-extent arithmetic catches overflow and ranges
// outside the buffer, and the kernel descriptor checks (driven through a fake plugin) read buffers
// only through the plugin's BufferInfoFn and call its kernel_limits hook only for well-formed
// descriptors.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/kernel_query.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/kit/plugin_options.h"
#include "hwinfer/kit/plugin_query.h"
#include "hwinfer/kit/view_checks.h"
#include "hwinfer/kit/view_extent.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {
namespace {

// The error's code and message; destroys it. {OK, ""} for NULL.
struct Taken {
  uint32_t code = HWINFER_STATUS_OK;
  std::string message;
};
Taken Take(hwinfer_error* error) {
  if (error == nullptr) return {};
  Taken taken{error->code, error->message};
  error->destroy(error);
  return taken;
}

hwinfer_tensor_view View(std::initializer_list<int64_t> shape,
                         std::initializer_list<int64_t> strides_bytes) {
  hwinfer_tensor_view view{};
  view.struct_size = sizeof(hwinfer_tensor_view);
  view.rank = static_cast<uint32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), view.shape);
  std::copy(strides_bytes.begin(), strides_bytes.end(), view.strides_bytes);
  return view;
}

TEST(BackendCommonTest, GuardedTurnsExceptionsIntoErrorsNamingPluginAndEntryPoint) {
  EXPECT_EQ(Take(guarded("cpu", "buffer_alloc", []() -> hwinfer_error* { return nullptr; })).code,
            HWINFER_STATUS_OK);
  const Taken oom =
      Take(guarded("sim", "plugin_init", []() -> hwinfer_error* { throw std::bad_alloc(); }));
  EXPECT_EQ(oom.code, HWINFER_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(oom.message, "sim plugin_init: out of memory");
  const Taken thrown = Take(
      guarded("cpu", "copy_h2d", []() -> hwinfer_error* { throw std::runtime_error("boom"); }));
  EXPECT_EQ(thrown.code, HWINFER_STATUS_INTERNAL);
  EXPECT_EQ(thrown.message, "cpu copy_h2d: boom");
  const Taken unknown = Take(guarded("cpu", "event_record", []() -> hwinfer_error* { throw 7; }));
  EXPECT_EQ(unknown.message, "cpu event_record: unknown exception");
}

TEST(BackendCommonTest, RequireNonNullNamesTheArgument) {
  int value = 0;
  EXPECT_EQ(Take(require_non_null("cpu", &value, "device_open: out")).code, HWINFER_STATUS_OK);
  const Taken error = Take(require_non_null("sim", nullptr, "device_open: out"));
  EXPECT_EQ(error.code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(error.message, "sim: device_open: out must not be NULL");
}

TEST(BackendCommonTest, CheckByteRangeAcceptsRangesEndingAtTheBufferEndOnly) {
  EXPECT_EQ(Take(check_byte_range("cpu", 64, 0, 64, "copy_h2d")).code, HWINFER_STATUS_OK);
  EXPECT_EQ(Take(check_byte_range("cpu", 64, 64, 0, "copy_h2d")).code, HWINFER_STATUS_OK);
  const Taken past = Take(check_byte_range("cpu", 64, 60, 8, "copy_h2d"));
  EXPECT_EQ(past.code, HWINFER_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(past.message,
            "cpu copy_h2d: range [offset 60, size 8) lies outside the 64-byte buffer");
  // offset + size would wrap around: still outside.
  EXPECT_EQ(Take(check_byte_range("cpu", 64, 8, std::numeric_limits<uint64_t>::max(), "x")).code,
            HWINFER_STATUS_OUT_OF_RANGE);
}

TEST(BackendCommonTest, OptionChecksRejectNullArraysAndMalformedOptions) {
  EXPECT_EQ(Take(check_option_array("cpu", "plugin_init", nullptr, 0)).code, HWINFER_STATUS_OK);
  EXPECT_EQ(Take(check_option_array("cpu", "device_open", nullptr, 2)).message,
            "cpu device_open: options is NULL but n_options is 2");
  hwinfer_option option{sizeof(hwinfer_option), "threads", nullptr};
  const Taken malformed = Take(check_option("sim", "plugin_init", option, 3));
  EXPECT_EQ(malformed.code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(malformed.message.find("sim plugin_init: option 3 is malformed"), std::string::npos);
  option.value = "4";
  EXPECT_EQ(Take(check_option("sim", "plugin_init", option, 3)).code, HWINFER_STATUS_OK);
}

TEST(BackendCommonTest, ParseUintAcceptsDecimalDigitsInRangeOnly) {
  uint64_t value = 99;
  EXPECT_TRUE(parse_uint("42", 0, 100, &value));
  EXPECT_EQ(value, 42u);
  for (const char* bad : {"", "-1", "+1", "1.5", " 1", "0x10", "101"}) {
    EXPECT_FALSE(parse_uint(bad, 0, 100, &value)) << bad;
  }
  EXPECT_EQ(value, 42u);  // untouched on failure
  EXPECT_FALSE(parse_uint("0", 1, 64, &value));
  EXPECT_TRUE(parse_uint("000004", 0, 4096, &value, 6));
  EXPECT_FALSE(parse_uint("0000004", 0, 4096, &value, 6));  // more digits than allowed
}

TEST(BackendCommonTest, PluginQueryChecksOutPointerThenMajor) {
  const hwinfer_plugin_api* api = nullptr;
  EXPECT_EQ(Take(check_plugin_query("cpu", HWINFER_ABI_MAJOR, &api)).code, HWINFER_STATUS_OK);
  EXPECT_EQ(Take(check_plugin_query("cpu", HWINFER_ABI_MAJOR, nullptr)).message,
            "cpu hwinfer_plugin_query: out_api must not be NULL");
  EXPECT_EQ(Take(check_plugin_query("sim", HWINFER_ABI_MAJOR + 1, &api)).code,
            HWINFER_STATUS_UNSUPPORTED);
}

TEST(BackendCommonTest, DtypeFactsMatchPluginH) {
  EXPECT_EQ(dtype_element_bytes(HWINFER_DTYPE_F32), 4u);
  EXPECT_EQ(dtype_element_bytes(HWINFER_DTYPE_BF16), 2u);
  EXPECT_EQ(dtype_element_bytes(HWINFER_DTYPE_I8), 1u);
  EXPECT_EQ(dtype_element_bytes(HWINFER_DTYPE_Q4_0), 0u);
  EXPECT_STREQ(known_dtype_name(HWINFER_DTYPE_Q8_0), "Q8_0");
  EXPECT_EQ(known_dtype_name(12345), nullptr);
}

TEST(BackendCommonTest, ViewByteExtentSpansNegativeStridesAndDetectsOverflow) {
  int64_t lowest = 0;
  int64_t end = 0;
  // [3, 4] F32, row-major: bytes [0, 48).
  ASSERT_TRUE(view_byte_extent(View({3, 4}, {16, 4}), 4, &lowest, &end));
  EXPECT_EQ(lowest, 0);
  EXPECT_EQ(end, 48);
  // Rows walked backwards: bytes [-32, 16) relative to offset_bytes.
  ASSERT_TRUE(view_byte_extent(View({3, 4}, {-16, 4}), 4, &lowest, &end));
  EXPECT_EQ(lowest, -32);
  EXPECT_EQ(end, 16);
  EXPECT_FALSE(
      view_byte_extent(View({int64_t{1} << 40, 2}, {int64_t{1} << 40, 4}), 4, &lowest, &end));
}

TEST(BackendCommonTest, ExtentOutsideBufferChecksBothEnds) {
  EXPECT_FALSE(extent_outside_buffer(0, 48, 16, 64));
  EXPECT_TRUE(extent_outside_buffer(0, 48, 17, 64));
  EXPECT_FALSE(extent_outside_buffer(-32, 16, 32, 64));
  EXPECT_TRUE(extent_outside_buffer(-32, 16, 31, 64));
  EXPECT_TRUE(extent_outside_buffer(0, 1, 65, 64));
}

// The fake plugin's buffer. The checks see it as an opaque hwinfer_buffer* and read it only through
// kFakeBuffers, as they read a real plugin's.
struct FakeBuffer {
  uint64_t size_bytes = 0;
  const hwinfer_device* device = nullptr;
  uintptr_t host_address = 0;
};

const FakeBuffer& Fake(const hwinfer_buffer* buffer) {
  return *reinterpret_cast<const FakeBuffer*>(buffer);
}
hwinfer_buffer* AsBuffer(FakeBuffer& buffer) { return reinterpret_cast<hwinfer_buffer*>(&buffer); }

const BufferInfoFn kFakeBuffers = {
    [](const hwinfer_buffer* buffer) { return Fake(buffer).size_bytes; },
    [](const hwinfer_buffer* buffer) { return Fake(buffer).device; },
    [](const hwinfer_buffer* buffer) { return Fake(buffer).host_address; }};

int device_storage[2];
const auto* const kDevice = reinterpret_cast<const hwinfer_device*>(&device_storage[0]);
const auto* const kOtherDevice = reinterpret_cast<const hwinfer_device*>(&device_storage[1]);

CheckContext Context(const char* plugin, bool require_buffers) {
  CheckContext context;
  context.plugin_name = plugin;
  context.buffers = &kFakeBuffers;
  context.device = kDevice;
  context.require_buffers = require_buffers;
  return context;
}

// A row-major F32 [rows, cols] view in |buffer| (NULL: none) at |offset_bytes|.
hwinfer_tensor_view Matrix(FakeBuffer* buffer, int64_t rows, int64_t cols,
                           uint64_t offset_bytes = 0) {
  hwinfer_tensor_view view{};
  view.struct_size = sizeof(view);
  view.dtype = HWINFER_DTYPE_F32;
  view.buffer = buffer != nullptr ? AsBuffer(*buffer) : nullptr;
  view.offset_bytes = offset_bytes;
  view.rank = 2;
  view.shape[0] = rows;
  view.shape[1] = cols;
  view.strides_bytes[0] = cols * 4;
  view.strides_bytes[1] = 4;
  return view;
}

// c[2, 3] = a[2, 4] * b[4, 3], all F32, each in its own buffer (or none).
hwinfer_gemm_desc Gemm(FakeBuffer* a, FakeBuffer* b, FakeBuffer* c) {
  hwinfer_gemm_desc d{};
  d.struct_size = sizeof(d);
  d.kind = HWINFER_KERNEL_GEMM;
  d.m = 2;
  d.n = 3;
  d.k = 4;
  d.alpha = 1.0f;
  d.a = Matrix(a, 2, 4);
  d.b = Matrix(b, 4, 3);
  d.c = Matrix(c, 2, 3);
  return d;
}

TEST(BackendCommonTest, KernelCheckMessagesStartWithThePluginName) {
  hwinfer_gemm_desc d = Gemm(nullptr, nullptr, nullptr);
  d.a.dtype = HWINFER_DTYPE_I32;
  EXPECT_EQ(Take(check_kernel(Context("cpu", false), d)).message,
            "cpu gemm: operand a has dtype I32; gemm takes F32, F16 or BF16");
  const Taken sim = Take(check_kernel(Context("sim", false), d));
  EXPECT_EQ(sim.code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(sim.message, "sim gemm: operand a has dtype I32; gemm takes F32, F16 or BF16");
}

TEST(BackendCommonTest, KernelChecksWantBuffersAtEnqueueOnly) {
  const hwinfer_gemm_desc d = Gemm(nullptr, nullptr, nullptr);
  EXPECT_EQ(Take(check_kernel(Context("cpu", false), d)).code, HWINFER_STATUS_OK);
  const Taken enqueue = Take(check_kernel(Context("cpu", true), d));
  EXPECT_EQ(enqueue.code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(enqueue.message, "cpu gemm: operand a has no buffer");
}

TEST(BackendCommonTest, BufferBoundsAndDeviceComeFromThePluginCallbacks) {
  FakeBuffer a{32, kDevice, 0}, b{48, kDevice, 0}, c{24, kDevice, 0};
  EXPECT_EQ(Take(check_kernel(Context("cpu", true), Gemm(&a, &b, &c))).code, HWINFER_STATUS_OK);
  FakeBuffer short_c{20, kDevice, 0};
  const Taken outside = Take(check_kernel(Context("cpu", true), Gemm(&a, &b, &short_c)));
  EXPECT_EQ(outside.code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(outside.message.find("cpu gemm: operand c (offset 0"), std::string::npos);
  EXPECT_NE(outside.message.find("outside its 20-byte buffer"), std::string::npos);
  FakeBuffer foreign_b{48, kOtherDevice, 0};
  EXPECT_EQ(Take(check_kernel(Context("vulkan", true), Gemm(&a, &foreign_b, &c))).message,
            "vulkan gemm: operand b lives in a buffer of another device");
}

TEST(BackendCommonTest, AlignmentCountsTheHostAddressOrOnlyTheOffsetWithoutOne) {
  FakeBuffer device_memory{64, kDevice, 0};
  ViewExpectation x = expect_view("rms_norm", "x", HWINFER_DTYPE_F32, "[n_tokens, dim]", {2, 4});
  EXPECT_EQ(Take(check_view(Context("sim", true), Matrix(&device_memory, 2, 4, 8), x)).code,
            HWINFER_STATUS_OK);
  const Taken misaligned =
      Take(check_view(Context("sim", true), Matrix(&device_memory, 2, 4, 2), x));
  EXPECT_EQ(misaligned.code, HWINFER_STATUS_UNSUPPORTED);
  EXPECT_NE(misaligned.message.find("sim rms_norm: operand x starts at an address not aligned"),
            std::string::npos);
  // Host memory at an address 2 bytes past a 4-byte boundary: offset 2 is aligned, 0 is not.
  FakeBuffer host_memory{64, kDevice, 0x1002};
  EXPECT_EQ(Take(check_view(Context("cpu", true), Matrix(&host_memory, 2, 4, 2), x)).code,
            HWINFER_STATUS_OK);
  EXPECT_EQ(Take(check_view(Context("cpu", true), Matrix(&host_memory, 2, 4, 0), x)).code,
            HWINFER_STATUS_UNSUPPORTED);
}

TEST(BackendCommonTest, DistinctBuffersOverlapOnlyThroughAliasedHostAddresses) {
  const CheckContext context = Context("cpu", true);
  FakeBuffer one{256, kDevice, 0}, two{256, kDevice, 0};
  EXPECT_TRUE(byte_ranges_overlap(context, AsBuffer(one), 0, 64, AsBuffer(one), 63, 64));
  EXPECT_FALSE(byte_ranges_overlap(context, AsBuffer(one), 0, 64, AsBuffer(one), 64, 64));
  EXPECT_FALSE(byte_ranges_overlap(context, AsBuffer(one), 0, 64, AsBuffer(two), 0, 64));
  FakeBuffer host{256, kDevice, 0x10000}, alias{128, kDevice, 0x10080};
  EXPECT_TRUE(byte_ranges_overlap(context, AsBuffer(host), 0x80, 16, AsBuffer(alias), 0, 16));
  EXPECT_FALSE(byte_ranges_overlap(context, AsBuffer(host), 0, 0x80, AsBuffer(alias), 0, 16));
  EXPECT_FALSE(byte_ranges_overlap(context, nullptr, 0, 16, AsBuffer(host), 0, 16));
}

// The kinds the limits hook was called with; refuses gemm when b is BF16.
std::vector<uint32_t> limit_calls;
hwinfer_error* NoBf16Weights(const CheckContext& context, uint32_t kind, const void* desc) {
  limit_calls.push_back(kind);
  if (kind == HWINFER_KERNEL_GEMM &&
      static_cast<const hwinfer_gemm_desc*>(desc)->b.dtype == HWINFER_DTYPE_BF16) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED, "%s gemm: no BF16 weights here",
                              context.plugin_name);
  }
  return nullptr;
}

TEST(BackendCommonTest, KernelLimitsSeeOnlyWellFormedDescriptorsAndAnswerQueries) {
  limit_calls.clear();
  CheckContext context = Context("vulkan", false);
  context.kernel_limits = &NoBf16Weights;
  hwinfer_gemm_desc d = Gemm(nullptr, nullptr, nullptr);
  d.m = 0;
  EXPECT_EQ(Take(check_kernel(context, d)).code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(limit_calls.empty());
  d.m = 2;
  d.b.dtype = HWINFER_DTYPE_BF16;
  d.b.strides_bytes[0] = 3 * 2;
  d.b.strides_bytes[1] = 2;
  EXPECT_EQ(Take(check_kernel(context, d)).code, HWINFER_STATUS_UNSUPPORTED);
  EXPECT_EQ(limit_calls, std::vector<uint32_t>{HWINFER_KERNEL_GEMM});

  hwinfer_kernel_support support{};
  support.struct_size = sizeof(support);
  EXPECT_EQ(
      Take(answer_kernel_query(context, reinterpret_cast<const hwinfer_kernel_desc*>(&d), &support))
          .code,
      HWINFER_STATUS_OK);
  EXPECT_EQ(support.supported, HWINFER_KERNEL_UNSUPPORTED);
  EXPECT_STREQ(support.reason, "vulkan gemm: no BF16 weights here");
}

TEST(BackendCommonTest, KernelQueryRejectsNullArgumentsAndNamesUnknownKinds) {
  const CheckContext context = Context("sim", false);
  hwinfer_kernel_desc unknown{sizeof(hwinfer_kernel_desc), 999};
  hwinfer_kernel_support support{};
  support.struct_size = sizeof(support);
  EXPECT_EQ(Take(answer_kernel_query(context, nullptr, &support)).message,
            "sim: kernel_query: desc must not be NULL");
  CheckContext no_device = context;
  no_device.device = nullptr;
  EXPECT_EQ(Take(answer_kernel_query(no_device, &unknown, &support)).code,
            HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(answer_kernel_query(context, &unknown, &support)).code, HWINFER_STATUS_OK);
  EXPECT_EQ(support.supported, HWINFER_KERNEL_UNSUPPORTED);
  EXPECT_STREQ(support.reason, "unknown kernel kind 999 (newer than this sim plugin)");
}

}  // namespace
}  // namespace hwinfer::backend
