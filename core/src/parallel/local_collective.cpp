// local_collective.cpp — MakeLocalCollectives (hwinfer/collective.h): ranks as threads of one
// process. Each call is a rendezvous: every rank leaves its pointers, the last to arrive does the
// whole operation over all of them (sums in rank order, so every rank gets identical floats) and
// releases the others; nobody touches another rank's memory after its own call has returned.
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>

#include "hwinfer/collective.h"

namespace hwinfer {
namespace {

// What one rank brought to the current call.
struct Arrival {
  const void* in = nullptr;
  void* out = nullptr;
};

// The state the ranks of one group share.
class Rendezvous {
 public:
  Rendezvous(int size, double deadline_seconds)
      : arrivals_(static_cast<size_t>(size)), deadline_seconds_(deadline_seconds) {}

  // Leaves |arrival| for rank |rank|; the last rank runs |operation| over every arrival; all
  // return when it has run. Unavailable when the wait passes the deadline (unless |idle|) or the
  // group is broken.
  Status Meet(int rank, Arrival arrival,
              const std::function<void(std::vector<Arrival>&)>& operation, const std::string& what,
              bool idle) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    arrivals_[static_cast<size_t>(rank)] = arrival;
    const uint64_t generation = generation_;
    if (++arrived_ == static_cast<int>(arrivals_.size())) {
      operation(arrivals_);
      arrived_ = 0;
      ++generation_;
      released_.notify_all();
      return Status::Ok();
    }
    const auto done = [&] { return generation_ != generation || !broken_.ok(); };
    if (idle) {
      released_.wait(lock, done);
    } else if (!released_.wait_for(lock, std::chrono::duration<double>(deadline_seconds_), done)) {
      broken_ = Unavailable(fmt::format(
          "rank {} of {}: no answer from the other ranks within {} s in {}; a rank has died or "
          "hangs",
          rank, arrivals_.size(), deadline_seconds_, what));
      released_.notify_all();
    }
    return broken_;
  }

  double deadline_seconds() const { return deadline_seconds_; }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  std::vector<Arrival> arrivals_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  double deadline_seconds_;
  Status broken_;
};

class LocalCollective : public Collective {
 public:
  LocalCollective(std::shared_ptr<Rendezvous> rendezvous, int rank, int size,
                  InterconnectSpec interconnect)
      : rendezvous_(std::move(rendezvous)),
        rank_(rank),
        size_(size),
        interconnect_(std::move(interconnect)) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status AllReduceSum(float* data, int64_t count, const std::string& what) override {
    return rendezvous_->Meet(
        rank_, {data, data},
        [count](std::vector<Arrival>& all) {
          std::vector<float> sum(static_cast<size_t>(count), 0.0f);
          for (const Arrival& a : all) {
            const auto* in = static_cast<const float*>(a.in);
            for (int64_t i = 0; i < count; ++i) sum[static_cast<size_t>(i)] += in[i];
          }
          for (const Arrival& a : all) std::memcpy(a.out, sum.data(), sum.size() * sizeof(float));
        },
        what, false);
  }

  Status Broadcast(void* data, int64_t bytes, const std::string& what, bool idle) override {
    return rendezvous_->Meet(
        rank_, {data, data},
        [bytes](std::vector<Arrival>& all) {
          for (size_t r = 1; r < all.size(); ++r) {
            std::memcpy(all[r].out, all[0].in, static_cast<size_t>(bytes));
          }
        },
        what, idle);
  }

  Status AllGather(const void* data, int64_t bytes, void* out, const std::string& what) override {
    return rendezvous_->Meet(
        rank_, {data, out},
        [bytes](std::vector<Arrival>& all) {
          const auto n = static_cast<size_t>(bytes);
          for (const Arrival& to : all) {
            for (size_t r = 0; r < all.size(); ++r) {
              std::memcpy(static_cast<char*>(to.out) + r * n, all[r].in, n);
            }
          }
        },
        what, false);
  }

  double deadline_seconds() const override { return rendezvous_->deadline_seconds(); }

  double ModelledAllReduceSeconds(int64_t bytes) const override {
    return interconnect_.AllReduceSeconds(size_, static_cast<double>(bytes));
  }

 private:
  std::shared_ptr<Rendezvous> rendezvous_;
  int rank_, size_;
  InterconnectSpec interconnect_;
};

}  // namespace

std::vector<std::shared_ptr<Collective>> MakeLocalCollectives(int size, double deadline_seconds,
                                                              InterconnectSpec interconnect) {
  auto rendezvous = std::make_shared<Rendezvous>(size, deadline_seconds);
  std::vector<std::shared_ptr<Collective>> ranks;
  for (int rank = 0; rank < size; ++rank) {
    ranks.push_back(std::make_shared<LocalCollective>(rendezvous, rank, size, interconnect));
  }
  return ranks;
}

}  // namespace hwinfer
