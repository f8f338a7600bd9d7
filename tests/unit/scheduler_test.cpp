// scheduler_test.cpp — the scheduler's rules, each pinned by a hand-checked plan: decodes before
// prefill chunks, chunk sizes under the token budget, max_sequences, admission errors (codes and
// message text), cancel, preemption by recompute (victim order, re-prefill of prompt + outputs),
// priority order and ageing, static batches waiting to fill and dynamic batches timing out, and
// max_length KV reservation capping the batch by memory in every mode.
// Randomised workloads are in scheduler_property_test.cpp.
#include "hwinfer/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace hwinfer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Request MakeRequest(RequestId id, int prompt_len, int64_t max_new, int priority = 0,
                    double arrival_s = 0) {
  Request r;
  r.id = id;
  r.prompt.resize(static_cast<size_t>(prompt_len));
  std::iota(r.prompt.begin(), r.prompt.end(), static_cast<int32_t>(id * 100));
  r.max_new_tokens = max_new;
  r.priority = priority;
  r.arrival_s = arrival_s;
  return r;
}

std::unique_ptr<Scheduler> MakeScheduler(const SchedulerOptions& options, KvBlockManager* kv) {
  auto s = Scheduler::Create(options, kv);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// Runs |plan| like the executor (appends every chunk to the KV cache), samples token
// 1000 + 10 * id + output index for every chunk and feeds it back.
std::vector<TokenEvent> Execute(Scheduler& s, KvBlockManager& kv, const StepPlan& plan) {
  std::vector<int32_t> sampled;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const SequenceChunk& c = plan.chunks[i];
    EXPECT_TRUE(kv.Append(c.sequence, static_cast<int64_t>(c.tokens.size())).ok());
    sampled.push_back(static_cast<int32_t>(1000 + 10 * c.sequence +
                                           static_cast<int64_t>(s.Output(c.sequence).size())));
  }
  auto events = s.Complete(plan, sampled);
  EXPECT_TRUE(s.CheckInvariants().ok()) << s.CheckInvariants().ToString();
  return events;
}

// Plans and executes steps (one per second from |now_s|, nothing more arriving) until every
// request is done; returns the most requests running at once.
int64_t Drain(Scheduler& s, KvBlockManager& kv, double now_s) {
  int64_t most = 0;
  for (int step = 0; s.HasUnfinished() && step < 1000; ++step) {
    const StepPlan plan = s.Schedule(now_s + step, /*more_arrivals=*/false);
    most = std::max(most, s.num_running());
    Execute(s, kv, plan);
  }
  EXPECT_FALSE(s.HasUnfinished());
  return most;
}

std::vector<size_t> ChunkSizes(const StepPlan& plan) {
  std::vector<size_t> sizes;
  for (const auto& c : plan.chunks) sizes.push_back(c.tokens.size());
  return sizes;
}

TEST(SchedulerOptions, ValidateNamesTheField) {
  SchedulerOptions o;
  o.max_batch_tokens = 0;
  EXPECT_EQ(o.Validate().message(), "max_batch_tokens must be > 0, got 0");
  o = {};
  o.max_sequences = -2;
  EXPECT_EQ(o.Validate().message(), "max_sequences must be > 0, got -2");
  o = {};
  o.ageing_s = 0;
  EXPECT_THAT(o.Validate().message(), HasSubstr("ageing_s must be finite and > 0"));
  o = {};
  o.batch_timeout_s = -1;
  EXPECT_THAT(o.Validate().message(), HasSubstr("batch_timeout_s"));
  KvBlockManager kv(4, 4);
  EXPECT_EQ(Scheduler::Create(SchedulerOptions{}, nullptr).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(SchedulerOptions{}.Validate().ok());
}

TEST(SchedulerOptions, BatchingModeRoundTripsAndRejectsUnknown) {
  for (BatchingMode m :
       {BatchingMode::kContinuous, BatchingMode::kDynamic, BatchingMode::kStatic}) {
    auto parsed = ParseBatchingMode(BatchingModeName(m));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, m);
  }
  auto bad = ParseBatchingMode("greedy");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'greedy'"));
}

