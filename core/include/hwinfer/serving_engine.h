// hwinfer/serving_engine.h — one model on one device serving requests as they come: the
// scheduler (continuous batching) and executor driven by a worker thread, fed by any number of
// client threads (the HTTP server's), each reading its request's tokens from a stream as they are
// sampled. Docs: docs/serving.md.
//
//   client thread:  Submit(request) -> RequestStream;  stream->Wait() ... until finished;
//                   Cancel(id) when the client goes away (its KV blocks are freed)
//   worker thread:  inbox -> Scheduler::Add; Schedule -> Executor::Step -> sample per request
//                   -> Complete -> tokens to the streams; a stop token ends a request early
//
// Times are the host's wall clock (a steady clock from the engine's start).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hwinfer/device.h"
#include "hwinfer/llama_executor.h"
#include "hwinfer/llama_model.h"
#include "hwinfer/metrics.h"
#include "hwinfer/sampler.h"
#include "hwinfer/scheduler.h"
#include "hwinfer/serving_metrics.h"
#include "hwinfer/status.h"

namespace hwinfer {

struct EngineOptions {
  ExecutorOptions executor;    // kv_cache_tokens 0 = 2 x the context length
  SchedulerOptions scheduler;  // max_model_len <= 0: the model's context length
  // Requests queued (not yet running) before Submit answers Unavailable; 0 = 4 x max_sequences.
  int64_t max_waiting = 0;
  PeakRates peaks;               // for the MBU/MFU window gauges (0 = unknown)
  double metrics_window_s = 10;  // steps of the last this many seconds count in those gauges
  // Request ids are first_request_id, + request_id_step, ...: engines behind one front
  // (hwinfer/serving_replicas.h) hand out disjoint ids.
  RequestId first_request_id = 0;
  RequestId request_id_step = 1;
  // Tensor parallelism: this process is rank 0 of |collective| and its executor holds rank 0's
  // shard (LlamaExecutor::CreateTensorParallel); the other ranks follow. Null: none.
  std::shared_ptr<Collective> collective;
};

struct ServeRequest {
  std::vector<int32_t> prompt;  // non-empty, ids in [0, vocab)
  int64_t max_tokens = 16;      // > 0
  SamplingParams sampling;
  // Sampling one of these ends the request with finish reason "stop" (the token is counted and
  // delivered; the caller decides whether to show it): EOS/EOT unless the client set ignore_eos.
  std::vector<int32_t> stop_tokens;
  int priority = 0;
};

enum class FinishReason { kNone, kStop, kLength, kCancelled, kError };
// "stop", "length", "cancelled", "error" ("" for kNone).
const char* FinishReasonName(FinishReason reason);

// What a stream hands out: the tokens since the last Wait, and whether (how) the request ended.
struct StreamUpdate {
  std::vector<int32_t> tokens;
  FinishReason finish = FinishReason::kNone;  // != kNone: nothing will follow
  std::string error;                          // for kError
};

// One request's tokens, written by the worker, read by one client thread.
class RequestStream {
 public:
  explicit RequestStream(RequestId id) : id_(id) {}
  RequestId id() const { return id_; }
  // Waits up to |timeout| until there are new tokens or the request ended; returns them (maybe
  // none, on timeout).
  StreamUpdate Wait(std::chrono::milliseconds timeout);

  // Worker side. |finish|: this token ends the request (delivered with it).
  void Push(int32_t token, FinishReason finish = FinishReason::kNone);
  void Finish(FinishReason reason, std::string error = "");

 private:
  const RequestId id_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int32_t> pending_;
  FinishReason finish_ = FinishReason::kNone;
  bool finish_delivered_ = false;
  std::string error_;
};

class ServingEngine {
 public:
  // Creates the executor (placing the weights, allocating the KV cache) and scheduler, and starts
  // the worker. Errors: the executor's and scheduler's (naming the option).
  static StatusOr<std::unique_ptr<ServingEngine>> Create(std::shared_ptr<Device> device,
                                                         std::shared_ptr<const LlamaModel> model,
                                                         const EngineOptions& options);
  ~ServingEngine();  // Shutdown(0)
  ServingEngine(const ServingEngine&) = delete;
  ServingEngine& operator=(const ServingEngine&) = delete;

  // Queues |request|. Errors, before anything is queued: InvalidArgument (empty prompt, a token
  // outside the vocabulary, max_tokens <= 0, bad sampling), OutOfRange (prompt + max_tokens over
  // the context length, or more KV than the whole cache holds), Unavailable (max_waiting requests
  // already queued, or the engine is shutting down).
  StatusOr<std::shared_ptr<RequestStream>> Submit(ServeRequest request);
  // Ends a request (its stream gets kCancelled; its KV blocks are freed by the worker's next
  // loop). Unknown or finished ids are ignored.
  void Cancel(RequestId id);
  // Ends a request that is complete for its client (a stop string appeared in its text): finish
  // reason "stop", counted as a success. A request that has already ended by its length (the
  // engine ran ahead of the client reading its text) is counted as stopped instead: the stop
  // string comes first, as the client's answer says. Other unknown or finished ids are ignored.
  void Stop(RequestId id);
  // Stops accepting, lets queued and running requests finish for up to |drain_s| seconds, then
  // cancels what is left and joins the worker. Idempotent.
  void Shutdown(double drain_s);

  ServingMetrics Metrics() const;  // a snapshot
  const LlamaModel& model() const { return *model_; }
  const Device& device() const { return *device_; }
  int64_t max_model_len() const { return scheduler_options_.max_model_len; }
  // Requests submitted and not yet finished (queued, waiting or running).
  int64_t in_flight() const;
  // Their tokens still to come: prompt + max_tokens - tokens produced, summed (for routing).
  int64_t outstanding_tokens() const;
  // False once Shutdown began.
  bool accepting() const;

 private:
  struct Live;
  ServingEngine() = default;
  void Run();
  double Now() const;
  // Under mutex_: moves the inbox into the scheduler and applies cancellations.
  void AdmitAndCancel();
  void FinishRequest(RequestId id, FinishReason reason, const std::string& error);
  void RunStep(const StepPlan& plan);
  void RecordStep(const StepPlan& plan, double start_s, double end_s);

  std::shared_ptr<Device> device_;
  std::shared_ptr<const LlamaModel> model_;
  std::unique_ptr<LlamaExecutor> executor_;
  std::unique_ptr<Scheduler> scheduler_;
  SchedulerOptions scheduler_options_;
  EngineOptions options_;
  std::chrono::steady_clock::time_point start_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::pair<Request, std::shared_ptr<Live>>> inbox_;
  std::vector<std::pair<RequestId, FinishReason>> ends_;  // Cancel / Stop from clients
  std::map<RequestId, std::shared_ptr<Live>> live_;       // submitted and not yet finished
  std::deque<RequestId> recent_length_ends_;  // the last requests that ended by length, newest last
  RequestId next_id_ = 0;
  bool accepting_ = true, stopping_ = false;
  double drain_deadline_s_ = 0;
  ServingMetrics metrics_;
  std::deque<StepRecord> window_;
  std::thread worker_;
};

}  // namespace hwinfer
