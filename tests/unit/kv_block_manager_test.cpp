// kv_block_manager_test.cpp — the paged KV cache's bookkeeping: slots, block tables, all-or-nothing
// allocation, fork with copy-on-write, reservations, and a randomised property test of the
// invariants (no block owned twice, counts back to zero after draining).
#include "hwinfer/kv_block_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace hwinfer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(KvBlockManager, AppendReturnsSlotsInBlockOrder) {
  KvBlockManager manager(8, 4);
  auto first = manager.Append(1, 6);
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(first->slots, ElementsAre(0, 1, 2, 3, 4, 5));  // blocks 0 and 1
  auto second = manager.Append(2, 1);
  ASSERT_TRUE(second.ok());
  EXPECT_THAT(second->slots, ElementsAre(8));  // block 2, row 0
  auto more = manager.Append(1, 3);
  ASSERT_TRUE(more.ok());
  EXPECT_THAT(more->slots, ElementsAre(6, 7, 12));  // fills block 1, then block 3
  EXPECT_THAT(manager.BlockTable(1), ElementsAre(0, 1, 3));
  EXPECT_EQ(manager.SequenceTokens(1), 9);
  EXPECT_EQ(manager.num_free_blocks(), 4);
  EXPECT_TRUE(manager.CheckInvariants().ok());
}

TEST(KvBlockManager, AllocationIsAllOrNothing) {
  KvBlockManager manager(2, 4);
  ASSERT_TRUE(manager.Append(1, 5).ok());
  EXPECT_FALSE(manager.CanAppend(2, 4));
  auto full = manager.Append(2, 4);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), StatusCode::kOutOfMemory);
  EXPECT_THAT(full.status().message(), HasSubstr("needs 1 more block(s), 0 free of 2"));
  EXPECT_FALSE(manager.HasSequence(2));
  EXPECT_TRUE(manager.Append(1, 3).ok());  // fits in the partial block
  EXPECT_TRUE(manager.CheckInvariants().ok());
}

TEST(KvBlockManager, ReleaseFreesBlocksAndReusesLowestFirst) {
  KvBlockManager manager(4, 2);
  ASSERT_TRUE(manager.Append(1, 4).ok());  // blocks 0, 1
  ASSERT_TRUE(manager.Append(2, 2).ok());  // block 2
  ASSERT_TRUE(manager.Release(1).ok());
  EXPECT_EQ(manager.num_free_blocks(), 3);
  auto again = manager.Append(3, 1);
  ASSERT_TRUE(again.ok());
  EXPECT_THAT(again->slots, ElementsAre(0));
  EXPECT_EQ(manager.Release(99).code(), StatusCode::kNotFound);
}