TEST(SchedulerOptions, KvReservationRoundTripsAndRejectsUnknown) {
  EXPECT_EQ(SchedulerOptions{}.kv_reservation, KvReservation::kPaged);
  for (KvReservation r : {KvReservation::kPaged, KvReservation::kMaxLength}) {
    auto parsed = ParseKvReservation(KvReservationName(r));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, r);
  }
  EXPECT_STREQ(KvReservationName(KvReservation::kMaxLength), "max_length");
  auto bad = ParseKvReservation("contiguous");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "kv_reservation 'contiguous' is not one of paged, max_length");
  SchedulerOptions o;
  o.kv_reservation = static_cast<KvReservation>(7);
  EXPECT_EQ(o.Validate().message(), "kv_reservation must be paged or max_length, got value 7");
}

TEST(Scheduler, AdmissionRejectsWhatCanNeverRun) {
  KvBlockManager kv(4, 4);  // 16 tokens of KV
  SchedulerOptions o;
  o.max_model_len = 20;
  auto s = MakeScheduler(o, &kv);
  Status st = s->Add(MakeRequest(-1, 2, 1));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "request -1: id must be >= 0");
  Request nan_arrival = MakeRequest(1, 2, 1);
  nan_arrival.arrival_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(s->Add(nan_arrival).message(), HasSubstr("request 1: arrival_s must be finite"));
  st = s->Add(MakeRequest(1, 0, 1));
  EXPECT_EQ(st.message(), "request 1: prompt is empty");
  st = s->Add(MakeRequest(1, 2, 0));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "request 1: max_new_tokens must be > 0, got 0");
  st = s->Add(MakeRequest(1, 15, 6));
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(st.message(),
            "request 1: prompt (15) + max_new_tokens (6) = 21 tokens exceeds max_model_len 20");
  // 12 + 6 - 1 = 17 tokens need 5 blocks of 4; the cache holds 4.
  st = s->Add(MakeRequest(1, 12, 6));
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(st.message(),
            "request 1: needs 5 KV blocks (17 tokens of 4 per block), the cache holds 4");
  EXPECT_FALSE(s->Has(1));
  EXPECT_EQ(s->num_waiting(), 0);
  // Exactly the whole cache fits: 12 + 5 - 1 = 16 tokens.
  EXPECT_TRUE(s->Add(MakeRequest(1, 12, 5)).ok());
  st = s->Add(MakeRequest(1, 2, 1));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "request 1: id already used");
  EXPECT_EQ(s->num_waiting(), 1);
  EXPECT_TRUE(s->CheckInvariants().ok());
}

TEST(Scheduler, PrefillIsChunkedByTheBudgetAndLogitsOnlyOnTheLastChunk) {
  KvBlockManager kv(16, 4);
  SchedulerOptions o;
  o.max_batch_tokens = 4;
  auto s = MakeScheduler(o, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(7, 10, 2)).ok());
  StepPlan p = s->Schedule(0);
  ASSERT_THAT(ChunkSizes(p), ElementsAre(4u));
  EXPECT_THAT(p.chunks[0].tokens, ElementsAre(700, 701, 702, 703));
  EXPECT_FALSE(p.chunks[0].want_logits);
  EXPECT_TRUE(p.is_prefill[0]);
  EXPECT_EQ(p.prefill_tokens, 4);
  EXPECT_TRUE(Execute(*s, kv, p).empty());
  EXPECT_EQ(s->FirstScheduled(7), 0);
  p = s->Schedule(1);
  EXPECT_THAT(p.chunks[0].tokens, ElementsAre(704, 705, 706, 707));
  EXPECT_FALSE(p.chunks[0].want_logits);
  Execute(*s, kv, p);
  p = s->Schedule(2);
  EXPECT_THAT(p.chunks[0].tokens, ElementsAre(708, 709));
  EXPECT_TRUE(p.chunks[0].want_logits);
  auto ev = Execute(*s, kv, p);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].token, 1070);  // the first output comes from the prompt's last chunk
  EXPECT_EQ(ev[0].index, 0);
  EXPECT_FALSE(ev[0].finished);
  // Decode feeds the token just produced.
  p = s->Schedule(3);
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_FALSE(p.is_prefill[0]);
  EXPECT_THAT(p.chunks[0].tokens, ElementsAre(1070));
  EXPECT_TRUE(p.chunks[0].want_logits);
  EXPECT_EQ(p.decode_tokens, 1);
  ev = Execute(*s, kv, p);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].finished);
  EXPECT_THAT(s->Output(7), ElementsAre(1070, 1071));
  EXPECT_EQ(s->State(7), RequestState::kFinished);
  EXPECT_EQ(kv.num_free_blocks(), 16);
  EXPECT_FALSE(s->HasUnfinished());
  EXPECT_TRUE(s->Schedule(4).empty());
}

