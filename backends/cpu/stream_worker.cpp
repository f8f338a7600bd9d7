// stream_worker.cpp — see stream_worker.h. One thread, one deque, two condition variables.
#include "stream_worker.h"

#include <algorithm>
#include <exception>
#include <new>
#include <utility>

#include "hwinfer/plugin_support.h"

namespace hwinfer::cpu {

StreamWorker::StreamWorker() { thread_ = std::thread(&StreamWorker::run, this); }

StreamWorker::~StreamWorker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (first_error_ != nullptr) first_error_->destroy(first_error_);
}

hwinfer_error* StreamWorker::enqueue(Task task) noexcept {
  try {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(task));
      ++enqueued_;
    }
    work_ready_.notify_one();
    return nullptr;
  } catch (...) {
    return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                              "cpu stream: out of memory while queueing work");
  }
}

hwinfer_error* StreamWorker::synchronize() noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = enqueued_;
  while (finished_ < target) {  // (re)registered after every wake: another waiter's may come first
    wake_at_ = std::min(wake_at_, target);
    work_done_.wait(lock);
  }
  hwinfer_error* error = first_error_;
  first_error_ = nullptr;
  return error;
}

void StreamWorker::run() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    hwinfer_error* error = nullptr;
    try {
      error = task();
    } catch (const std::bad_alloc&) {
      error = hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                 "cpu stream: out of memory while running queued work");
    } catch (const std::exception& e) {
      error = hwinfer_make_error(HWINFER_STATUS_INTERNAL, "cpu stream: queued work failed: %s",
                                 e.what());
    } catch (...) {
      error = hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                                 "cpu stream: queued work failed with an unknown exception");
    }
    task = nullptr;  // release what the task captured before it counts as finished
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error != nullptr) {
        if (first_error_ == nullptr) {
          first_error_ = error;
        } else {
          error->destroy(error);
        }
      }
      ++finished_;
      if (finished_ >= wake_at_) {
        wake_at_ = kNobodyWaits;
        wake = true;
      }
    }
    if (wake) work_done_.notify_all();
  }
}

}  // namespace hwinfer::cpu
