// scheduler.cpp — the scheduler's request lifecycle (scheduler.h): admission control (Add),
// Cancel, Complete (sampled tokens -> outputs, finishing), accessors and CheckInvariants.
// Step planning (Schedule, preemption, batching) lives in scheduler_plan.cpp. Deterministic:
// only ordered containers, no clock other than the |now_s| it is given.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

#include "scheduler/scheduler_entry.h"

namespace hwinfer {

bool Scheduler::WaitKey::operator<(const WaitKey& other) const {
  if (rank != other.rank) return rank > other.rank;  // higher effective priority first
  if (arrival_s != other.arrival_s) return arrival_s < other.arrival_s;
  return id < other.id;
}

Scheduler::Scheduler(const SchedulerOptions& options, KvBlockManager* kv)
    : options_(options), kv_(kv) {}

Scheduler::~Scheduler() = default;

StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const SchedulerOptions& options,
                                                       KvBlockManager* kv) {
  HWINFER_RETURN_IF_ERROR(options.Validate());
  if (kv == nullptr) return InvalidArgument("scheduler needs a KV block manager, got null");
  if (options.kv_reservation == KvReservation::kMaxLength) {
    const int64_t tokens = options.max_model_len;
    const int64_t blocks = tokens / kv->block_size() + (tokens % kv->block_size() != 0 ? 1 : 0);
    if (blocks > kv->num_blocks()) {
      return InvalidArgument(
          "kv_reservation max_length reserves max_model_len (" + std::to_string(tokens) +
          " tokens) per sequence, " + std::to_string(blocks) + " KV blocks of " +
          std::to_string(kv->block_size()) + " tokens, but the cache holds " +
          std::to_string(kv->num_blocks()) + " blocks; use kv_reservation paged or a larger cache");
    }
  }
  return std::unique_ptr<Scheduler>(new Scheduler(options, kv));
}

int32_t Scheduler::ReservationBlocks() const {
  return kv_->BlocksForTokens(options_.max_model_len);  // <= num_blocks: checked by Create
}

int64_t Scheduler::BatchCapacity() const {
  if (options_.kv_reservation != KvReservation::kMaxLength) return options_.max_sequences;
  return std::min<int64_t>(options_.max_sequences, kv_->num_blocks() / ReservationBlocks());
}

Scheduler::Entry* Scheduler::Find(RequestId id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.get();
}

Scheduler::WaitKey Scheduler::KeyOf(const Entry& entry) const {
  const Request& r = entry.request;
  return {static_cast<double>(r.priority) * options_.ageing_s - r.arrival_s, r.arrival_s, r.id};
}

Status CheckFitsModelLength(RequestId id, int64_t prompt_tokens, int64_t max_new_tokens,
                            int64_t max_model_len) {
  if (prompt_tokens <= max_model_len && max_new_tokens <= max_model_len - prompt_tokens) {
    return Status::Ok();
  }
  // Both fit in 63 bits here (callers pass counts of at most 2^62 each); the sum is printed
  // as an unsigned 64-bit number so it cannot wrap.
  const uint64_t total =
      static_cast<uint64_t>(prompt_tokens) + static_cast<uint64_t>(max_new_tokens);
  return OutOfRange("request " + std::to_string(id) + ": prompt (" + std::to_string(prompt_tokens) +
                    ") + max_new_tokens (" + std::to_string(max_new_tokens) +
                    ") = " + std::to_string(total) + " tokens exceeds max_model_len " +
                    std::to_string(max_model_len));
}

Status Scheduler::Add(Request request) {
  const std::string name = "request " + std::to_string(request.id);
  if (request.id < 0) return InvalidArgument(name + ": id must be >= 0");
  if (entries_.count(request.id) != 0) return InvalidArgument(name + ": id already used");
  if (request.prompt.empty()) return InvalidArgument(name + ": prompt is empty");
  if (!std::isfinite(request.arrival_s)) {
    return InvalidArgument(name + ": arrival_s must be finite, got " +
                           std::to_string(request.arrival_s));
  }
  if (request.max_new_tokens <= 0) {
    return InvalidArgument(name + ": max_new_tokens must be > 0, got " +
                           std::to_string(request.max_new_tokens));
  }
  const int64_t prompt = static_cast<int64_t>(request.prompt.size());
  HWINFER_RETURN_IF_ERROR(
      CheckFitsModelLength(request.id, prompt, request.max_new_tokens, options_.max_model_len));
  const int64_t total = prompt + request.max_new_tokens;
  // The last output token is never fed back, so the KV cache holds at most total - 1 tokens.
  const int32_t blocks = kv_->BlocksForTokens(total - 1);
  if (blocks > kv_->num_blocks()) {
    return OutOfRange(name + ": needs " + std::to_string(blocks) + " KV blocks (" +
                      std::to_string(total - 1) + " tokens of " +
                      std::to_string(kv_->block_size()) + " per block), the cache holds " +
                      std::to_string(kv_->num_blocks()));
  }
  auto entry = std::make_unique<Entry>();
  entry->request = std::move(request);
  entry->prefill_len = prompt;
  const WaitKey key = KeyOf(*entry);
  const RequestId id = entry->request.id;
  waiting_.insert(key);
  waiting_by_arrival_.emplace(key.arrival_s, id);
  entries_.emplace(id, std::move(entry));
  return Status::Ok();
}