TEST(Scheduler, DecodesComeFirstThenPrefillGetsTheRestOfTheBudget) {
  KvBlockManager kv(32, 4);
  SchedulerOptions o;
  o.max_batch_tokens = 8;
  auto s = MakeScheduler(o, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(1, 3, 5)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(2, 3, 5)).ok());
  StepPlan p = s->Schedule(0);  // both prompts fit: 3 + 3 tokens
  EXPECT_THAT(p.requests, ElementsAre(1, 2));
  EXPECT_THAT(ChunkSizes(p), ElementsAre(3u, 3u));
  Execute(*s, kv, p);
  ASSERT_TRUE(s->Add(MakeRequest(3, 20, 1, 0, 0.5)).ok());
  p = s->Schedule(1);
  EXPECT_THAT(p.requests, ElementsAre(1, 2, 3));
  EXPECT_THAT(p.is_prefill, ElementsAre(false, false, true));
  EXPECT_THAT(ChunkSizes(p), ElementsAre(1u, 1u, 6u));  // 8 - 2 decodes
  EXPECT_THAT(p.chunks[0].tokens, ElementsAre(1010));
  EXPECT_THAT(p.chunks[1].tokens, ElementsAre(1020));
  EXPECT_EQ(p.decode_tokens, 2);
  EXPECT_EQ(p.prefill_tokens, 6);
  Execute(*s, kv, p);
  // The partly cached prompt continues after the decodes.
  p = s->Schedule(2);
  EXPECT_THAT(p.requests, ElementsAre(1, 2, 3));
  EXPECT_THAT(ChunkSizes(p), ElementsAre(1u, 1u, 6u));
  EXPECT_EQ(p.chunks[2].tokens.front(), 306);
}

TEST(Scheduler, MaxSequencesCapsRunningRequests) {
  KvBlockManager kv(64, 4);
  SchedulerOptions o;
  o.max_sequences = 2;
  auto s = MakeScheduler(o, &kv);
  for (RequestId id = 0; id < 4; ++id) ASSERT_TRUE(s->Add(MakeRequest(id, 2, 3)).ok());
  StepPlan p = s->Schedule(0);
  EXPECT_THAT(p.requests, ElementsAre(0, 1));
  Execute(*s, kv, p);
  p = s->Schedule(1);
  EXPECT_THAT(p.requests, ElementsAre(0, 1));  // decodes; no room for 2 and 3
  EXPECT_EQ(s->num_running(), 2);
  EXPECT_EQ(s->num_waiting(), 2);
  Execute(*s, kv, p);
  Execute(*s, kv, s->Schedule(2));  // 0 and 1 finish (3 outputs)
  EXPECT_EQ(s->State(0), RequestState::kFinished);
  p = s->Schedule(3);
  EXPECT_THAT(p.requests, ElementsAre(2, 3));
}

TEST(Scheduler, AdmissionStopsWhenFreeBlocksRunOut) {
  KvBlockManager kv(3, 4);
  auto s = MakeScheduler(SchedulerOptions{}, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(1, 8, 1)).ok());  // 2 blocks
  ASSERT_TRUE(s->Add(MakeRequest(2, 8, 1)).ok());  // 2 more: only 1 left
  ASSERT_TRUE(s->Add(MakeRequest(3, 2, 1)).ok());  // would fit, but must not jump the queue
  StepPlan p = s->Schedule(0);
  EXPECT_THAT(p.requests, ElementsAre(1));
  Execute(*s, kv, p);  // 1 finishes at once
  p = s->Schedule(1);
  EXPECT_THAT(p.requests, ElementsAre(2, 3));
}

TEST(Scheduler, PriorityOrdersAdmissionAndTiesAreFcfs) {
  KvBlockManager kv(64, 4);
  SchedulerOptions o;
  o.max_sequences = 1;
  o.ageing_s = 1000;
  auto s = MakeScheduler(o, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(10, 2, 1, 0, 0.0)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(11, 2, 1, 5, 0.2)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(12, 2, 1, 5, 0.1)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(9, 2, 1, 0, 0.0)).ok());
  std::vector<RequestId> order;
  for (int step = 0; step < 4; ++step) {
    StepPlan p = s->Schedule(1.0);
    ASSERT_EQ(p.requests.size(), 1u);
    order.push_back(p.requests[0]);
    Execute(*s, kv, p);
  }
  EXPECT_THAT(order, ElementsAre(12, 11, 9, 10));
}

