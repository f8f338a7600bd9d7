// scheduler_entry.h — the scheduler's private per-request record and per-step planning state,
// shared by the scheduler's .cpp files only (not installed, not part of the API).
//
// A request's token stream is prompt ++ output. |cached| tokens of it are in the KV cache; a
// request prefills until |cached| reaches |prefill_len| (the prompt, or after a preemption the
// prompt + every output token so far), and then decodes: it feeds output.back() (stream index
// cached == prompt + output.size() - 1) and samples the next output token.
#pragma once

#include <cstdint>
#include <vector>

#include "hwinfer/scheduler.h"

namespace hwinfer {

struct Scheduler::Entry {
  Request request;
  RequestState state = RequestState::kWaiting;
  std::vector<int32_t> output;  // [<= max_new_tokens] sampled tokens
  int64_t cached = 0;           // stream tokens in the KV cache (== kv.SequenceTokens(id))
  int64_t prefill_len = 0;      // stream tokens to prefill before decoding
  int64_t preemptions = 0;
  double first_scheduled_s = -1;
  bool in_plan = false;  // already given a chunk in the step being planned

  int64_t prompt_len() const { return static_cast<int64_t>(request.prompt.size()); }
  // Token |index| of prompt ++ output.
  int32_t StreamToken(int64_t index) const {
    const int64_t p = prompt_len();
    return index < p ? request.prompt[static_cast<size_t>(index)]
                     : output[static_cast<size_t>(index - p)];
  }
  bool decoding() const { return cached >= prefill_len; }
};

struct Scheduler::StepState {
  StepPlan plan;
  int64_t budget_tokens = 0;   // left of max_batch_tokens
  int64_t sequences_left = 0;  // left of max_sequences
  int32_t planned_blocks = 0;  // new KV blocks the plan's chunks will take
  int32_t free_blocks(const KvBlockManager& kv) const {
    return kv.num_free_blocks() - planned_blocks;
  }
};

}  // namespace hwinfer
