// hwinfer/scheduler.h — one request scheduler for every backend (DESIGN section 4): a pure state
// machine with an injected clock that decides, step by step, which sequences run and how many
// tokens each one feeds, over the core's paged KV cache (KvBlockManager).
//
// Continuous batching (iteration level, vLLM / Orca style), per Schedule(now):
//   1. running decodes first: each running request that has its prompt cached feeds its last
//      output token (one token, one KV slot); when the KV cache has no block for it, the victim
//      (lowest priority, then latest arrival, then highest id, among the running requests ranked
//      below the one being served and not yet planned this step; the request itself when none is)
//      is preempted by recompute: its KV blocks are released, it goes back to the front of the
//      waiting queue and later re-prefills prompt + the tokens it already produced, so it
//      resumes exactly where it stopped (no output token is lost or repeated);
//   2. then prefill chunks (chunked prefill) for requests whose prompt is partly cached, then for
//      waiting requests in order of effective priority (priority + waited / ageing_s, ties FCFS),
//      while the token budget (max_batch_tokens), the sequence cap (max_sequences) and free KV
//      blocks allow. No request is admitted in a step that preempted one (that would thrash).
// Ageing bound: two waiting requests' effective priorities differ by a constant, so the queue
// order never changes while they wait; a request R (priority p_R, arrival a_R) is overtaken by a
// later request X only if a_X - a_R <= (p_X - p_R) * ageing_s. With priorities <= p_max, only the
// finitely many requests that arrive before a_R + (p_max - p_R) * ageing_s (and preempted ones)
// can be admitted before R: no request starves.
// Static batching: a batch of up to max_sequences requests is formed only from requests present
// when the previous batch has fully finished, and it runs to completion (waits for a full batch
// unless nothing more can arrive: Schedule is told via |more_arrivals|). Dynamic batching: like
// static, but a partial batch starts once its oldest request has waited batch_timeout_s.
// Both still use the token budget for prefill chunks; neither admits into a running batch.
//
// KV reservation (SchedulerOptions::kv_reservation): paged (the default) takes KV blocks as a
// request's tokens arrive. max_length reserves, when a request is admitted, the blocks of
// max_model_len tokens (KvBlockManager::Reserve) and holds them until it finishes, as servers that
// give every sequence a contiguous buffer of the model's maximum length do: at most
// kv.num_blocks() / blocks(max_model_len) requests run at once, a static/dynamic batch holds at
// most that many (and counts as full at that size), and nothing is ever preempted (a request never
// outgrows its reservation). It applies the same way in all three modes. Create refuses it when
// one reservation is larger than the whole cache.
//
// Admission (Add) rejects at once a request that can never fit: prompt + max_new_tokens over
// max_model_len, or more KV blocks than the whole cache holds, or an empty prompt / zero
// max_new_tokens. The KV manager is shared with the executor: the executor's Step appends the
// planned tokens (LlamaExecutor::Step -> KvBlockManager::Append); the scheduler plans against the
// manager's free blocks and releases the sequences it preempts, cancels or finishes.
//
// Sequence ids handed to the executor are the request ids. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hwinfer/kv_block_manager.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/status.h"