TEST(Scheduler, AgeingLetsAnOldLowPriorityRequestOvertake) {
  KvBlockManager kv(64, 4);
  SchedulerOptions o;
  o.max_sequences = 1;
  o.ageing_s = 1.0;
  auto s = MakeScheduler(o, &kv);
  // At now = 5: request 1 (priority 0, waited 5 s) has effective priority 5, request 2
  // (priority 3, just arrived) 3.
  ASSERT_TRUE(s->Add(MakeRequest(1, 2, 1, 0, 0.0)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(2, 2, 1, 3, 5.0)).ok());
  // A priority 6 request arriving at 5 outranks it (6 > 5).
  ASSERT_TRUE(s->Add(MakeRequest(3, 2, 1, 6, 5.0)).ok());
  std::vector<RequestId> order;
  for (int step = 0; step < 3; ++step) {
    StepPlan p = s->Schedule(5.0);
    ASSERT_EQ(p.requests.size(), 1u);
    order.push_back(p.requests[0]);
    Execute(*s, kv, p);
  }
  EXPECT_THAT(order, ElementsAre(3, 1, 2));
}

TEST(Scheduler, LowPriorityRequestIsServedWithinTheAgeingBound) {
  // One sequence at a time; a priority 4 request arrives every 0.5 s; a priority 0 request that
  // arrived at 0 may only be overtaken by requests arriving before 0 + 4 * ageing_s = 2 s.
  KvBlockManager kv(64, 4);
  SchedulerOptions o;
  o.max_sequences = 1;
  o.ageing_s = 0.5;
  auto s = MakeScheduler(o, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(0, 2, 2, 0, 0.0)).ok());
  RequestId next = 1;
  double now = 0;
  for (int step = 0; step < 200 && s->State(0) == RequestState::kWaiting; ++step) {
    while (0.5 * static_cast<double>(next - 1) <= now) {
      ASSERT_TRUE(s->Add(MakeRequest(next, 2, 2, 4, 0.5 * static_cast<double>(next - 1))).ok());
      ++next;
    }
    Execute(*s, kv, s->Schedule(now));
    now += 0.25;
  }
  ASSERT_NE(s->State(0), RequestState::kWaiting) << "request 0 starved";
  // Overtakers: requests 1..4 (arrivals 0 .. 1.5 < 2 s); request 5 (arrival 2.0) ties and loses.
  for (RequestId id = 1; id <= 4; ++id) {
    EXPECT_GE(s->FirstScheduled(0), s->FirstScheduled(id)) << id;
  }
  for (RequestId id = 5; id < next; ++id) {
    const double t = s->FirstScheduled(id);
    EXPECT_TRUE(t < 0 || t > s->FirstScheduled(0)) << "request " << id << " overtook request 0";
  }
}

TEST(Scheduler, CancelReleasesKvAndRejectsUnknownOrFinished) {
  KvBlockManager kv(8, 4);
  auto s = MakeScheduler(SchedulerOptions{}, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(1, 6, 4)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(2, 2, 1)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(3, 2, 4, 0, 1.0)).ok());
  Execute(*s, kv, s->Schedule(0));  // 1 and 2 and 3 prefilled; 2 finished
  EXPECT_EQ(s->State(2), RequestState::kFinished);
  ASSERT_EQ(s->State(1), RequestState::kRunning);
  EXPECT_EQ(kv.BlockTable(1).size(), 2u);
  ASSERT_TRUE(s->Cancel(1).ok());
  EXPECT_EQ(s->State(1), RequestState::kCancelled);
  EXPECT_FALSE(kv.HasSequence(1));
  EXPECT_EQ(s->Output(1).size(), 1u);  // its tokens so far stay
  EXPECT_EQ(s->Cancel(1).message(), "request 1 already cancelled");
  EXPECT_EQ(s->Cancel(2).message(), "request 2 already finished");
  EXPECT_EQ(s->Cancel(99).code(), StatusCode::kNotFound);
  EXPECT_EQ(s->Cancel(99).message(), "request 99 is unknown");
  ASSERT_TRUE(s->Add(MakeRequest(4, 2, 1, 0, 2.0)).ok());
  ASSERT_TRUE(s->Cancel(4).ok());  // a waiting one
  EXPECT_EQ(s->num_waiting(), 0);
  StepPlan p = s->Schedule(3);
  EXPECT_THAT(p.requests, ElementsAre(3));
  EXPECT_TRUE(s->CheckInvariants().ok());
}

