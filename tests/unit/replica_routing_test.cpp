// replica_routing_test.cpp — the routing rules of hwinfer/replica_routing.h: least outstanding
// tokens with ties to the lower index, round robin over the live replicas, none live.
#include "hwinfer/replica_routing.h"

#include <gtest/gtest.h>

namespace hwinfer {
namespace {

TEST(ReplicaRouter, LeastTokensPicksTheFewestOutstandingTiesToTheLowerIndex) {
  ReplicaRouter router(ReplicaRouting::kLeastTokens);
  EXPECT_EQ(router.Pick({30, 10, 20}, {true, true, true}), 1);
  EXPECT_EQ(router.Pick({10, 10, 20}, {true, true, true}), 0);
  EXPECT_EQ(router.Pick({30, 10, 10}, {true, false, true}), 2);  // a failed replica is skipped
  EXPECT_EQ(router.Pick({0, 0}, {false, false}), -1);
}

TEST(ReplicaRouter, RoundRobinTakesTheLiveReplicasInTurn) {
  ReplicaRouter router(ReplicaRouting::kRoundRobin);
  const std::vector<int64_t> load = {0, 0, 0};
  EXPECT_EQ(router.Pick(load, {true, true, true}), 0);
  EXPECT_EQ(router.Pick(load, {true, true, true}), 1);
  EXPECT_EQ(router.Pick(load, {true, false, true}), 2);
  EXPECT_EQ(router.Pick(load, {true, false, true}), 0);
  EXPECT_EQ(router.Pick(load, {true, false, true}), 2);
  EXPECT_EQ(router.Pick(load, {false, false, false}), -1);
}

TEST(ReplicaRouter, NamesParseBackAndUnknownOnesAreRefused) {
  for (ReplicaRouting r : {ReplicaRouting::kLeastTokens, ReplicaRouting::kRoundRobin}) {
    auto parsed = ParseReplicaRouting(ReplicaRoutingName(r));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, r);
  }
  auto bad = ParseReplicaRouting("random");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "routing 'random' is not one of least_tokens, round_robin");
}

}  // namespace
}  // namespace hwinfer
