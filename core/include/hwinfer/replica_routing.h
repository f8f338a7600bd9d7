// hwinfer/replica_routing.h — which replica a request goes to when one run serves several devices
// (docs/multi-device.md): each request is routed once, when it arrives, to one of the replicas
// still taking requests.
//
//   least_tokens (default): the replica with the fewest outstanding tokens (for every unfinished
//                           request routed there: prompt + output length minus the output tokens
//                           already produced); ties to the lower index.
//   round_robin:            the live replicas in turn.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer {

enum class ReplicaRouting { kLeastTokens = 0, kRoundRobin = 1 };
// "least_tokens" | "round_robin"; and back. Parse returns InvalidArgument naming the value.
const char* ReplicaRoutingName(ReplicaRouting routing);
StatusOr<ReplicaRouting> ParseReplicaRouting(const std::string& text);

class ReplicaRouter {
 public:
  explicit ReplicaRouter(ReplicaRouting routing) : routing_(routing) {}
  // The replica for the next request: an index of |outstanding_tokens| whose |live| entry is true,
  // by the routing rule; -1 when no replica is live. Both vectors have one entry per replica.
  int Pick(const std::vector<int64_t>& outstanding_tokens, const std::vector<bool>& live);
  ReplicaRouting routing() const { return routing_; }

 private:
  ReplicaRouting routing_;
  size_t next_ = 0;  // round robin: where the next search starts
};

}  // namespace hwinfer