void Scheduler::RemoveRunning(RequestId id) {
  auto it = std::find(running_.begin(), running_.end(), id);
  if (it != running_.end()) running_.erase(it);
}

void Scheduler::MaybeEndBatch() {
  if (batch_active_ && running_.empty() && front_.empty()) batch_active_ = false;
}

Status Scheduler::Cancel(RequestId id) {
  Entry* e = Find(id);
  if (e == nullptr) return NotFound("request " + std::to_string(id) + " is unknown");
  if (e->state == RequestState::kFinished || e->state == RequestState::kCancelled) {
    return NotFound("request " + std::to_string(id) + " already " +
                    (e->state == RequestState::kFinished ? "finished" : "cancelled"));
  }
  if (e->state == RequestState::kRunning) {
    RemoveRunning(id);
  } else if (waiting_.erase(KeyOf(*e)) != 0) {
    waiting_by_arrival_.erase({e->request.arrival_s, id});
  } else {
    auto it = std::find(front_.begin(), front_.end(), id);
    if (it != front_.end()) front_.erase(it);
  }
  if (kv_->HasSequence(id)) (void)kv_->Release(id);
  e->state = RequestState::kCancelled;
  e->cached = 0;
  MaybeEndBatch();
  return Status::Ok();
}

Status Scheduler::Forget(RequestId id) {
  Entry* e = Find(id);
  if (e == nullptr) return NotFound("request " + std::to_string(id) + " is unknown");
  if (e->state != RequestState::kFinished && e->state != RequestState::kCancelled) {
    return FailedPrecondition("request " + std::to_string(id) + " is still " +
                              (e->state == RequestState::kRunning ? "running" : "waiting"));
  }
  entries_.erase(id);
  return Status::Ok();
}

std::vector<TokenEvent> Scheduler::Complete(const StepPlan& plan,
                                            const std::vector<int32_t>& sampled) {
  assert(sampled.size() >= plan.chunks.size() || plan.chunks.empty());
  std::vector<TokenEvent> events;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const SequenceChunk& chunk = plan.chunks[i];
    Entry* e = Find(plan.requests[i]);
    if (e == nullptr) continue;
    if (e->state != RequestState::kRunning) {
      // Cancelled between Schedule and Complete: drop whatever the executor appended since.
      if (kv_->HasSequence(e->request.id)) (void)kv_->Release(e->request.id);
      continue;
    }
    e->cached += static_cast<int64_t>(chunk.tokens.size());
    if (!chunk.want_logits) continue;
    const int32_t token = i < sampled.size() ? sampled[i] : 0;
    e->output.push_back(token);
    TokenEvent event;
    event.request = e->request.id;
    event.token = token;
    event.index = static_cast<int64_t>(e->output.size()) - 1;
    event.finished = static_cast<int64_t>(e->output.size()) >= e->request.max_new_tokens;
    if (event.finished) {
      e->state = RequestState::kFinished;
      RemoveRunning(e->request.id);
      if (kv_->HasSequence(e->request.id)) (void)kv_->Release(e->request.id);
      e->cached = 0;
    }
    events.push_back(event);
  }
  MaybeEndBatch();
  return events;
}

double Scheduler::NextWakeTime() const {
  if (options_.mode != BatchingMode::kDynamic || batch_active_ || waiting_by_arrival_.empty()) {
    return std::numeric_limits<double>::infinity();
  }
  return waiting_by_arrival_.begin()->first + options_.batch_timeout_s;
}

bool Scheduler::HasUnfinished() const {
  return !waiting_.empty() || !front_.empty() || !running_.empty();
}
int64_t Scheduler::num_waiting() const {
  return static_cast<int64_t>(waiting_.size() + front_.size());
}
int64_t Scheduler::num_running() const { return static_cast<int64_t>(running_.size()); }

RequestState Scheduler::State(RequestId id) const {
  const Entry* e = Find(id);
  return e == nullptr ? RequestState::kCancelled : e->state;
}
bool Scheduler::Has(RequestId id) const { return Find(id) != nullptr; }
const std::vector<int32_t>& Scheduler::Output(RequestId id) const {
  static const std::vector<int32_t> kEmpty;
  const Entry* e = Find(id);
  return e == nullptr ? kEmpty : e->output;
}
int64_t Scheduler::Preemptions(RequestId id) const {
  const Entry* e = Find(id);
  return e == nullptr ? 0 : e->preemptions;
}
double Scheduler::FirstScheduled(RequestId id) const {
  const Entry* e = Find(id);
  return e == nullptr ? -1 : e->first_scheduled_s;
}

