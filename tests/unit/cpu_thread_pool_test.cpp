// Unit tests of the CPU backend's persistent thread pool (backends/cpu/thread_pool.h): every item
// runs exactly once, on the pool's threads and the caller; concurrent and nested callers are safe;
// exceptions come back to the caller; destruction joins the workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "thread_pool.h"

namespace hwinfer::cpu {
namespace {

// Runs parallel_for(n) and returns how many times each index was visited.
std::vector<int> VisitCounts(ThreadPool& pool, int64_t n) {
  std::vector<std::atomic<int>> counts(static_cast<size_t>(n));
  pool.parallel_for(n, [&](int64_t item) { counts[static_cast<size_t>(item)].fetch_add(1); });
  std::vector<int> out;
  for (const auto& count : counts) out.push_back(count.load());
  return out;
}

class ThreadPoolVisitTest : public ::testing::TestWithParam<int> {};

TEST_P(ThreadPoolVisitTest, VisitsEveryIndexExactlyOnce) {
  ThreadPool pool(GetParam());
  for (const int64_t n : {0, 1, 7, 1000}) {
    const std::vector<int> counts = VisitCounts(pool, n);
    ASSERT_EQ(counts.size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(counts[static_cast<size_t>(i)], 1) << "n=" << n << " i=" << i;
  }
}

INSTANTIATE_TEST_SUITE_P(ThreadCounts, ThreadPoolVisitTest, ::testing::Values(1, 2, 4, 8));

TEST(ThreadPoolTest, ThreadCountIncludesTheCaller) {
  EXPECT_EQ(ThreadPool(1).thread_count(), 1);
  EXPECT_EQ(ThreadPool(4).thread_count(), 4);
  EXPECT_EQ(ThreadPool(0).thread_count(), 1);  // < 1 counts as 1
}

TEST(ThreadPoolTest, NegativeItemCountDoesNothing) {
  ThreadPool pool(2);
  std::atomic<int> calls{0};
  pool.parallel_for(-5, [&](int64_t) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 0);
}

TEST(ThreadPoolTest, SpreadsItemsOverSeveralThreads) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  // Slow items so every worker wakes before the caller drains the counter alone.
  pool.parallel_for(64, [&](int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_GE(threads.size(), 2u);
  EXPECT_LE(threads.size(), 4u);
}

TEST(ThreadPoolTest, ReusesItsThreadsAcrossCalls) {
  ThreadPool pool(3);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  for (int call = 0; call < 50; ++call) {
    pool.parallel_for(16, [&](int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    });
  }
  EXPECT_LE(threads.size(), 3u);  // two workers and the caller, never a new thread per call
}

TEST(ThreadPoolTest, ConcurrentCallersFromTwoThreadsEachSeeEveryIndexOnce) {
  ThreadPool pool(4);
  constexpr int64_t kItems = 997;
  constexpr int kRounds = 200;
  std::vector<std::atomic<int>> first(kItems);
  std::vector<std::atomic<int>> second(kItems);
  auto caller = [&pool](std::vector<std::atomic<int>>& counts) {
    for (int round = 0; round < kRounds; ++round) {
      pool.parallel_for(kItems, [&](int64_t item) { counts[static_cast<size_t>(item)]++; });
    }
  };
  std::thread a(caller, std::ref(first));
  std::thread b(caller, std::ref(second));
  a.join();
  b.join();
  for (int64_t i = 0; i < kItems; ++i) {
    EXPECT_EQ(first[static_cast<size_t>(i)].load(), kRounds) << i;
    EXPECT_EQ(second[static_cast<size_t>(i)].load(), kRounds) << i;
  }
}

TEST(ThreadPoolTest, NestedParallelForRunsInlineWithoutDeadlock) {
  ThreadPool pool(4);
  constexpr int64_t kOuter = 8;
  constexpr int64_t kInner = 50;
  std::vector<std::atomic<int>> counts(kOuter * kInner);
  pool.parallel_for(kOuter, [&](int64_t outer) {
    pool.parallel_for(kInner, [&](int64_t inner) {
      counts[static_cast<size_t>(outer * kInner + inner)].fetch_add(1);
    });
  });
  for (const auto& count : counts) EXPECT_EQ(count.load(), 1);
}

TEST(ThreadPoolTest, RethrowsTheItemsExceptionToTheCallerAndStaysUsable) {
  ThreadPool pool(4);
  EXPECT_THROW(pool.parallel_for(100,
                                 [](int64_t item) {
                                   if (item == 37) throw std::runtime_error("item 37 failed");
                                 }),
               std::runtime_error);
  const std::vector<int> counts = VisitCounts(pool, 100);
  for (const int count : counts) EXPECT_EQ(count, 1);
}

TEST(ThreadPoolTest, DestructionJoinsIdleWorkers) {
  // A pool that never ran anything, and one that did, both destroy promptly; a worker that was not
  // joined would make the std::thread destructor terminate the test binary.
  for (int round = 0; round < 20; ++round) {
    auto idle = std::make_unique<ThreadPool>(4);
    idle.reset();
    auto used = std::make_unique<ThreadPool>(4);
    std::atomic<int64_t> sum{0};
    used->parallel_for(100, [&](int64_t item) { sum.fetch_add(item); });
    EXPECT_EQ(sum.load(), 99 * 100 / 2);
    used.reset();
  }
}

// Threads of this process, from /proc/self/task (Linux).
size_t ProcessThreadCount() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

TEST(ThreadPoolTest, StartsItsWorkersOnceAndJoinsThemOnDestruction) {
  const size_t before = ProcessThreadCount();
  {
    ThreadPool pool(4);
    EXPECT_EQ(ProcessThreadCount(), before + 3);  // three workers; the caller is the fourth
    for (int call = 0; call < 10; ++call) {
      pool.parallel_for(32, [](int64_t) {});
    }
    EXPECT_EQ(ProcessThreadCount(), before + 3);  // no thread per call
  }
  EXPECT_EQ(ProcessThreadCount(), before);  // every worker joined (not detached, not leaked)
}

}  // namespace
}  // namespace hwinfer::cpu
