// thread_pool.h — the CPU backend's persistent worker pool: kernels split their work into items and
// fan them out with parallel_for.
//
// The pool is created once per plugin instance (plugin_init) and stopped and joined when it is
// destroyed (plugin_destroy). It must not create threads per call, must not let an exception escape
// a worker thread, and must never be used across the plugin ABI (it is a C++ type).
//
// A pool of N threads starts N - 1 workers; the thread that calls parallel_for is the N-th and
// works on items too, so a pool of 1 runs everything on the caller. Calls from different threads
// (two streams launching kernels at once) are serialised: the second caller waits for the first to
// finish. A parallel_for made from inside a parallel_for of the same pool runs inline on the
// calling thread, so nesting never deadlocks.
#ifndef HWINFER_BACKENDS_CPU_THREAD_POOL_H_
#define HWINFER_BACKENDS_CPU_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace hwinfer::cpu {

class ThreadPool {
 public:
  // Starts |n_threads| - 1 workers (|n_threads| < 1 counts as 1). Throws std::system_error when a
  // thread cannot be started (after joining those that did start).
  explicit ThreadPool(int n_threads);
  // Stops and joins every worker. Must not be called while a parallel_for is running.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that work on items: the workers plus the calling thread.
  int thread_count() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(item) exactly once for every item in [0, n_items), spread over the workers and the
  // calling thread (items are handed out one at a time, so make each item a sizeable chunk of
  // work). Returns when every item has finished. If fn throws, items not yet started are skipped
  // and the first exception is rethrown here after every thread has stopped touching the items.
  template <typename Fn>
  void parallel_for(int64_t n_items, Fn&& fn) {
    using Callable = std::remove_reference_t<Fn>;
    ItemFunction item_fn;
    item_fn.context = const_cast<void*>(static_cast<const void*>(&fn));
    item_fn.call = [](void* context, int64_t item) { (*static_cast<Callable*>(context))(item); };
    run(n_items, item_fn);
  }

 private:
  // A type-erased, non-owning reference to the caller's callable (no allocation per call).
  struct ItemFunction {
    void (*call)(void* context, int64_t item) = nullptr;
    void* context = nullptr;
  };

  // One parallel_for in flight. Lives on the caller's stack; guarded by mutex_ except for the
  // atomic counters, which the participating threads update.
  struct Job;

  void run(int64_t n_items, ItemFunction fn);
  void worker_loop();
  // Takes items from |job| until none are left (or one has failed).
  static void work_on(Job& job);

  std::vector<std::thread> workers_;

  std::mutex submit_mutex_;  // one parallel_for at a time (different calling threads)

  std::mutex mutex_;                     // guards everything below
  std::condition_variable work_ready_;   // workers wait here for a new job or stop
  std::condition_variable job_drained_;  // the caller waits here for workers to leave the job
  Job* job_ = nullptr;                   // the job being handed out, or nullptr
  // Bumped for every published job (under mutex_). Atomic so that idle workers can poll it without
  // the mutex for a short while before sleeping on work_ready_: the next kernel of a step follows
  // within microseconds, and a sleep / wake pair costs a system call each (many more in a VM).
  std::atomic<uint64_t> job_generation_{0};
  // Workers currently inside job_ (changed under mutex_). Atomic so that the caller, done with its
  // share, can poll it for a moment before sleeping on job_drained_.
  std::atomic<int> active_workers_{0};
  bool stopping_ = false;
};

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_THREAD_POOL_H_