Status Scheduler::CheckInvariants() const {
  HWINFER_RETURN_IF_ERROR(kv_->CheckInvariants());
  auto fail = [](RequestId id, const std::string& what) {
    return Internal("scheduler: request " + std::to_string(id) + ": " + what);
  };
  if (static_cast<int64_t>(running_.size()) > options_.max_sequences) {
    return Internal("scheduler: " + std::to_string(running_.size()) +
                    " running requests exceed max_sequences " +
                    std::to_string(options_.max_sequences));
  }
  if (options_.mode != BatchingMode::kContinuous && !batch_active_ &&
      (!running_.empty() || !front_.empty())) {
    return Internal("scheduler: requests run or wait in a batch while no batch is active");
  }
  if (waiting_.size() != waiting_by_arrival_.size()) {
    return Internal("scheduler: waiting queue has " + std::to_string(waiting_.size()) +
                    " entries but its arrival index " + std::to_string(waiting_by_arrival_.size()));
  }
  std::map<RequestId, int> seen;  // id -> how many queues hold it
  for (RequestId id : running_) ++seen[id];
  for (RequestId id : front_) ++seen[id];
  for (const WaitKey& key : waiting_) ++seen[key.id];
  int64_t n_running = 0;
  int64_t n_waiting = 0;
  for (const auto& [id, entry] : entries_) {
    const Entry& e = *entry;
    const int64_t n_out = static_cast<int64_t>(e.output.size());
    const int count = seen.count(id) != 0 ? seen[id] : 0;
    const bool active = e.state == RequestState::kRunning || e.state == RequestState::kWaiting;
    if (count != (active ? 1 : 0)) {
      return fail(
          id, "is held by " + std::to_string(count) + " queues, expected " + (active ? "1" : "0"));
    }
    if (e.state == RequestState::kRunning) {
      ++n_running;
      if (kv_->SequenceTokens(id) != e.cached) {
        return fail(id, "KV cache holds " + std::to_string(kv_->SequenceTokens(id)) +
                            " tokens, scheduler expects " + std::to_string(e.cached));
      }
      const size_t blocks = kv_->BlockTable(id).size();
      if (blocks != static_cast<size_t>(kv_->BlocksForTokens(e.cached))) {
        return fail(id, "holds " + std::to_string(blocks) + " blocks for " +
                            std::to_string(e.cached) + " tokens");
      }
      const bool reserving = options_.kv_reservation == KvReservation::kMaxLength;
      const int64_t claimed = static_cast<int64_t>(blocks) + kv_->ReservedBlocks(id);
      if (reserving ? claimed != ReservationBlocks() : kv_->ReservedBlocks(id) != 0) {
        return fail(id, "holds " + std::to_string(blocks) + " blocks and reserves " +
                            std::to_string(kv_->ReservedBlocks(id)) + " under kv_reservation " +
                            KvReservationName(options_.kv_reservation));
      }
      const int64_t stream = e.prompt_len() + n_out;
      if (e.decoding() ? e.cached != stream - 1 : e.cached > e.prefill_len) {
        return fail(id, "cached " + std::to_string(e.cached) + " tokens of a stream of " +
                            std::to_string(stream) + " (prefill_len " +
                            std::to_string(e.prefill_len) + ")");
      }
    } else if (kv_->HasSequence(id)) {
      return fail(id, "is not running but holds KV blocks");
    }
    if (e.state == RequestState::kWaiting) {
      ++n_waiting;
      if (e.cached != 0 || e.prefill_len != e.prompt_len() + n_out) {
        return fail(id, "waits with cached " + std::to_string(e.cached) + ", prefill_len " +
                            std::to_string(e.prefill_len) + ", expected 0 and prompt + output");
      }
    }
    if (active && n_out >= e.request.max_new_tokens) {
      return fail(id, "is unfinished with " + std::to_string(n_out) + " outputs of " +
                          std::to_string(e.request.max_new_tokens));
    }
    if (e.state == RequestState::kFinished && n_out != e.request.max_new_tokens) {
      return fail(id, "finished with " + std::to_string(n_out) + " outputs, expected " +
                          std::to_string(e.request.max_new_tokens));
    }
  }
  if (n_running != num_running() || n_waiting != num_waiting()) {
    return Internal("scheduler: " + std::to_string(n_running) + " running / " +
                    std::to_string(n_waiting) + " waiting entries, queues hold " +
                    std::to_string(num_running()) + " / " + std::to_string(num_waiting()));
  }
  return Status::Ok();
}

}  // namespace hwinfer