TEST(Scheduler, PreemptionRecomputesPromptPlusOutputsAndResumes) {
  // 3 blocks of 2 tokens. A (priority 1) and B (priority 0) each take a 2-token prompt (1 block);
  // their third decode tokens need a second block each, and then A needs a third.
  KvBlockManager kv(3, 2);
  auto s = MakeScheduler(SchedulerOptions{}, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(1, 2, 5, 1)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(2, 2, 4, 0)).ok());
  Execute(*s, kv, s->Schedule(0));  // prefill both: 1 block each, outputs 1010 / 1020
  // Decodes: A takes the last free block; B needs one too and nothing ranks below it, so B
  // preempts itself (its KV is released, it waits at the front).
  StepPlan first = s->Schedule(1);
  EXPECT_THAT(first.requests, ElementsAre(1));
  EXPECT_THAT(first.preempted, ElementsAre(2));
  Execute(*s, kv, first);
  EXPECT_EQ(s->num_preemptions(), 1);
  EXPECT_EQ(s->Preemptions(2), 1);
  EXPECT_EQ(s->State(2), RequestState::kWaiting);
  EXPECT_EQ(s->Output(2).size(), 1u);
  EXPECT_FALSE(kv.HasSequence(2));
  // A runs alone until it finishes; B then re-prefills prompt + its output so far.
  StepPlan p;
  for (int step = 2; step < 20 && s->State(1) == RequestState::kRunning; ++step) {
    p = s->Schedule(step);
    EXPECT_THAT(p.requests, ElementsAre(1));
    Execute(*s, kv, p);
  }
  EXPECT_THAT(s->Output(1), ElementsAre(1010, 1011, 1012, 1013, 1014));
  p = s->Schedule(30);
  ASSERT_THAT(p.requests, ElementsAre(2));
  EXPECT_TRUE(p.is_prefill[0]);
  EXPECT_THAT(p.chunks[0].tokens, ElementsAre(200, 201, 1020));
  EXPECT_TRUE(p.chunks[0].want_logits);
  auto ev = Execute(*s, kv, p);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].index, 1);  // the next new token, nothing repeated
  while (s->HasUnfinished()) Execute(*s, kv, s->Schedule(40));
  EXPECT_THAT(s->Output(2), ElementsAre(1020, 1021, 1022, 1023));
  EXPECT_EQ(kv.num_free_blocks(), 3);
}

TEST(Scheduler, PreemptionPicksLatestArrivalAmongEqualPriorities) {
  KvBlockManager kv(3, 2);
  auto s = MakeScheduler(SchedulerOptions{}, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(5, 2, 3, 0, 0.0)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(4, 2, 3, 0, 0.1)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(3, 2, 3, 0, 0.1)).ok());
  Execute(*s, kv, s->Schedule(1));  // three prompts, one block each: cache full
  // Order: 5 (earliest), 3, 4 (same arrival, lower id first). 5's decode needs a block: the
  // victim is the bottom, 4. Then 3 needs one, nothing ranks below it: it preempts itself.
  StepPlan p = s->Schedule(2);
  EXPECT_THAT(p.preempted, ElementsAre(4, 3));
  EXPECT_THAT(p.requests, ElementsAre(5));
  EXPECT_EQ(s->num_preemptions(), 2);
  Execute(*s, kv, p);
  // No admission in a step that preempted; afterwards the preempted go first, 3 before 4.
  EXPECT_EQ(s->num_waiting(), 2);
}

