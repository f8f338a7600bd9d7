// stream_worker.h — the in-order queue behind one hwinfer_stream: a FIFO of tasks run one after
// another by one thread that belongs to this queue alone.
//
// Copies, kernels and event records are tasks. A task returns NULL or an hwinfer_error; the worker
// keeps the first error until synchronize() hands it to the caller, and destroys later ones. The
// worker thread is created with the queue and joined (after draining the queue) when it is
// destroyed. It must not run tasks anywhere but on its own thread, and must not let an exception
// escape a task (a throwing task becomes an INTERNAL or OUT_OF_MEMORY error).
#ifndef HWINFER_BACKENDS_CPU_STREAM_WORKER_H_
#define HWINFER_BACKENDS_CPU_STREAM_WORKER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "hwinfer/plugin.h"

namespace hwinfer::cpu {

class StreamWorker {
 public:
  // A unit of queued work: returns NULL on success, or an error the caller of synchronize() owns.
  using Task = std::function<hwinfer_error*()>;

  // Starts the worker thread. Throws std::system_error when it cannot.
  StreamWorker();
  // Runs every queued task, then joins the thread and destroys any error nobody collected.
  ~StreamWorker();

  StreamWorker(const StreamWorker&) = delete;
  StreamWorker& operator=(const StreamWorker&) = delete;

  // Appends |task| to the queue. Returns NULL, or OUT_OF_MEMORY when the queue cannot grow.
  hwinfer_error* enqueue(Task task) noexcept;

  // Blocks until every task enqueued before this call has finished. Returns the first error any
  // task hit since the previous synchronize (the caller owns it), or NULL; clears it.
  hwinfer_error* synchronize() noexcept;

 private:
  void run();

  std::mutex mutex_;                    // guards everything below except thread_
  std::condition_variable work_ready_;  // the worker waits here for tasks or stop
  std::condition_variable work_done_;   // synchronize() waits here
  std::deque<Task> queue_;
  uint64_t enqueued_ = 0;  // tasks ever enqueued
  uint64_t finished_ = 0;  // tasks ever finished (in order, so the first finished_ are done)
  // The smallest finished_ a synchronize() waits for (kNobodyWaits: none). The worker wakes the
  // waiters when it reaches it, not after every task: a waiter woken per kernel is two system
  // calls and two context switches a kernel, hundreds a decode step.
  static constexpr uint64_t kNobodyWaits = UINT64_MAX;
  uint64_t wake_at_ = kNobodyWaits;
  hwinfer_error* first_error_ = nullptr;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything above is initialised
};

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_STREAM_WORKER_H_
