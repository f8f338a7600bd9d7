// replica_routing.cpp — the routing rules of hwinfer/replica_routing.h.
#include "hwinfer/replica_routing.h"

namespace hwinfer {

const char* ReplicaRoutingName(ReplicaRouting routing) {
  switch (routing) {
    case ReplicaRouting::kLeastTokens:
      return "least_tokens";
    case ReplicaRouting::kRoundRobin:
      return "round_robin";
  }
  return "unknown";
}

StatusOr<ReplicaRouting> ParseReplicaRouting(const std::string& text) {
  for (ReplicaRouting routing : {ReplicaRouting::kLeastTokens, ReplicaRouting::kRoundRobin}) {
    if (text == ReplicaRoutingName(routing)) return routing;
  }
  return InvalidArgument("routing '" + text + "' is not one of least_tokens, round_robin");
}

int ReplicaRouter::Pick(const std::vector<int64_t>& outstanding_tokens,
                        const std::vector<bool>& live) {
  const size_t n = live.size();
  if (routing_ == ReplicaRouting::kRoundRobin) {
    for (size_t tried = 0; tried < n; ++tried) {
      const size_t index = (next_ + tried) % n;
      if (live[index]) {
        next_ = (index + 1) % n;
        return static_cast<int>(index);
      }
    }
    return -1;
  }
  int best = -1;
  for (size_t i = 0; i < n; ++i) {
    if (live[i] &&
        (best < 0 || outstanding_tokens[i] < outstanding_tokens[static_cast<size_t>(best)])) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace hwinfer