namespace hwinfer {

using RequestId = int64_t;

enum class BatchingMode { kContinuous = 0, kDynamic = 1, kStatic = 2 };
// "continuous" | "dynamic" | "static"; and back. Parse returns InvalidArgument naming the value.
const char* BatchingModeName(BatchingMode mode);
StatusOr<BatchingMode> ParseBatchingMode(const std::string& text);

enum class KvReservation { kPaged = 0, kMaxLength = 1 };
// "paged" | "max_length"; and back. Parse returns InvalidArgument naming the value.
const char* KvReservationName(KvReservation reservation);
StatusOr<KvReservation> ParseKvReservation(const std::string& text);

struct SchedulerOptions {
  BatchingMode mode = BatchingMode::kContinuous;
  KvReservation kv_reservation = KvReservation::kPaged;  // see the header comment
  int64_t max_batch_tokens = 512;  // token budget per step (decode tokens + prefill chunk tokens)
  int64_t max_sequences = 16;      // sequences per step; also the static/dynamic batch size
  int64_t max_model_len = 2048;    // prompt + max_new_tokens may not exceed it
  double batch_timeout_s = 0.05;   // dynamic batching: start a partial batch after this wait
  double ageing_s = 1.0;           // a waiting request gains one priority level per ageing_s
  // InvalidArgument naming the field ("max_batch_tokens must be > 0, got 0").
  Status Validate() const;
};

struct Request {
  RequestId id = 0;             // unique, >= 0
  std::vector<int32_t> prompt;  // non-empty
  int64_t max_new_tokens = 1;   // output tokens to produce (> 0); EOS is not special
  int priority = 0;             // higher runs first; equal priorities are FCFS
  double arrival_s = 0;         // when it arrived (the clock of Schedule)
};

// OutOfRange "request ID: prompt (P) + max_new_tokens (N) = T tokens exceeds max_model_len M"
// when a request can never fit the model's length (overflow-safe for any P and N >= 0).
Status CheckFitsModelLength(RequestId id, int64_t prompt_tokens, int64_t max_new_tokens,
                            int64_t max_model_len);

// One step's plan. chunks[i] belongs to requests[i]; the executor runs them as one Step.
struct StepPlan {
  std::vector<SequenceChunk> chunks;
  std::vector<RequestId> requests;
  std::vector<bool> is_prefill;      // chunk i is a prefill chunk (else one decode token)
  std::vector<RequestId> preempted;  // preempted (KV released) while planning this step
  int64_t prefill_tokens = 0;
  int64_t decode_tokens = 0;
  bool empty() const { return chunks.empty(); }
};

// What Complete reports for each chunk that produced a token.
struct TokenEvent {
  RequestId request = 0;
  int32_t token = 0;
  int64_t index = 0;      // 0 for the first output token
  bool finished = false;  // the request reached max_new_tokens (its KV is released)
};

enum class RequestState { kWaiting, kRunning, kFinished, kCancelled };

class Scheduler {
 public:
  // |kv| must outlive the scheduler (the executor's manager, or a test's). Errors: Validate's, a
  // null |kv|, and InvalidArgument when kv_reservation max_length would reserve more blocks than
  // |kv| holds (naming both).
  static StatusOr<std::unique_ptr<Scheduler>> Create(const SchedulerOptions& options,
                                                     KvBlockManager* kv);
  ~Scheduler();  // out of line: Entry is defined in the .cpp

  // Queues a request (its arrival_s should be <= the next Schedule's now). Errors, with the
  // request id and the numbers: InvalidArgument (empty prompt, max_new_tokens <= 0, negative id,
  // id used before), OutOfRange (can never fit: prompt + max_new_tokens > max_model_len, or the
  // blocks of its largest KV footprint, prompt + max_new_tokens - 1 tokens, > the cache's). A
  // rejected request leaves no state behind. (status.h has no AlreadyExists/ResourceExhausted.)
  Status Add(Request request);

  // Drops a waiting or running request and releases its KV; NotFound for an unknown or already
  // finished one. Its tokens so far stay in Output().
  Status Cancel(RequestId id);

  // Plans the next step at time |now_s|. |more_arrivals| = requests may still be Added later
  // (static/dynamic batching wait for a full batch only while it is true). An empty plan means
  // nothing can run now (idle, or a dynamic batch still waiting: see NextWakeTime).
  StepPlan Schedule(double now_s, bool more_arrivals = true);

  // Feeds back the step's sampled tokens: |sampled|[i] is the token of chunks[i] (ignored for
  // chunks that did not want logits). Finished requests release their KV here. Every non-empty
  // plan must be completed, after the executor appended its chunks, before the next Schedule.
  std::vector<TokenEvent> Complete(const StepPlan& plan, const std::vector<int32_t>& sampled);