TEST(Scheduler, PartialPrefillShrinksToFreeBlocksThenIsPreemptedByAHigherDecode) {
  // 4 blocks of 4 tokens, budget 8. A (priority 1): prompt 4, 9 outputs (12 tokens, 3 blocks).
  // B (priority 0): prompt 12, 1 output (3 blocks). Together they need 6 blocks.
  KvBlockManager kv(4, 4);
  SchedulerOptions o;
  o.max_batch_tokens = 8;
  auto s = MakeScheduler(o, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(1, 4, 9, 1)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(2, 12, 1, 0)).ok());
  StepPlan p = s->Schedule(0);  // A's whole prompt, then B's first 4 tokens: 1 block each
  EXPECT_THAT(p.requests, ElementsAre(1, 2));
  EXPECT_THAT(ChunkSizes(p), ElementsAre(4u, 4u));
  EXPECT_THAT(p.chunks[1].tokens, ElementsAre(200, 201, 202, 203));
  Execute(*s, kv, p);
  // A's decode takes a block (1 left); B would like 7 tokens (2 blocks) but gets 4 (1 block).
  p = s->Schedule(1);
  EXPECT_THAT(p.requests, ElementsAre(1, 2));
  EXPECT_THAT(ChunkSizes(p), ElementsAre(1u, 4u));
  EXPECT_THAT(p.chunks[1].tokens, ElementsAre(204, 205, 206, 207));
  EXPECT_FALSE(p.chunks[1].want_logits);
  Execute(*s, kv, p);
  // No block left for B: it waits, holding its 2 blocks, while A decodes within its block.
  for (int step = 2; step <= 4; ++step) {
    p = s->Schedule(step);
    EXPECT_THAT(p.requests, ElementsAre(1)) << step;
    EXPECT_TRUE(p.preempted.empty());
    Execute(*s, kv, p);
  }
  // A's next token needs a fourth block: B, below it, is preempted (recompute from scratch).
  p = s->Schedule(5);
  EXPECT_THAT(p.requests, ElementsAre(1));
  EXPECT_THAT(p.preempted, ElementsAre(2));
  EXPECT_EQ(s->Preemptions(2), 1);
  Execute(*s, kv, p);
  double now = 6;
  while (s->HasUnfinished()) Execute(*s, kv, s->Schedule(now++));
  EXPECT_EQ(s->Output(1).size(), 9u);
  EXPECT_THAT(s->Output(2), ElementsAre(1020));
  EXPECT_EQ(kv.num_free_blocks(), 4);
}

TEST(Scheduler, CancelBetweenScheduleAndCompleteDropsTheChunk) {
  KvBlockManager kv(8, 4);
  auto s = MakeScheduler(SchedulerOptions{}, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(1, 5, 3)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(2, 5, 3)).ok());
  StepPlan p = s->Schedule(0);
  ASSERT_EQ(p.chunks.size(), 2u);
  // 1 is cancelled after the executor ran the step, 2 before (the executor appends it anyway).
  ASSERT_TRUE(kv.Append(1, 5).ok());
  ASSERT_TRUE(s->Cancel(1).ok());
  ASSERT_TRUE(s->Cancel(2).ok());
  ASSERT_TRUE(kv.Append(2, 5).ok());
  EXPECT_TRUE(s->Complete(p, {7, 8}).empty());
  EXPECT_FALSE(kv.HasSequence(1));
  EXPECT_FALSE(kv.HasSequence(2));
  EXPECT_TRUE(s->Output(1).empty());
  EXPECT_EQ(kv.num_free_blocks(), 8);
  EXPECT_TRUE(s->CheckInvariants().ok()) << s->CheckInvariants().ToString();
  EXPECT_FALSE(s->HasUnfinished());
}

TEST(Scheduler, StaticBatchWaitsForAFullBatchAndRunsToCompletion) {
  KvBlockManager kv(64, 4);
  SchedulerOptions o;
  o.mode = BatchingMode::kStatic;
  o.max_sequences = 2;
  auto s = MakeScheduler(o, &kv);
  ASSERT_TRUE(s->Add(MakeRequest(1, 2, 2)).ok());
  EXPECT_TRUE(s->Schedule(0).empty());
  EXPECT_EQ(s->NextWakeTime(), std::numeric_limits<double>::infinity());
  ASSERT_TRUE(s->Add(MakeRequest(2, 2, 3)).ok());
  StepPlan p = s->Schedule(1);
  EXPECT_THAT(p.requests, ElementsAre(1, 2));
  Execute(*s, kv, p);
  ASSERT_TRUE(s->Add(MakeRequest(3, 2, 1, 9, 1.5)).ok());  // no admission into the batch
  p = s->Schedule(2);
  EXPECT_THAT(p.requests, ElementsAre(1, 2));
  Execute(*s, kv, p);  // 1 finishes
  p = s->Schedule(3);
  EXPECT_THAT(p.requests, ElementsAre(2));  // 3 still waits for the batch to end
  Execute(*s, kv, p);
  // Batch over; 3 alone waits for a full batch until nothing more can arrive.
  EXPECT_TRUE(s->Schedule(4).empty());
  p = s->Schedule(5, /*more_arrivals=*/false);
  EXPECT_THAT(p.requests, ElementsAre(3));
}

