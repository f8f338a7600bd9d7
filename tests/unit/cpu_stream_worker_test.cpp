// Unit tests of the CPU stream's in-order queue (backends/cpu/stream_worker.h): synchronize()
// returns only once every task enqueued before it has run, from several waiting threads at once
// (the worker wakes waiters when the earliest target is reached, not after every task), and the
// first error of a task reaches the next synchronize().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "hwinfer/plugin_support.h"
#include "stream_worker.h"

namespace hwinfer::cpu {
namespace {

TEST(StreamWorkerTest, SynchronizeWaitsForEveryTaskEnqueuedBeforeIt) {
  StreamWorker worker;
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(worker.enqueue([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      ran.fetch_add(1);
      return static_cast<hwinfer_error*>(nullptr);
    }),
              nullptr);
  }
  EXPECT_EQ(worker.synchronize(), nullptr);
  EXPECT_EQ(ran.load(), 50);
}

// Two threads enqueue onto one stream and synchronize, over and over: each finds its own task done
// when its synchronize returns, and neither waits forever (a lost wake-up would hang the test).
TEST(StreamWorkerTest, ConcurrentSynchronizersEachSeeTheirTasksDone) {
  StreamWorker worker;
  constexpr int kRounds = 2000;
  std::atomic<int> failures{0};
  auto caller = [&](int id) {
    for (int round = 0; round < kRounds; ++round) {
      std::atomic<bool> done{false};
      const int slow_every = id == 0 ? 7 : 11;  // some tasks outlast the other thread's wait
      if (worker.enqueue([&done, round, slow_every] {
            if (round % slow_every == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
            done.store(true);
            return static_cast<hwinfer_error*>(nullptr);
          }) != nullptr) {
        failures.fetch_add(1);
        return;
      }
      if (hwinfer_error* error = worker.synchronize()) error->destroy(error);
      if (!done.load()) failures.fetch_add(1);
    }
  };
  std::thread first(caller, 0);
  std::thread second(caller, 1);
  first.join();
  second.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(StreamWorkerTest, TheFirstErrorReachesTheNextSynchronizeOnly) {
  StreamWorker worker;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(worker.enqueue(
                  [i] { return hwinfer_make_error(HWINFER_STATUS_INTERNAL, "task %d failed", i); }),
              nullptr);
  }
  hwinfer_error* error = worker.synchronize();
  ASSERT_NE(error, nullptr);
  EXPECT_STREQ(error->message, "task 0 failed");
  error->destroy(error);
  EXPECT_EQ(worker.synchronize(), nullptr);
}

}  // namespace
}  // namespace hwinfer::cpu
