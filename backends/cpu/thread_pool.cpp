// thread_pool.cpp — see thread_pool.h. Workers spin briefly, then sleep on a condition variable
// between jobs; a job is a shared atomic item counter that the workers and the caller drain
// together. Nothing here may block inside a worker except on the pool's own mutex and condition
// variables.
#include "thread_pool.h"

#include <atomic>
#include <chrono>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hwinfer::cpu {

namespace {

// The pool whose items this thread is currently running, so a nested parallel_for runs inline.
thread_local const ThreadPool* tls_serving_pool = nullptr;

// How long an idle worker polls for the next job before it sleeps: longer than the gap between
// two kernels of a step, short enough that an idle pool soon stops taking CPU time.
constexpr std::chrono::microseconds kSpinBeforeSleep{100};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Polls |done| until it returns true or kSpinBeforeSleep has passed (a stopping pool is seen
// when the spin ends: its workers reach join at most that much later).
template <typename Done>
void spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  for (int i = 1;; ++i) {
    if (done()) return;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return;
  }
}

// Sets tls_serving_pool for one scope and restores the previous value on exit.
class ServingScope {
 public:
  explicit ServingScope(const ThreadPool* pool) : previous_(tls_serving_pool) {
    tls_serving_pool = pool;
  }
  ~ServingScope() { tls_serving_pool = previous_; }
  ServingScope(const ServingScope&) = delete;
  ServingScope& operator=(const ServingScope&) = delete;

 private:
  const ThreadPool* previous_;
};

}  // namespace

struct ThreadPool::Job {
  const ThreadPool* pool = nullptr;
  ItemFunction fn;
  int64_t n_items = 0;
  std::atomic<int64_t> next_item{0};       // the next item to hand out
  std::atomic<bool> failed{false};         // an item threw: hand out nothing more
  std::atomic<bool> error_claimed{false};  // the first thrower stores its exception
  std::exception_ptr first_error;          // read by the caller once every worker has left
};

ThreadPool::ThreadPool(int n_threads) {
  const int n_workers = n_threads > 1 ? n_threads - 1 : 0;
  try {
    workers_.reserve(static_cast<size_t>(n_workers));
    for (int i = 0; i < n_workers; ++i) workers_.emplace_back(&ThreadPool::worker_loop, this);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::work_on(Job& job) {
  ServingScope scope(job.pool);
  while (!job.failed.load(std::memory_order_relaxed)) {
    const int64_t item = job.next_item.fetch_add(1, std::memory_order_relaxed);
    if (item >= job.n_items) break;
    try {
      job.fn.call(job.fn.context, item);
    } catch (...) {
      if (!job.error_claimed.exchange(true)) job.first_error = std::current_exception();
      job.failed.store(true, std::memory_order_relaxed);
    }
  }
}

void ThreadPool::run(int64_t n_items, ItemFunction fn) {
  if (n_items <= 0) return;
  // Inline when there is nobody to share with, or when this thread already serves this pool
  // (a nested call: waiting for the pool from inside it would deadlock).
  if (workers_.empty() || n_items == 1 || tls_serving_pool == this) {
    ServingScope scope(this);
    for (int64_t item = 0; item < n_items; ++item) fn.call(fn.context, item);
    return;
  }

  std::lock_guard<std::mutex> submit(submit_mutex_);
  Job job;
  job.pool = this;
  job.fn = fn;
  job.n_items = n_items;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &job;
    job_generation_.fetch_add(1, std::memory_order_release);
  }
  work_ready_.notify_all();

  work_on(job);

  {
    // Every item is handed out; wait for the workers still inside the job (polling first: their
    // last items end within microseconds, and a sleep / wake pair is two system calls), then
    // retract it so a worker that wakes late never touches this (stack) object.
    const auto drained = [this] { return active_workers_.load(std::memory_order_acquire) == 0; };
    spin_until(drained);
    std::unique_lock<std::mutex> lock(mutex_);
    job_drained_.wait(lock, drained);
    job_ = nullptr;
  }
  if (job.first_error) std::rethrow_exception(job.first_error);
}

void ThreadPool::worker_loop() {
  uint64_t seen_generation = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  const auto ready = [&] {
    return stopping_ || (job_ != nullptr && job_generation_ != seen_generation);
  };
  for (;;) {
    if (!ready()) {  // poll without the mutex for a moment, then sleep
      lock.unlock();
      spin_until(
          [&] { return job_generation_.load(std::memory_order_acquire) != seen_generation; });
      lock.lock();
      work_ready_.wait(lock, ready);
    }
    if (stopping_) return;
    seen_generation = job_generation_;
    Job* job = job_;
    ++active_workers_;
    lock.unlock();
    work_on(*job);  // never throws: work_on catches what the items throw
    lock.lock();
    if (--active_workers_ == 0) job_drained_.notify_all();
  }
}

}  // namespace hwinfer::cpu
