// tensor_view_test.cpp — dtype sizes, contiguous strides (plain and block-quantized) and the
// byte extent of views, which every kernel bounds check relies on.
#include "hwinfer/tensor_view.h"

#include <gtest/gtest.h>

namespace hwinfer {
namespace {

TEST(TensorView, DtypeSizesMatchGgufLayouts) {
  EXPECT_EQ(DtypeElementBytes(HWINFER_DTYPE_F32), 4u);
  EXPECT_EQ(DtypeElementBytes(HWINFER_DTYPE_BF16), 2u);
  EXPECT_EQ(DtypeBlockValues(HWINFER_DTYPE_Q4_0), 32u);
  EXPECT_EQ(DtypeBlockBytes(HWINFER_DTYPE_Q4_0), 18u);
  EXPECT_EQ(DtypeBlockBytes(HWINFER_DTYPE_Q8_0), 34u);
  EXPECT_EQ(sizeof(hwinfer_block_q4_0), 18u);
  EXPECT_EQ(sizeof(hwinfer_block_q8_0), 34u);
  EXPECT_EQ(RowBytes(HWINFER_DTYPE_Q8_0, 4096), 128u * 34u);
  EXPECT_STREQ(DtypeName(HWINFER_DTYPE_Q4_0), "q4_0");
  EXPECT_STREQ(DtypeName(12345), "unknown");
}

TEST(TensorView, ContiguousStridesAreRowMajorInBytes) {
  hwinfer_tensor_view view = ContiguousView(nullptr, 16, HWINFER_DTYPE_F16, {3, 5, 7});
  EXPECT_EQ(view.struct_size, sizeof(hwinfer_tensor_view));
  EXPECT_EQ(view.rank, 3u);
  EXPECT_EQ(view.strides_bytes[2], 2);
  EXPECT_EQ(view.strides_bytes[1], 14);
  EXPECT_EQ(view.strides_bytes[0], 70);
  EXPECT_EQ(ViewEndBytes(view), 16u + 3u * 5u * 7u * 2u);
}

TEST(TensorView, QuantizedRowsArePackedBlocks) {
  hwinfer_tensor_view view = ContiguousView(nullptr, 0, HWINFER_DTYPE_Q4_0, {10, 64});
  EXPECT_EQ(view.strides_bytes[1], 0);
  EXPECT_EQ(view.strides_bytes[0], 36);
  EXPECT_EQ(ViewEndBytes(view), 360u);
}

TEST(TensorView, NoViewIsAbsent) {
  hwinfer_tensor_view view = NoView();
  EXPECT_EQ(view.buffer, nullptr);
  EXPECT_EQ(view.rank, 0u);
  EXPECT_EQ(view.struct_size, sizeof(hwinfer_tensor_view));
}

}  // namespace
}  // namespace hwinfer
