// serving_engine.cpp — see hwinfer/serving_engine.h. The worker thread is the only user of the
// executor, the scheduler and the samplers; mutex_ guards what client threads share with it (the
// inbox, the cancellations, the live requests, the metrics). The step itself runs unlocked.
#include "hwinfer/serving_engine.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "hwinfer/bench_runner.h"

namespace hwinfer {

namespace {

// How many requests that ended by length are remembered for a client's late Stop: far more than
// can be in flight between the engine ending one and its client reading the last tokens.
constexpr size_t kRecentLengthEnds = 4096;

}  // namespace

// A submitted request the engine has not finished yet.
struct ServingEngine::Live {
  std::shared_ptr<RequestStream> stream;
  Sampler sampler;
  std::set<int32_t> stop_tokens;
  double arrival_s = 0;
  double last_token_s = 0;
  int64_t tokens = 0;
  int64_t budget = 0;  // prompt + max_tokens
};

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kError:
      return "error";
    case FinishReason::kNone:
      break;
  }
  return "";
}

StreamUpdate RequestStream::Wait(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return !pending_.empty() || (finish_ != FinishReason::kNone && !finish_delivered_);
  });
  StreamUpdate update;
  update.tokens.swap(pending_);
  if (finish_ != FinishReason::kNone) {
    update.finish = finish_;
    update.error = error_;
    finish_delivered_ = true;
  }
  return update;
}

void RequestStream::Push(int32_t token, FinishReason finish) {
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(token);
    if (finish_ == FinishReason::kNone) finish_ = finish;
  }
  changed_.notify_all();
}

void RequestStream::Finish(FinishReason reason, std::string error) {
  {
    std::lock_guard lock(mutex_);
    if (finish_ != FinishReason::kNone) return;
    finish_ = reason;
    error_ = std::move(error);
  }
  changed_.notify_all();
}

StatusOr<std::unique_ptr<ServingEngine>> ServingEngine::Create(
    std::shared_ptr<Device> device, std::shared_ptr<const LlamaModel> model,
    const EngineOptions& options) {
  if (device == nullptr || model == nullptr)
    return InvalidArgument("ServingEngine: no device or model");
  if (options.first_request_id < 0 || options.request_id_step <= 0) {
    return InvalidArgument("ServingEngine: request ids must start at >= 0 and step by > 0");
  }
  std::unique_ptr<ServingEngine> engine(new ServingEngine());
  engine->options_ = options;
  engine->next_id_ = options.first_request_id;
  engine->scheduler_options_ = options.scheduler;
  if (engine->scheduler_options_.max_model_len <= 0) {
    engine->scheduler_options_.max_model_len = model->shape().context_length;
  }
  engine->scheduler_options_.max_model_len =
      std::min(engine->scheduler_options_.max_model_len, model->shape().context_length);
  if (engine->options_.max_waiting <= 0) {
    engine->options_.max_waiting = 4 * options.scheduler.max_sequences;
  }
  if (options.collective != nullptr) {
    HWINFER_ASSIGN_OR_RETURN(
        engine->executor_,
        LlamaExecutor::CreateTensorParallel(device, model, options.executor, options.collective));
  } else {
    HWINFER_ASSIGN_OR_RETURN(engine->executor_,
                             LlamaExecutor::Create(device, model, options.executor));
  }
  HWINFER_ASSIGN_OR_RETURN(engine->scheduler_, Scheduler::Create(engine->scheduler_options_,
                                                                 engine->executor_->mutable_kv()));
  engine->device_ = std::move(device);
  engine->model_ = std::move(model);
  engine->start_ = std::chrono::steady_clock::now();
  engine->worker_ = std::thread([e = engine.get()] { e->Run(); });
  return engine;
}

ServingEngine::~ServingEngine() { Shutdown(0); }

double ServingEngine::Now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

