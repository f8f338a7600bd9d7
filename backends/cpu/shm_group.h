// shm_group.h — the CPU plugin's device collectives (ABI 1.4): ranks of one machine (processes or
// threads) summing F32 values through a POSIX shared-memory segment, so tensor-parallel CPU ranks
// all-reduce without the host's MPI round trip, and CI runs the device-collective path with no GPU.
//
// The segment (named by the communicator id, unlinked once every rank has joined) holds a header
// (the rank count, who joined, a central barrier, a "broken" flag) and one slot of kSlotFloats
// F32 values per rank. An all-reduce goes chunk by chunk: every rank copies its chunk into its
// slot, waits at the barrier, sums the slots in rank order into its own values (so every rank gets
// the same bits), and waits again before the slots are reused. Waits spin briefly, then sleep on
// a futex; they end early when this rank aborts or another rank breaks the group.
#ifndef HWINFER_BACKENDS_CPU_SHM_GROUP_H_
#define HWINFER_BACKENDS_CPU_SHM_GROUP_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace hwinfer::cpu {

class ShmGroup {
 public:
  static constexpr uint32_t kMaxRanks = 256;
  static constexpr size_t kSlotFloats = size_t{1} << 18;  // 1 MiB per rank
  static constexpr size_t kNameBytes = 16;                // random bytes of a segment name

  // Fills |name| with fresh random bytes (getrandom); false with the reason in *error.
  static bool RandomName(uint8_t (&name)[kNameBytes], std::string* error);
  // Joins rank |rank| of |nranks| of the group named by |name| (kNameBytes random bytes). Waits
  // for every rank to join, at most |timeout_ns|. On failure returns null and says why in *error.
  // Open then WaitForRanks.
  static std::unique_ptr<ShmGroup> Join(const uint8_t (&name)[kNameBytes], uint32_t nranks,
                                        uint32_t rank, uint64_t timeout_ns, std::string* error);
  // The first half of Join, which never waits: maps the segment and registers this rank. On
  // failure returns null and says why in *error.
  static std::unique_ptr<ShmGroup> Open(const uint8_t (&name)[kNameBytes], uint32_t nranks,
                                        uint32_t rank, std::string* error);
  // The second half: waits until every rank has joined, at most |timeout_ns| (0: no limit), or
  // until Abort (from any thread) or another rank breaks the group; then unlinks the segment's
  // name. False with the reason in *error (the group is then broken for the other ranks too).
  bool WaitForRanks(uint64_t timeout_ns, std::string* error);
  ~ShmGroup();  // unmaps the segment (its name is gone already)
  ShmGroup(const ShmGroup&) = delete;
  ShmGroup& operator=(const ShmGroup&) = delete;

  // data [count]: the sum over the ranks, the same bits on every rank. Returns false with the
  // reason in *error when this rank aborted or another broke the group before it finished.
  bool AllReduceSum(float* data, size_t count, std::string* error);
  // Ends this rank's waits now and every later one; marks the group broken for the other ranks.
  void Abort();
  // Empty while healthy, else why the group is broken (this rank aborted, or rank R did).
  std::string BrokenReason() const;

  uint32_t nranks() const { return nranks_; }
  uint32_t rank() const { return rank_; }

 private:
  struct Header;
  ShmGroup(void* base, size_t bytes, uint32_t nranks, uint32_t rank, std::string segment);
  Header& header() const;
  float* slot(uint32_t r) const;
  // The central barrier: false when the wait ended because the group broke.
  bool Barrier();
  // Waits while *word == value; false when the group broke first. |deadline_ns| 0: no deadline
  // (then only a break ends the wait); otherwise also false past it, with *timed_out set.
  bool WaitWhileEqual(uint32_t* word, uint32_t value, uint64_t deadline_ns, bool* timed_out);
  bool Broken() const;
  // A join that cannot complete: unlinks the segment's name, breaks the group for the other
  // ranks, says |why| in *error; returns false.
  bool FailJoin(const std::string& why, std::string* error);

  void* base_;
  size_t bytes_;
  std::string segment_;  // the segment's name, unlinked by WaitForRanks
  uint32_t nranks_, rank_;
  std::atomic<bool> aborted_{false};
};

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_SHM_GROUP_H_
