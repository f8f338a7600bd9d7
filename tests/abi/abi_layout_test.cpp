// abi_layout_test.cpp — the live plugin.h must keep ABI 1.0 as a prefix: every 1.0 field at the
// same offset with the same size, every 1.0 struct at least as large (append-only), quantized
// block layouts and every 1.0 constant unchanged. The tables come from one source
// (abi_layout_fields.c) compiled against the frozen 1.0 header and against the live one, so no
// number here is typed by hand. This is what stops a field being inserted in the middle.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "abi_layout_table.h"

namespace {

std::map<std::string, const abi_layout_row*> Index(const abi_layout_row* rows, uint32_t count) {
  std::map<std::string, const abi_layout_row*> index;
  for (uint32_t i = 0; i < count; ++i) index[rows[i].name] = &rows[i];
  return index;
}

TEST(AbiLayout, TablesDescribeTheSameOneZeroNames) {
  ASSERT_GT(abi_layout_frozen_count, 200u) << "the 1.0 table lost rows";
  EXPECT_EQ(abi_layout_frozen_count, abi_layout_live_count);
  EXPECT_EQ(Index(abi_layout_frozen, abi_layout_frozen_count).size(), abi_layout_frozen_count)
      << "a name appears twice in abi_layout_fields.c";
}

TEST(AbiLayout, LiveHeaderKeepsEveryOneZeroFieldAtItsOffset) {
  const auto live = Index(abi_layout_live, abi_layout_live_count);
  for (uint32_t i = 0; i < abi_layout_frozen_count; ++i) {
    const abi_layout_row& frozen = abi_layout_frozen[i];
    if (frozen.what != ABI_LAYOUT_FIELD) continue;
    auto it = live.find(frozen.name);
    ASSERT_NE(it, live.end()) << frozen.name;
    EXPECT_EQ(it->second->offset, frozen.offset)
        << frozen.name << " moved: fields may only be appended at the end of a struct";
    EXPECT_EQ(it->second->size, frozen.size)
        << frozen.name << " changed size: retyping a field needs a new ABI major";
  }
}

TEST(AbiLayout, LiveStructsOnlyGrow) {
  const auto live = Index(abi_layout_live, abi_layout_live_count);
  for (uint32_t i = 0; i < abi_layout_frozen_count; ++i) {
    const abi_layout_row& frozen = abi_layout_frozen[i];
    auto it = live.find(frozen.name);
    ASSERT_NE(it, live.end()) << frozen.name;
    if (frozen.what == ABI_LAYOUT_STRUCT) {
      EXPECT_GE(it->second->size, frozen.size) << "sizeof(" << frozen.name << ") shrank";
    } else if (frozen.what == ABI_LAYOUT_EXACT) {
      EXPECT_EQ(it->second->size, frozen.size)
          << "sizeof(" << frozen.name << ") is a GGUF file format and must never change";
    }
  }
}

TEST(AbiLayout, LiveHeaderKeepsEveryOneZeroConstant) {
  const auto live = Index(abi_layout_live, abi_layout_live_count);
  for (uint32_t i = 0; i < abi_layout_frozen_count; ++i) {
    const abi_layout_row& frozen = abi_layout_frozen[i];
    auto it = live.find(frozen.name);
    ASSERT_NE(it, live.end()) << frozen.name;
    if (frozen.what == ABI_LAYOUT_CONSTANT) {
      EXPECT_EQ(it->second->size, frozen.size)
          << frozen.name << " changed value: enum values are part of the ABI";
    } else if (frozen.what == ABI_LAYOUT_STRING) {
      EXPECT_STREQ(it->second->text, frozen.text) << frozen.name;
    }
  }
}

TEST(AbiLayout, FrozenTableHasTheKnownOneZeroSizesOnLp64) {
  // An anchor against the frozen copy itself being edited: these are the 1.0 sizes on LP64
  // (x86-64, aarch64). If this fails, tests/abi/frozen/v1_0 was changed; restore it.
  if (sizeof(void*) != 8) GTEST_SKIP() << "sizes below are for LP64";
  const auto frozen = Index(abi_layout_frozen, abi_layout_frozen_count);
  EXPECT_EQ(frozen.at("hwinfer_tensor_view")->size, 96u);
  EXPECT_EQ(frozen.at("hwinfer_block_q8_0")->size, 34u);
  EXPECT_EQ(frozen.at("hwinfer_block_q4_0")->size, 18u);
  EXPECT_EQ(frozen.at("hwinfer_kernel_table")->size, 88u);
  EXPECT_EQ(frozen.at("hwinfer_plugin_api")->size, 232u);
  EXPECT_EQ(frozen.at("hwinfer_device_info")->size, 456u);
  EXPECT_EQ(frozen.at("hwinfer_bandwidth_probe_desc")->size, 312u);
}

}  // namespace