TEST(KvBlockManager, ForkSharesBlocksAndCopiesPartialBlockOnWrite) {
  KvBlockManager manager(8, 4);
  ASSERT_TRUE(manager.Append(1, 6).ok());  // blocks 0 (full), 1 (2 of 4)
  ASSERT_TRUE(manager.Fork(1, 2).ok());
  EXPECT_EQ(manager.RefCount(0), 2);
  EXPECT_EQ(manager.RefCount(1), 2);
  auto write = manager.Append(2, 1);
  ASSERT_TRUE(write.ok());
  ASSERT_EQ(write->copy_on_write.size(), 1u);
  EXPECT_EQ(write->copy_on_write[0], std::make_pair(1, 2));
  EXPECT_THAT(write->slots, ElementsAre(2 * 4 + 2));
  EXPECT_THAT(manager.BlockTable(2), ElementsAre(0, 2));
  EXPECT_EQ(manager.RefCount(0), 2);
  EXPECT_EQ(manager.RefCount(1), 1);
  EXPECT_EQ(manager.Fork(7, 8).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(manager.Fork(1, 2).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(manager.CheckInvariants().ok());
}

TEST(KvBlockManager, ReservedBlocksCountAsUsedAndOnlyTheirSequenceDrawsFromThem) {
  KvBlockManager manager(8, 4);
  ASSERT_TRUE(manager.Reserve(1, 14).ok());  // 4 blocks of 4 for 14 tokens
  EXPECT_TRUE(manager.HasSequence(1));
  EXPECT_EQ(manager.SequenceTokens(1), 0);
  EXPECT_TRUE(manager.BlockTable(1).empty());
  EXPECT_EQ(manager.ReservedBlocks(1), 4);
  EXPECT_EQ(manager.num_free_blocks(), 4);
  EXPECT_EQ(manager.num_used_blocks(), 4);
  // Another sequence gets only the blocks nobody reserved.
  EXPECT_TRUE(manager.CanAppend(2, 16));
  EXPECT_FALSE(manager.CanAppend(2, 17));
  ASSERT_TRUE(manager.Append(2, 16).ok());
  EXPECT_EQ(manager.num_free_blocks(), 0);
  // The reserved sequence still grows to its 14 tokens, out of its reservation.
  ASSERT_TRUE(manager.CanAppend(1, 14));
  auto grown = manager.Append(1, 14);
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  EXPECT_THAT(manager.BlockTable(1), ElementsAre(4, 5, 6, 7));
  EXPECT_EQ(grown->slots.front(), 16);
  EXPECT_EQ(manager.ReservedBlocks(1), 0);
  EXPECT_EQ(manager.num_used_blocks(), 8);
  EXPECT_TRUE(manager.CanAppend(1, 2));   // the last block's two free rows
  EXPECT_FALSE(manager.CanAppend(1, 3));  // a fifth block: none free
  EXPECT_TRUE(manager.CheckInvariants().ok()) << manager.CheckInvariants().ToString();
  ASSERT_TRUE(manager.Release(1).ok());
  EXPECT_EQ(manager.num_free_blocks(), 4);
}

TEST(KvBlockManager, ReserveIsAllOrNothingNeverShrinksAndReleaseReturnsIt) {
  KvBlockManager manager(6, 4);
  ASSERT_TRUE(manager.Append(1, 5).ok());    // holds blocks 0 and 1 (1 of 4 rows)
  ASSERT_TRUE(manager.Reserve(1, 16).ok());  // 4 blocks in all: 2 more set aside
  EXPECT_EQ(manager.ReservedBlocks(1), 2);
  EXPECT_EQ(manager.num_free_blocks(), 2);
  ASSERT_TRUE(manager.Reserve(1, 8).ok());  // already covered: unchanged
  EXPECT_EQ(manager.ReservedBlocks(1), 2);
  const Status full = manager.Reserve(2, 12);  // 3 blocks, 2 free
  EXPECT_EQ(full.code(), StatusCode::kOutOfMemory);
  EXPECT_THAT(full.message(),
              HasSubstr("sequence 2 reserving 12 tokens needs 3 more block(s), 2 free of 6"));
  EXPECT_FALSE(manager.HasSequence(2));
  EXPECT_EQ(manager.Reserve(2, -1).code(), StatusCode::kInvalidArgument);
  // A fork shares the blocks, not the reservation; the parent's copy-on-write of the shared
  // partial block comes out of its reservation.
  ASSERT_TRUE(manager.Fork(1, 3).ok());
  EXPECT_EQ(manager.ReservedBlocks(3), 0);
  auto write = manager.Append(1, 1);
  ASSERT_TRUE(write.ok()) << write.status().ToString();
  ASSERT_EQ(write->copy_on_write.size(), 1u);
  EXPECT_EQ(write->copy_on_write[0], std::make_pair(1, 2));
  EXPECT_EQ(manager.ReservedBlocks(1), 1);
  EXPECT_EQ(manager.num_free_blocks(), 2);
  EXPECT_TRUE(manager.CheckInvariants().ok()) << manager.CheckInvariants().ToString();
  // Release returns the blocks only 1 held and what is left of its reservation.
  ASSERT_TRUE(manager.Release(1).ok());
  EXPECT_EQ(manager.num_free_blocks(), 4);
  EXPECT_THAT(manager.BlockTable(3), ElementsAre(0, 1));
  EXPECT_TRUE(manager.CheckInvariants().ok()) << manager.CheckInvariants().ToString();
}

TEST(KvBlockManager, RandomOperationsKeepInvariantsAndDrainToZero) {
  std::mt19937 rng(1234);
  KvBlockManager manager(64, 16);
  std::set<SequenceId> live;
  SequenceId next_id = 0;
  for (int step = 0; step < 5000; ++step) {
    const int op = static_cast<int>(rng() % 11);
    if (op < 6 || live.empty()) {
      SequenceId id = (live.empty() || rng() % 3 == 0)
                          ? next_id++
                          : *std::next(live.begin(), static_cast<long>(rng() % live.size()));
      const int64_t n = 1 + static_cast<int64_t>(rng() % 40);
      const bool fits = manager.CanAppend(id, n);
      auto result = manager.Append(id, n);
      ASSERT_EQ(result.ok(), fits) << "step " << step;
      if (result.ok()) {
        live.insert(id);
        for (int32_t slot : result->slots) {
          // A new token's slot is in a block this sequence holds alone.
          ASSERT_EQ(manager.RefCount(slot / 16), 1) << "step " << step;
        }
      }
    } else if (op < 8) {
      SequenceId id = *std::next(live.begin(), static_cast<long>(rng() % live.size()));
      ASSERT_TRUE(manager.Release(id).ok());
      live.erase(id);
    } else if (op == 10) {
      SequenceId id = rng() % 2 == 0
                          ? next_id++
                          : *std::next(live.begin(), static_cast<long>(rng() % live.size()));
      const int64_t tokens = static_cast<int64_t>(rng() % 160);
      const int32_t claimed =
          static_cast<int32_t>(manager.BlockTable(id).size()) + manager.ReservedBlocks(id);
      const int32_t more = std::max(manager.BlocksForTokens(tokens) - claimed, 0);
      const int32_t free_before = manager.num_free_blocks();
      const Status reserved = manager.Reserve(id, tokens);
      ASSERT_EQ(reserved.ok(), more <= free_before) << "step " << step;
      if (reserved.ok()) {
        live.insert(id);
        ASSERT_EQ(manager.num_free_blocks(), free_before - more) << "step " << step;
        const std::vector<int32_t>& table = manager.BlockTable(id);
        const bool shared_last = !table.empty() && manager.RefCount(table.back()) > 1;
        if (tokens > manager.SequenceTokens(id) && !shared_last) {  // (a copy is not reserved)
          ASSERT_TRUE(manager.CanAppend(id, tokens - manager.SequenceTokens(id)))
              << "step " << step << ": a sequence always grows into its reservation";
        }
      }
    } else {
      SequenceId parent = *std::next(live.begin(), static_cast<long>(rng() % live.size()));
      ASSERT_TRUE(manager.Fork(parent, next_id).ok());
      live.insert(next_id++);
    }
    ASSERT_TRUE(manager.CheckInvariants().ok()) << manager.CheckInvariants().message();
  }
  for (SequenceId id : live) ASSERT_TRUE(manager.Release(id).ok());
  EXPECT_EQ(manager.num_free_blocks(), 64);
  for (int32_t b = 0; b < 64; ++b) EXPECT_EQ(manager.RefCount(b), 0);
}

}  // namespace
}  // namespace hwinfer