TEST(Scheduler, DynamicBatchStartsWhenTheOldestRequestTimesOut) {
  KvBlockManager kv(64, 4);
  SchedulerOptions o;
  o.mode = BatchingMode::kDynamic;
  o.max_sequences = 4;
  o.batch_timeout_s = 0.5;
  auto s = MakeScheduler(o, &kv);
  EXPECT_EQ(s->NextWakeTime(), std::numeric_limits<double>::infinity());
  ASSERT_TRUE(s->Add(MakeRequest(1, 2, 2, 0, 1.0)).ok());
  ASSERT_TRUE(s->Add(MakeRequest(2, 2, 2, 0, 1.2)).ok());
  EXPECT_DOUBLE_EQ(s->NextWakeTime(), 1.5);
  EXPECT_TRUE(s->Schedule(1.4).empty());
  StepPlan p = s->Schedule(1.5);
  EXPECT_THAT(p.requests, ElementsAre(1, 2));
  EXPECT_EQ(s->NextWakeTime(), std::numeric_limits<double>::infinity());  // batch running
  Execute(*s, kv, p);
  ASSERT_TRUE(s->Add(MakeRequest(3, 2, 2, 0, 1.6)).ok());
  p = s->Schedule(1.7);
  EXPECT_THAT(p.requests, ElementsAre(1, 2));
  Execute(*s, kv, p);  // both finish: the batch ends
  EXPECT_DOUBLE_EQ(s->NextWakeTime(), 2.1);
  EXPECT_TRUE(s->Schedule(2.0).empty());
  EXPECT_THAT(s->Schedule(s->NextWakeTime()).requests, ElementsAre(3));
}

TEST(Scheduler, ThousandsWaitingAdmitOnlyUpToMaxSequences) {
  // Batch 256 with 4000 waiting: admission takes the best 256, decodes keep all 256 running, and
  // the rest stay queued in order (the cost of a step does not depend on the queue length).
  KvBlockManager kv(4096, 16);
  SchedulerOptions o;
  o.max_sequences = 256;
  o.max_batch_tokens = 8192;
  auto s = MakeScheduler(o, &kv);
  for (RequestId id = 0; id < 4000; ++id) {
    ASSERT_TRUE(
        s->Add(MakeRequest(id, 16, 4, static_cast<int>(id % 4), 0.001 * static_cast<double>(id)))
            .ok());
  }
  StepPlan p = s->Schedule(5);
  ASSERT_EQ(p.chunks.size(), 256u);
  EXPECT_EQ(p.prefill_tokens, 256 * 16);
  EXPECT_EQ(p.requests.front(), 3);  // priority 3, earliest arrival
  Execute(*s, kv, p);
  p = s->Schedule(6);
  EXPECT_EQ(p.decode_tokens, 256);
  EXPECT_EQ(p.prefill_tokens, 0);
  EXPECT_EQ(s->num_waiting(), 4000 - 256);
}

TEST(Scheduler, MaxLengthReservationLargerThanTheCacheIsRefused) {
  KvBlockManager kv(5, 4);  // 20 tokens of KV
  SchedulerOptions o;
  o.max_model_len = 24;  // 6 blocks
  o.kv_reservation = KvReservation::kMaxLength;
  auto refused = Scheduler::Create(o, &kv);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "kv_reservation max_length reserves max_model_len (24 tokens) per sequence, 6 KV "
            "blocks of 4 tokens, but the cache holds 5 blocks; use kv_reservation paged or a "
            "larger cache");
  o.max_model_len = 20;  // exactly the cache: one sequence at a time
  EXPECT_TRUE(Scheduler::Create(o, &kv).ok());
  o.max_model_len = 24;
  o.kv_reservation = KvReservation::kPaged;  // paged takes blocks as tokens come
  EXPECT_TRUE(Scheduler::Create(o, &kv).ok());
}

// The reservation tests' cache: kReservationCacheBlocks blocks of 4 tokens, where a reservation of
// max_model_len 24 tokens is 6 blocks, so 20 / 6 = 3 requests fit at a time; up to 8 sequences.
constexpr int32_t kReservationCacheBlocks = 20;
SchedulerOptions ReservationOptions(BatchingMode mode, KvReservation reservation) {
  SchedulerOptions o;
  o.mode = mode;
  o.kv_reservation = reservation;
  o.max_sequences = 8;
  o.max_batch_tokens = 64;
  o.max_model_len = 24;
  o.batch_timeout_s = 0;  // dynamic: a batch starts at once
  return o;
}

