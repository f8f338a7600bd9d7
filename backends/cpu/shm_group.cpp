// shm_group.cpp — ShmGroup: joining the shared segment, the futex barrier and the chunked sum.
// Every shared word is accessed through __atomic builtins (the segment may be mapped by several
// processes, so no C++ object lives in it); futexes are process-shared (no FUTEX_PRIVATE_FLAG).
#include "shm_group.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <utility>

namespace hwinfer::cpu {

struct ShmGroup::Header {
  uint32_t nranks;      // set by the first rank to join; the others must agree
  uint32_t joined;      // ranks that have joined (futex word)
  uint32_t arrived;     // ranks at the current barrier
  uint32_t generation;  // barriers passed (futex word)
  uint32_t broken_by;   // 0: healthy; r + 1: rank r aborted
  uint32_t reserved;
  uint8_t rank_joined[kMaxRanks];  // 1 once rank r has joined
};

namespace {

constexpr size_t kHeaderBytes = 4096;  // one page: the slots start 64-byte aligned
// Word indices of Header's fields, for a rank that maps the header alone (BreakSegment).
constexpr size_t kJoinedWord = 1, kBrokenByWord = 4;

uint32_t Load(const uint32_t* word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void FutexWait(uint32_t* word, uint32_t value, uint64_t timeout_ns) {
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(timeout_ns / 1000000000u);
  timeout.tv_nsec = static_cast<long>(timeout_ns % 1000000000u);
  syscall(SYS_futex, word, FUTEX_WAIT, value, &timeout, nullptr, 0);
}

void FutexWakeAll(uint32_t* word) {
  syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

std::string SegmentName(const uint8_t (&name)[ShmGroup::kNameBytes]) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "/hwinfer-comm-";
  for (uint8_t byte : name) {
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

// Marks the segment's group broken by |rank| (the header's broken_by word), so the ranks waiting
// in it stop now; for a rank that cannot join it (another rank count).
void BreakSegment(int fd, uint32_t rank) {
  void* header = mmap(nullptr, kHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (header == MAP_FAILED) return;
  auto* broken_by = static_cast<uint32_t*>(header) + kBrokenByWord;
  uint32_t healthy = 0;
  __atomic_compare_exchange_n(broken_by, &healthy, rank + 1, false, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
  FutexWakeAll(static_cast<uint32_t*>(header) + kJoinedWord);
  munmap(header, kHeaderBytes);
}

// Opens (creating where it is the first) and maps the segment of |bytes|; null with *error set.
void* MapSegment(const std::string& name, size_t bytes, uint32_t rank, std::string* error) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    *error = "cannot open the shared-memory segment " + name + ": " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  int rc = fstat(fd, &st);
  // The first rank reserves the pages (posix_fallocate: a full /dev/shm is ENOSPC here, not a
  // SIGBUS at the first write); a rank that finds another size was given another rank count.
  if (rc == 0 && st.st_size == 0) rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  void* base = nullptr;
  if (rc != 0) {
    *error = "cannot size the shared-memory segment " + name + " to " + std::to_string(bytes) +
             " bytes: " + std::strerror(rc > 0 ? rc : errno);
  } else if (st.st_size != 0 && static_cast<size_t>(st.st_size) != bytes) {
    *error = "the shared-memory segment " + name + " has " + std::to_string(st.st_size) +
             " bytes, this rank expects " + std::to_string(bytes) +
             " (the ranks were given different rank counts)";
    BreakSegment(fd, rank);
  } else {
    base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      *error = "cannot map the shared-memory segment " + name + ": " + std::strerror(errno);
      base = nullptr;
    }
  }
  close(fd);
  return base;
}

}  // namespace

ShmGroup::ShmGroup(void* base, size_t bytes, uint32_t nranks, uint32_t rank, std::string segment)
    : base_(base), bytes_(bytes), segment_(std::move(segment)), nranks_(nranks), rank_(rank) {
  static_assert(sizeof(Header) <= kHeaderBytes, "the header fits its page");
  static_assert(offsetof(Header, joined) == kJoinedWord * 4 &&
                    offsetof(Header, broken_by) == kBrokenByWord * 4,
                "BreakSegment's word indices");
}

ShmGroup::~ShmGroup() { munmap(base_, bytes_); }

ShmGroup::Header& ShmGroup::header() const { return *static_cast<Header*>(base_); }

float* ShmGroup::slot(uint32_t r) const {
  return reinterpret_cast<float*>(static_cast<uint8_t*>(base_) + kHeaderBytes) + r * kSlotFloats;
}

bool ShmGroup::RandomName(uint8_t (&name)[kNameBytes], std::string* error) {
  for (size_t filled = 0; filled < kNameBytes;) {
    const ssize_t got = getrandom(name + filled, kNameBytes - filled, 0);
    if (got < 0 && errno != EINTR) {
      *error = std::string("no random bytes for the segment name: ") + std::strerror(errno);
      return false;
    }
    if (got > 0) filled += static_cast<size_t>(got);
  }
  return true;
}

std::unique_ptr<ShmGroup> ShmGroup::Join(const uint8_t (&name)[kNameBytes], uint32_t nranks,
                                         uint32_t rank, uint64_t timeout_ns, std::string* error) {
  std::unique_ptr<ShmGroup> group = Open(name, nranks, rank, error);
  // Join's 0 is "no time at all", WaitForRanks's "no limit".
  if (group == nullptr || !group->WaitForRanks(std::max<uint64_t>(timeout_ns, 1), error)) {
    return nullptr;
  }
  return group;
}

std::unique_ptr<ShmGroup> ShmGroup::Open(const uint8_t (&name)[kNameBytes], uint32_t nranks,
                                         uint32_t rank, std::string* error) {
  if (nranks == 0 || nranks > kMaxRanks || rank >= nranks) {
    *error = "rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
             " ranks: the shared-memory group takes 1 to " + std::to_string(kMaxRanks) + " ranks";
    return nullptr;
  }
  std::string segment = SegmentName(name);
  const size_t bytes = kHeaderBytes + size_t{nranks} * kSlotFloats * sizeof(float);
  void* base = MapSegment(segment, bytes, rank, error);
  if (base == nullptr) return nullptr;
  std::unique_ptr<ShmGroup> group(new ShmGroup(base, bytes, nranks, rank, std::move(segment)));
  Header& h = group->header();
  uint32_t expected = 0;
  __atomic_compare_exchange_n(&h.nranks, &expected, nranks, false, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
  std::string failure;
  if (expected != 0 && expected != nranks) {
    failure = "rank " + std::to_string(rank) + " joins with " + std::to_string(nranks) +
              " ranks, the group was made for " + std::to_string(expected);
  } else if (__atomic_exchange_n(&h.rank_joined[rank], uint8_t{1}, __ATOMIC_ACQ_REL) != 0) {
    failure = "rank " + std::to_string(rank) + " joined twice";
  }
  if (!failure.empty()) {
    group->FailJoin(failure, error);
    return nullptr;
  }
  __atomic_fetch_add(&h.joined, 1u, __ATOMIC_ACQ_REL);
  FutexWakeAll(&h.joined);
  return group;
}

bool ShmGroup::WaitForRanks(uint64_t timeout_ns, std::string* error) {
  const uint64_t deadline = timeout_ns == 0 ? 0 : NowNs() + timeout_ns;
  Header& h = header();
  for (uint32_t joined = Load(&h.joined); joined < nranks_; joined = Load(&h.joined)) {
    bool timed_out = false;
    if (!WaitWhileEqual(&h.joined, joined, deadline, &timed_out)) {
      return FailJoin(timed_out ? "only " + std::to_string(Load(&h.joined)) + " of " +
                                      std::to_string(nranks_) + " ranks joined within " +
                                      std::to_string(static_cast<double>(timeout_ns) * 1e-9) + " s"
                                : BrokenReason(),
                      error);
    }
  }
  shm_unlink(segment_.c_str());  // every rank has it mapped: the name can go
  return true;
}

bool ShmGroup::FailJoin(const std::string& why, std::string* error) {
  shm_unlink(segment_.c_str());  // no rank may join a failed group
  Abort();
  *error = why;
  return false;
}

bool ShmGroup::Broken() const {
  return aborted_.load(std::memory_order_acquire) || Load(&header().broken_by) != 0;
}

std::string ShmGroup::BrokenReason() const {
  const uint32_t by = Load(&header().broken_by);
  if (aborted_.load(std::memory_order_acquire) && (by == 0 || by == rank_ + 1)) {
    return "rank " + std::to_string(rank_) + " aborted the communicator";
  }
  if (by != 0) {
    return "rank " + std::to_string(by - 1) + " of " + std::to_string(nranks_) +
           " aborted the communicator";
  }
  return "";
}

void ShmGroup::Abort() {
  aborted_.store(true, std::memory_order_release);
  uint32_t healthy = 0;
  Header& h = header();
  __atomic_compare_exchange_n(&h.broken_by, &healthy, rank_ + 1, false, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
  FutexWakeAll(&h.generation);
  FutexWakeAll(&h.joined);
}

bool ShmGroup::WaitWhileEqual(uint32_t* word, uint32_t value, uint64_t deadline_ns,
                              bool* timed_out) {
  // A short spin only: ranks usually share the cores with each other's kernel threads, and a
  // spinning waiter takes a core from the rank it waits for.
  constexpr int kSpins = 64;
  for (int spin = 0; spin < kSpins; ++spin) {
    if (Load(word) != value) return true;
    if (Broken()) return false;
    CpuRelax();
  }
  constexpr uint64_t kSliceNs = 1000000;  // re-check the broken flag every millisecond
  for (;;) {
    if (Load(word) != value) return true;
    if (Broken()) return false;
    uint64_t slice = kSliceNs;
    if (deadline_ns != 0) {
      const uint64_t now = NowNs();
      if (now >= deadline_ns) {
        *timed_out = true;
        return false;
      }
      slice = std::min(slice, deadline_ns - now);
    }
    FutexWait(word, value, slice);
  }
}

bool ShmGroup::Barrier() {
  Header& h = header();
  const uint32_t generation = Load(&h.generation);
  if (__atomic_add_fetch(&h.arrived, 1u, __ATOMIC_ACQ_REL) == nranks_) {
    __atomic_store_n(&h.arrived, 0u, __ATOMIC_RELAXED);
    __atomic_fetch_add(&h.generation, 1u, __ATOMIC_RELEASE);  // publishes arrived = 0 too
    FutexWakeAll(&h.generation);
    return true;
  }
  bool timed_out = false;
  return WaitWhileEqual(&h.generation, generation, 0, &timed_out);
}

bool ShmGroup::AllReduceSum(float* data, size_t count, std::string* error) {
  for (size_t start = 0; start < count; start += kSlotFloats) {
    const size_t n = std::min(kSlotFloats, count - start);
    float* out = data + start;
    std::memcpy(slot(rank_), out, n * sizeof(float));
    if (!Barrier()) {
      *error = BrokenReason();
      return false;
    }
    // Rank order on every rank: the same sums, the same bits.
    std::memcpy(out, slot(0), n * sizeof(float));
    for (uint32_t r = 1; r < nranks_; ++r) {
      const float* in = slot(r);
      for (size_t i = 0; i < n; ++i) out[i] += in[i];
    }
    if (!Barrier()) {
      *error = BrokenReason();
      return false;
    }
  }
  return true;
}

}  // namespace hwinfer::cpu