StatusOr<std::shared_ptr<RequestStream>> ServingEngine::Submit(ServeRequest request) {
  const int64_t vocab = model_->shape().vocab_size;
  if (request.prompt.empty()) return InvalidArgument("the prompt is empty");
  for (size_t i = 0; i < request.prompt.size(); ++i) {
    if (request.prompt[i] < 0 || request.prompt[i] >= vocab) {
      return InvalidArgument("prompt token " + std::to_string(i) + " = " +
                             std::to_string(request.prompt[i]) + " is outside the vocabulary [0, " +
                             std::to_string(vocab) + ")");
    }
  }
  if (request.max_tokens <= 0) {
    return InvalidArgument("max_tokens must be > 0, got " + std::to_string(request.max_tokens));
  }
  HWINFER_RETURN_IF_ERROR(request.sampling.Validate());
  const auto prompt_tokens = static_cast<int64_t>(request.prompt.size());
  std::lock_guard lock(mutex_);
  const RequestId id = next_id_;
  HWINFER_RETURN_IF_ERROR(CheckFitsModelLength(id, prompt_tokens, request.max_tokens,
                                               scheduler_options_.max_model_len));
  const int64_t block = executor_->kv().block_size();
  const int64_t blocks = (prompt_tokens + request.max_tokens - 1 + block - 1) / block;
  if (blocks > executor_->kv().num_blocks()) {
    return OutOfRange("request of " + std::to_string(prompt_tokens + request.max_tokens) +
                      " tokens needs " + std::to_string(blocks) + " KV blocks; the cache has " +
                      std::to_string(executor_->kv().num_blocks()));
  }
  if (!accepting_) return Unavailable("the server is shutting down");
  if (static_cast<int64_t>(inbox_.size()) + metrics_.requests_waiting >= options_.max_waiting) {
    ++metrics_.requests_rejected;
    return Unavailable("the queue is full (" + std::to_string(options_.max_waiting) +
                       " requests waiting); retry later");
  }
  next_id_ += options_.request_id_step;
  auto live = std::make_shared<Live>(Live{std::make_shared<RequestStream>(id),
                                          Sampler(request.sampling),
                                          {request.stop_tokens.begin(), request.stop_tokens.end()},
                                          Now(),
                                          0,
                                          0,
                                          prompt_tokens + request.max_tokens});
  inbox_.emplace_back(
      Request{id, std::move(request.prompt), request.max_tokens, request.priority, live->arrival_s},
      live);
  live_[id] = live;
  metrics_.prompt_tokens += prompt_tokens;
  wake_.notify_all();
  return live->stream;
}

void ServingEngine::Cancel(RequestId id) {
  std::lock_guard lock(mutex_);
  ends_.emplace_back(id, FinishReason::kCancelled);
  wake_.notify_all();
}

void ServingEngine::Stop(RequestId id) {
  std::lock_guard lock(mutex_);
  ends_.emplace_back(id, FinishReason::kStop);
  wake_.notify_all();
}

int64_t ServingEngine::in_flight() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(live_.size());
}

int64_t ServingEngine::outstanding_tokens() const {
  std::lock_guard lock(mutex_);
  int64_t tokens = 0;
  for (const auto& [id, live] : live_) tokens += live->budget - live->tokens;
  return tokens;
}

bool ServingEngine::accepting() const {
  std::lock_guard lock(mutex_);
  return accepting_;
}

void ServingEngine::Shutdown(double drain_s) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      accepting_ = false;
      stopping_ = true;
      drain_deadline_s_ = Now() + std::max(0.0, drain_s);
    }
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void ServingEngine::FinishRequest(RequestId id, FinishReason reason, const std::string& error) {
  const auto found = live_.find(id);
  if (found == live_.end()) {
    // A client's Stop for a request the engine already ended by length: it stopped first.
    const auto ended = std::find(recent_length_ends_.begin(), recent_length_ends_.end(), id);
    if (reason == FinishReason::kStop && ended != recent_length_ends_.end()) {
      recent_length_ends_.erase(ended);
      --metrics_.request_success[FinishReasonName(FinishReason::kLength)];
      ++metrics_.request_success[FinishReasonName(FinishReason::kStop)];
    }
    return;
  }
  const std::shared_ptr<Live> live = found->second;
  live_.erase(found);
  // Only the worker ends requests, and only after AdmitAndCancel handed the inbox to the
  // scheduler: a live request is always the scheduler's.
  const RequestState state = scheduler_->State(id);
  if (state == RequestState::kWaiting || state == RequestState::kRunning) {
    (void)scheduler_->Cancel(id);
  }
  (void)scheduler_->Forget(id);
  if (reason == FinishReason::kLength) {
    recent_length_ends_.push_back(id);
    if (recent_length_ends_.size() > kRecentLengthEnds) recent_length_ends_.pop_front();
  }
  if (reason == FinishReason::kStop || reason == FinishReason::kLength) {
    ++metrics_.request_success[FinishReasonName(reason)];
    metrics_.e2e_request_latency.Observe(live->last_token_s - live->arrival_s);
  } else if (reason == FinishReason::kCancelled) {
    ++metrics_.requests_cancelled;
  }
  live->stream->Finish(reason, error);
}

