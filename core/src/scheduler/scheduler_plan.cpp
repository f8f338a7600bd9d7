// scheduler_plan.cpp — Schedule: one step's plan (scheduler.h). Order of work per step:
//   1. decodes of running requests, best first (priority desc, arrival asc, id asc), each one
//      token; a decode missing a KV block preempts running requests from the bottom of that order
//      (never one above it), or itself when none is left below;
//   2. the next prefill chunk of running requests whose prefill is partial (same order; may
//      preempt below itself, else shrinks to the free blocks);
//   3. admission, unless this step preempted: the front queue (preempted requests, or the
//      current static/dynamic batch), then (continuous only) the waiting queue in effective
//      priority order, head of line: it stops at the first request whose chunk does not fit
//      (under kv_reservation max_length: whose whole reservation does not fit, which it then
//      takes at once).
// Cost per step: O(r log r + a log w) for r running, a admitted and w waiting requests; nothing
// here walks the whole waiting queue.
#include <algorithm>
#include <cassert>

#include "scheduler/scheduler_entry.h"

namespace hwinfer {

int32_t Scheduler::BlocksNeeded(const Entry& entry, int64_t n) const {
  const RequestId id = entry.request.id;
  const int32_t claimed =
      static_cast<int32_t>(kv_->BlockTable(id).size()) + kv_->ReservedBlocks(id);
  return std::max(kv_->BlocksForTokens(kv_->SequenceTokens(id) + n) - claimed, 0);
}

void Scheduler::PlanChunk(StepState& step, Entry& entry, int64_t n, int32_t blocks, double now_s) {
  assert(n > 0 && (entry.decoding() ? n == 1 : entry.cached + n <= entry.prefill_len));
  SequenceChunk chunk;
  chunk.sequence = entry.request.id;
  chunk.tokens.reserve(static_cast<size_t>(n));
  for (int64_t t = entry.cached; t < entry.cached + n; ++t) {
    chunk.tokens.push_back(entry.StreamToken(t));
  }
  const bool prefill = !entry.decoding();
  chunk.want_logits = !prefill || entry.cached + n == entry.prefill_len;
  step.plan.chunks.push_back(std::move(chunk));
  step.plan.requests.push_back(entry.request.id);
  step.plan.is_prefill.push_back(prefill);
  (prefill ? step.plan.prefill_tokens : step.plan.decode_tokens) += n;
  step.budget_tokens -= n;
  step.sequences_left -= 1;
  step.planned_blocks += blocks;
  entry.in_plan = true;
  if (entry.first_scheduled_s < 0) entry.first_scheduled_s = now_s;
}

void Scheduler::Preempt(StepState& step, Entry& entry) {
  const RequestId id = entry.request.id;
  assert(entry.state == RequestState::kRunning && !entry.in_plan);
  if (kv_->HasSequence(id)) (void)kv_->Release(id);
  RemoveRunning(id);
  entry.state = RequestState::kWaiting;
  entry.cached = 0;
  // Recompute: the next prefill feeds prompt + every output so far; its logits give the next
  // new token, so nothing is repeated or lost.
  entry.prefill_len = entry.prompt_len() + static_cast<int64_t>(entry.output.size());
  ++entry.preemptions;
  ++preemptions_;
  front_.push_front(id);
  step.plan.preempted.push_back(id);
}

void Scheduler::MaybeStartBatch(double now_s, bool more_arrivals) {
  if (batch_active_ || waiting_.empty()) return;
  const int64_t capacity = BatchCapacity();
  const bool full = static_cast<int64_t>(waiting_.size()) >= capacity;
  const bool timed_out = options_.mode == BatchingMode::kDynamic &&
                         now_s >= waiting_by_arrival_.begin()->first + options_.batch_timeout_s;
  if (!full && more_arrivals && !timed_out) return;
  for (int64_t i = 0; i < capacity && !waiting_.empty(); ++i) {
    const WaitKey key = *waiting_.begin();
    waiting_.erase(waiting_.begin());
    waiting_by_arrival_.erase({key.arrival_s, key.id});
    front_.push_back(key.id);
  }
  batch_active_ = true;
}

void Scheduler::Admit(StepState& step, double now_s) {
  const bool continuous = options_.mode == BatchingMode::kContinuous;
  while (step.budget_tokens > 0 && step.sequences_left > 0 &&
         static_cast<int64_t>(running_.size()) < options_.max_sequences) {
    RequestId id = 0;
    if (!front_.empty()) {
      id = front_.front();
    } else if (continuous && !waiting_.empty()) {
      id = waiting_.begin()->id;
    } else {
      return;
    }
    Entry& e = *Find(id);
    const int64_t n = std::min(e.prefill_len, step.budget_tokens);
    const bool reserve = options_.kv_reservation == KvReservation::kMaxLength;
    const int32_t blocks = reserve ? ReservationBlocks() : BlocksNeeded(e, n);
    if (blocks > step.free_blocks(*kv_)) return;  // head of line: keep the queue order
    if (!front_.empty()) {
      front_.pop_front();
    } else {
      waiting_.erase(waiting_.begin());
      waiting_by_arrival_.erase({e.request.arrival_s, id});
    }
    if (reserve) {
      // Fits: the whole reservation is within the blocks this step's plan leaves free.
      [[maybe_unused]] const Status reserved = kv_->Reserve(id, options_.max_model_len);
      assert(reserved.ok());
    }
    e.state = RequestState::kRunning;
    running_.push_back(id);
    PlanChunk(step, e, n, BlocksNeeded(e, n), now_s);  // 0 blocks under a reservation
  }
}

StepPlan Scheduler::Schedule(double now_s, bool more_arrivals) {
  if (options_.mode != BatchingMode::kContinuous) {
    MaybeEndBatch();
    MaybeStartBatch(now_s, more_arrivals);
    if (!batch_active_) return {};
  }
  StepState step;
  step.budget_tokens = options_.max_batch_tokens;
  step.sequences_left = options_.max_sequences;

  // Running requests best first; victims are taken from the back.
  std::vector<Entry*> order;
  order.reserve(running_.size());
  for (RequestId id : running_) {
    Entry* e = Find(id);
    e->in_plan = false;
    order.push_back(e);
  }
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    if (a->request.priority != b->request.priority) {
      return a->request.priority > b->request.priority;
    }
    if (a->request.arrival_s != b->request.arrival_s) {
      return a->request.arrival_s < b->request.arrival_s;
    }
    return a->request.id < b->request.id;
  });
  size_t victim_end = order.size();  // order[victim_end..] are preempted or planned
  // Preempts from the bottom of |order| (below |served|) until |blocks| fit; false if they don't.
  auto make_room = [&](size_t served, int32_t blocks) {
    while (blocks > step.free_blocks(*kv_)) {
      while (victim_end > served + 1 && (order[victim_end - 1]->state != RequestState::kRunning ||
                                         order[victim_end - 1]->in_plan)) {
        --victim_end;
      }
      if (victim_end <= served + 1) return false;
      Preempt(step, *order[--victim_end]);
    }
    return true;
  };

  // 1. Decodes: one token each (the last output token).
  for (size_t i = 0; i < order.size(); ++i) {
    Entry& e = *order[i];
    if (e.state != RequestState::kRunning || !e.decoding()) continue;
    if (step.budget_tokens == 0 || step.sequences_left == 0) break;
    const int32_t blocks = BlocksNeeded(e, 1);
    if (!make_room(i, blocks)) {
      Preempt(step, e);
      continue;
    }
    PlanChunk(step, e, 1, blocks, now_s);
  }
  // 2. Running requests with a partially cached prompt (or recompute stream).
  for (size_t i = 0; i < order.size(); ++i) {
    Entry& e = *order[i];
    if (e.state != RequestState::kRunning || e.in_plan || e.decoding()) continue;
    if (step.budget_tokens == 0 || step.sequences_left == 0) break;
    int64_t n = std::min(e.prefill_len - e.cached, step.budget_tokens);
    int32_t blocks = BlocksNeeded(e, n);
    if (!make_room(i, blocks)) {
      // Shrink to what the free blocks hold (the last block may have room too).
      const int64_t blocks_available = static_cast<int64_t>(kv_->BlockTable(e.request.id).size()) +
                                       kv_->ReservedBlocks(e.request.id) + step.free_blocks(*kv_);
      n = std::min(n, blocks_available * kv_->block_size() - e.cached);
      if (n <= 0) continue;
      blocks = BlocksNeeded(e, n);
    }
    PlanChunk(step, e, n, blocks, now_s);
  }
  // 3. Admission (skipped after a preemption: the freed blocks go to the running requests).
  if (step.plan.preempted.empty()) Admit(step, now_s);
  return std::move(step.plan);
}

}  // namespace hwinfer
