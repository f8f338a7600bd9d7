// Unit tests of the descriptor checks every backend shares (backends/common/view_checks.h,
// kernel_checks.h, kernel_query.h), driven through a fake plugin: messages start with the
// plugin's name, buffers are read only through the plugin's BufferInfoFn (size, device, host
// address), and the kernel_limits hook sees only well-formed descriptors and turns into a
// kernel_query "unsupported" answer.
#include "common/kernel_checks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/check_context.h"
#include "common/kernel_query.h"
#include "common/view_checks.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {
namespace {

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

TEST(KernelChecksTest, MessagesStartWithThePluginName) {
  hwinfer_gemm_desc d = Gemm(nullptr, nullptr, nullptr);
  d.a.dtype = HWINFER_DTYPE_I32;
  EXPECT_EQ(Take(check_gemm(Context("cpu", false), d)).message,
            "cpu gemm: operand a has dtype I32; gemm takes F32, F16 or BF16");
  const Taken sim = Take(check_gemm(Context("sim", false), d));
  EXPECT_EQ(sim.code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(sim.message, "sim gemm: operand a has dtype I32; gemm takes F32, F16 or BF16");
}

TEST(KernelChecksTest, BuffersAreOptionalAtQueryAndRequiredAtEnqueue) {
  const hwinfer_gemm_desc d = Gemm(nullptr, nullptr, nullptr);
  EXPECT_EQ(Take(check_gemm(Context("cpu", false), d)).code, HWINFER_STATUS_OK);
  const Taken enqueue = Take(check_gemm(Context("cpu", true), d));
  EXPECT_EQ(enqueue.code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(enqueue.message, "cpu gemm: operand a has no buffer");
}

TEST(KernelChecksTest, BufferBoundsAndDeviceComeFromThePluginCallbacks) {
  FakeBuffer a{32, kDevice, 0}, b{48, kDevice, 0}, c{24, kDevice, 0};
  EXPECT_EQ(Take(check_gemm(Context("cpu", true), Gemm(&a, &b, &c))).code, HWINFER_STATUS_OK);
  FakeBuffer short_c{20, kDevice, 0};
  const Taken outside = Take(check_gemm(Context("cpu", true), Gemm(&a, &b, &short_c)));
  EXPECT_EQ(outside.code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(outside.message.find("cpu gemm: operand c (offset 0"), std::string::npos);
  EXPECT_NE(outside.message.find("outside its 20-byte buffer"), std::string::npos);
  FakeBuffer foreign_b{48, kOtherDevice, 0};
  EXPECT_EQ(Take(check_gemm(Context("vulkan", true), Gemm(&a, &foreign_b, &c))).message,
            "vulkan gemm: operand b lives in a buffer of another device");
}

TEST(KernelChecksTest, AlignmentCountsTheHostAddressOrOnlyTheOffsetWithoutOne) {
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

TEST(KernelChecksTest, DistinctBuffersOverlapOnlyThroughAliasedHostAddresses) {
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

TEST(KernelChecksTest, KernelLimitsSeeOnlyWellFormedDescriptorsAndAnswerQueries) {
  limit_calls.clear();
  CheckContext context = Context("vulkan", false);
  context.kernel_limits = &NoBf16Weights;
  hwinfer_gemm_desc d = Gemm(nullptr, nullptr, nullptr);
  d.m = 0;
  EXPECT_EQ(Take(check_gemm(context, d)).code, HWINFER_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(limit_calls.empty());
  d.m = 2;
  d.b.dtype = HWINFER_DTYPE_BF16;
  d.b.strides_bytes[0] = 3 * 2;
  d.b.strides_bytes[1] = 2;
  EXPECT_EQ(Take(check_gemm(context, d)).code, HWINFER_STATUS_UNSUPPORTED);
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

TEST(KernelChecksTest, KernelQueryRejectsNullArgumentsAndNamesUnknownKinds) {
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