TEST(Scheduler, MaxLengthAdmitsOnlyWholeReservationsAndTheirBlocksCountAsUsed) {
  // 3 reservations at a time, where paged admits all 8 requests (one block each).
  for (KvReservation reservation : {KvReservation::kPaged, KvReservation::kMaxLength}) {
    SCOPED_TRACE(KvReservationName(reservation));
    const bool reserving = reservation == KvReservation::kMaxLength;
    KvBlockManager kv(kReservationCacheBlocks, 4);
    auto s = MakeScheduler(ReservationOptions(BatchingMode::kDynamic, reservation), &kv);
    for (RequestId id = 1; id <= 8; ++id) ASSERT_TRUE(s->Add(MakeRequest(id, 4, 3)).ok());
    const StepPlan p = s->Schedule(0);
    if (reserving) {
      EXPECT_THAT(p.requests, ElementsAre(1, 2, 3));
      EXPECT_EQ(kv.num_used_blocks(), 18) << "the reservations are taken at admission";
      EXPECT_EQ(kv.ReservedBlocks(1), 6);
    } else {
      EXPECT_EQ(p.requests.size(), 8u);
      EXPECT_EQ(kv.num_used_blocks(), 0) << "paged blocks are taken by the executor's append";
    }
    Execute(*s, kv, p);
    EXPECT_EQ(kv.TotalTokens(), reserving ? 12 : 32);
    EXPECT_EQ(kv.num_used_blocks(), reserving ? 18 : 8);
    EXPECT_EQ(kv.ReservedBlocks(1), reserving ? 5 : 0);
    // A request never outgrows its reservation: nothing is preempted, and batches of 3 follow.
    EXPECT_EQ(Drain(*s, kv, 1), reserving ? 3 : 8);
    EXPECT_EQ(s->num_preemptions(), 0);
    for (RequestId id = 1; id <= 8; ++id) EXPECT_EQ(s->Output(id).size(), 3u) << id;
    EXPECT_EQ(kv.num_used_blocks(), 0);
  }
}

TEST(Scheduler, MaxLengthStaticBatchIsFullAtWhatTheCacheHolds) {
  for (KvReservation reservation : {KvReservation::kPaged, KvReservation::kMaxLength}) {
    SCOPED_TRACE(KvReservationName(reservation));
    KvBlockManager kv(kReservationCacheBlocks, 4);
    auto s = MakeScheduler(ReservationOptions(BatchingMode::kStatic, reservation), &kv);
    for (RequestId id = 1; id <= 4; ++id) ASSERT_TRUE(s->Add(MakeRequest(id, 2, 2)).ok());
    StepPlan p = s->Schedule(0);  // more may arrive
    if (reservation == KvReservation::kPaged) {
      EXPECT_TRUE(p.empty()) << "paged: a static batch waits for max_sequences (8) requests";
      continue;
    }
    EXPECT_THAT(p.requests, ElementsAre(1, 2, 3)) << "a batch of 3 reservations is full";
    Execute(*s, kv, p);  // 1, 2 and 3 have their first token
    p = s->Schedule(1);
    EXPECT_THAT(p.requests, ElementsAre(1, 2, 3));
    Execute(*s, kv, p);                   // the batch finishes
    EXPECT_TRUE(s->Schedule(2).empty());  // 4 alone: waits for a full batch
    EXPECT_THAT(s->Schedule(3, /*more_arrivals=*/false).requests, ElementsAre(4));
  }
}

TEST(Scheduler, MaxLengthAppliesToContinuousBatchingToo) {
  // 5 requests of 8 + 16 tokens (6 blocks of 4 at their largest): paged admits all five and
  // preempts as they grow; max_length runs 3, admits the others as those finish, and never
  // preempts.
  for (KvReservation reservation : {KvReservation::kPaged, KvReservation::kMaxLength}) {
    SCOPED_TRACE(KvReservationName(reservation));
    const bool reserving = reservation == KvReservation::kMaxLength;
    KvBlockManager kv(kReservationCacheBlocks, 4);
    auto s = MakeScheduler(ReservationOptions(BatchingMode::kContinuous, reservation), &kv);
    for (RequestId id = 1; id <= 5; ++id) ASSERT_TRUE(s->Add(MakeRequest(id, 8, 16)).ok());
    const StepPlan first = s->Schedule(0);
    EXPECT_EQ(first.requests.size(), reserving ? 3u : 5u);
    Execute(*s, kv, first);
    EXPECT_EQ(Drain(*s, kv, 1), reserving ? 3 : 5);
    if (reserving) {
      EXPECT_EQ(s->num_preemptions(), 0);
    } else {
      EXPECT_GT(s->num_preemptions(), 0);
    }
    for (RequestId id = 1; id <= 5; ++id) EXPECT_EQ(s->Output(id).size(), 16u) << id;
  }
}

}  // namespace
}  // namespace hwinfer