  // Drops the record of a finished or cancelled request (its Output and times), so a long-running
  // server does not keep every request it ever served; FailedPrecondition for one still waiting
  // or running, NotFound for an unknown one.
  Status Forget(RequestId id);

  // When a dynamic batch's timeout expires (infinity when nothing waits on a timeout).
  double NextWakeTime() const;

  bool HasUnfinished() const;  // anything waiting or running
  int64_t num_waiting() const;
  int64_t num_running() const;
  int64_t num_preemptions() const { return preemptions_; }
  RequestState State(RequestId id) const;  // kCancelled for unknown ids (check Has)
  bool Has(RequestId id) const;
  const std::vector<int32_t>& Output(RequestId id) const;  // output tokens so far
  int64_t Preemptions(RequestId id) const;
  // The first time the request was scheduled (-1 before), for queue-time metrics.
  double FirstScheduled(RequestId id) const;
  const SchedulerOptions& options() const { return options_; }
  const KvBlockManager& kv() const { return *kv_; }

  // Checks the scheduler's own invariants and the KV manager's (every running request's cached
  // tokens match its block table, waiting requests hold no blocks); Internal naming the first
  // violation. For tests.
  Status CheckInvariants() const;

 private:
  struct Entry;
  // Waiting-queue order: effective priority priority + (now - arrival_s) / ageing_s, highest
  // first, ties by arrival then id. Since now is common to all, rank = priority * ageing_s -
  // arrival_s orders the same way and never changes while a request waits.
  struct WaitKey {
    double rank = 0;
    double arrival_s = 0;
    RequestId id = 0;
    bool operator<(const WaitKey& other) const;
  };
  struct StepState;  // one Schedule call's budget, free blocks and plan (scheduler_entry.h)

  Scheduler(const SchedulerOptions& options, KvBlockManager* kv);
  Entry* Find(RequestId id) const;
  WaitKey KeyOf(const Entry& entry) const;
  // Static/dynamic: starts a batch from the best waiting requests when the mode's rule allows.
  void MaybeStartBatch(double now_s, bool more_arrivals);
  // Requests a static/dynamic batch holds: max_sequences, fewer under max_length reservation.
  int64_t BatchCapacity() const;
  // Blocks one max_length reservation takes (the blocks of max_model_len tokens).
  int32_t ReservationBlocks() const;
  void MaybeEndBatch();
  // Plans one chunk of |n| tokens of |entry|'s token stream (prompt + output) from its cached
  // position; |blocks| new KV blocks.
  void PlanChunk(StepState& step, Entry& entry, int64_t n, int32_t blocks, double now_s);
  // Blocks |entry| needs for |n| more tokens beyond what it holds.
  int32_t BlocksNeeded(const Entry& entry, int64_t n) const;
  // Releases |entry|'s KV and puts it at the front of the queue (preemption by recompute).
  void Preempt(StepState& step, Entry& entry);
  void RemoveRunning(RequestId id);
  void Admit(StepState& step, double now_s);

  SchedulerOptions options_;
  KvBlockManager* kv_;
  std::map<RequestId, std::unique_ptr<Entry>> entries_;        // every request ever added
  std::set<WaitKey> waiting_;                                  // not yet admitted, queue order
  std::set<std::pair<double, RequestId>> waiting_by_arrival_;  // same requests, oldest first
  // Admitted before waiting_: preempted requests (front = next), and in static/dynamic mode the
  // current batch's members that are not running.
  std::deque<RequestId> front_;
  std::vector<RequestId> running_;  // holding KV (or about to), at most max_sequences
  int64_t preemptions_ = 0;
  bool batch_active_ = false;  // static/dynamic: a batch is running to completion
};

}  // namespace hwinfer