void ServingEngine::AdmitAndCancel() {
  for (auto& [request, live] : inbox_) {
    const RequestId id = request.id;
    Status added = scheduler_->Add(std::move(request));
    if (!added.ok()) {
      ++metrics_.requests_rejected;
      live_.erase(id);
      live->stream->Finish(FinishReason::kError, added.message());
    }
  }
  inbox_.clear();
  for (const auto& [id, reason] : ends_) FinishRequest(id, reason, "");
  ends_.clear();
  if (stopping_ && Now() >= drain_deadline_s_) {
    std::vector<RequestId> left;
    for (const auto& [id, live] : live_) left.push_back(id);
    for (RequestId id : left) FinishRequest(id, FinishReason::kCancelled, "");
  }
}

void ServingEngine::Run() {
  while (true) {
    StepPlan plan;
    {
      std::unique_lock lock(mutex_);
      AdmitAndCancel();
      if (stopping_ && live_.empty()) break;
      plan = scheduler_->Schedule(Now(), true);
      metrics_.requests_running = scheduler_->num_running();
      metrics_.requests_waiting = scheduler_->num_waiting();
      metrics_.preemptions = scheduler_->num_preemptions();
      const auto& kv = executor_->kv();
      metrics_.kv_cache_usage =
          kv.num_blocks() > 0 ? static_cast<double>(kv.num_used_blocks()) / kv.num_blocks() : 0;
      if (plan.empty()) {
        // Idle (or a dynamic batch waiting for its timeout): sleep until something arrives.
        const double wake = scheduler_->NextWakeTime() - Now();
        const double slice = std::isfinite(wake) ? std::clamp(wake, 0.0, 0.1) : 0.1;
        wake_.wait_for(lock, std::chrono::duration<double>(slice), [&] {
          return !inbox_.empty() || !ends_.empty() ||
                 (stopping_ && (live_.empty() || Now() >= drain_deadline_s_));
        });
        continue;
      }
    }
    RunStep(plan);
  }
}

void ServingEngine::RunStep(const StepPlan& plan) {
  const double start_s = Now();
  auto logits = executor_->Step(plan.chunks);
  const double end_s = Now();
  std::lock_guard lock(mutex_);
  std::vector<int32_t> sampled(plan.chunks.size(), -1);
  if (!logits.ok()) {
    // Every request of the failed step ends with the error; the others go on.
    for (RequestId id : plan.requests) {
      FinishRequest(id, FinishReason::kError, logits.status().message());
    }
    (void)scheduler_->Complete(plan, sampled);
    return;
  }
  for (size_t c = 0; c < plan.chunks.size(); ++c) {
    const auto live = live_.find(plan.requests[c]);
    if ((*logits)[c].empty() || live == live_.end()) continue;
    auto token = live->second->sampler.Sample((*logits)[c]);
    if (!token.ok()) {
      FinishRequest(plan.requests[c], FinishReason::kError, token.status().message());
      continue;
    }
    sampled[c] = *token;
  }
  for (const TokenEvent& event : scheduler_->Complete(plan, sampled)) {
    const auto found = live_.find(event.request);
    if (found == live_.end()) continue;
    Live& live = *found->second;
    if (live.tokens == 0) {
      metrics_.time_to_first_token.Observe(end_s - live.arrival_s);
      metrics_.request_queue_time.Observe(
          std::max(0.0, scheduler_->FirstScheduled(event.request) - live.arrival_s));
    } else {
      metrics_.inter_token_latency.Observe(end_s - live.last_token_s);
    }
    live.last_token_s = end_s;
    ++live.tokens;
    ++metrics_.generation_tokens;
    const FinishReason finish = live.stop_tokens.count(event.token) != 0 ? FinishReason::kStop
                                : event.finished                         ? FinishReason::kLength
                                                                         : FinishReason::kNone;
    // The last token and the end arrive together: a reader never sees one without the other.
    live.stream->Push(event.token, finish);
    if (finish != FinishReason::kNone) FinishRequest(event.request, finish, "");
  }
  RecordStep(plan, start_s, end_s);
}

void ServingEngine::RecordStep(const StepPlan& plan, double start_s, double end_s) {
  window_.push_back(StepRecordOf(plan, *executor_, start_s, end_s));
  while (!window_.empty() && window_.front().end_s < end_s - options_.metrics_window_s) {
    window_.pop_front();
  }
}

ServingMetrics ServingEngine::Metrics() const {
  ServingMetrics copy;
  SummaryInputs inputs;
  {
    std::lock_guard lock(mutex_);
    copy = metrics_;
    inputs.steps.assign(window_.begin(), window_.end());
  }
  inputs.peaks = options_.peaks;
  const RunSummary window = SummarizeRun(inputs);
  copy.prefill_window = window.prefill;
  copy.decode_window = window.decode;
  copy.window_seconds = options_.metrics_window_s;
  copy.peaks = options_.peaks;
  return copy;
}

}  // namespace hwinfer
