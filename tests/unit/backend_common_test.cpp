// Unit tests of the plumbing the in-tree backends share (backends/common): error messages carry
// the plugin's name, guarded() turns exceptions into errors, option checks and parse_uint accept
// exactly what they document, and the view byte-extent arithmetic catches overflow and ranges
// outside the buffer.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

#include "common/dtype_info.h"
#include "common/plugin_errors.h"
#include "common/plugin_options.h"
#include "common/plugin_query.h"
#include "common/view_extent.h"

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

}  // namespace
}  // namespace hwinfer::backend
