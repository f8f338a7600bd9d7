// mpi_ranks.cpp — see mpi_ranks.h. Every collective is started non-blocking and polled with
// MPI_Test, so the deadline is checked by the waiting thread itself (no watchdog thread calling
// into MPI) and an idle rank sleeps between polls instead of spinning a core that the other
// ranks' kernels need.
#include "mpi_ranks.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cli_common.h"
#include "hwinfer/llama_executor.h"

#ifdef HWINFER_HAVE_MPI
// The C API only: OpenMPI's and MPICH's deprecated C++ bindings need a library of their own.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace hwinfer::cli {

bool StartedByMpirun() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

StatusOr<std::string> RankDevice(const std::string& devices, const std::string& device,
                                 int64_t ranks, int rank) {
  if (devices.empty()) return device;
  const std::vector<std::string> list = SplitCommas(devices);
  if (static_cast<int64_t>(list.size()) != ranks) {
    return InvalidArgument(
        fmt::format("--devices names {} devices; --tp {} takes one per rank", list.size(), ranks));
  }
  return list[static_cast<size_t>(rank)];
}

#ifdef HWINFER_HAVE_MPI
namespace {

// This process's rank, once joined (until it leaves).
std::shared_ptr<Collective> joined;

class MpiCollective : public Collective {
 public:
  MpiCollective(int rank, int size, double deadline_seconds)
      : rank_(rank), size_(size), deadline_seconds_(deadline_seconds) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  double deadline_seconds() const override { return deadline_seconds_; }

  Status AllReduceSum(float* data, int64_t count, const std::string& what) override {
    HWINFER_RETURN_IF_ERROR(CheckCount(count, what));
    if (!broken_.ok()) return broken_;
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                   &request);
    return Wait(&request, what, false);
  }

  Status Broadcast(void* data, int64_t bytes, const std::string& what, bool idle) override {
    HWINFER_RETURN_IF_ERROR(CheckCount(bytes, what));
    if (!broken_.ok()) return broken_;
    MPI_Request request;
    MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD, &request);
    return Wait(&request, what, idle);
  }

  Status AllGather(const void* data, int64_t bytes, void* out, const std::string& what) override {
    HWINFER_RETURN_IF_ERROR(CheckCount(bytes, what));
    if (!broken_.ok()) return broken_;
    MPI_Request request;
    MPI_Iallgather(data, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes), MPI_BYTE,
                   MPI_COMM_WORLD, &request);
    return Wait(&request, what, false);
  }

 private:
  static Status CheckCount(int64_t count, const std::string& what) {
    if (count >= 0 && count <= INT32_MAX) return Status::Ok();
    return InvalidArgument(
        fmt::format("{}: {} elements; MPI takes at most {}", what, count, INT32_MAX));
  }

  // Polls |request| until it completes or, unless |idle|, the deadline passes (the group is then
  // broken: MPI cannot cancel a collective, so this rank can only report and leave).
  Status Wait(MPI_Request* request, const std::string& what, bool idle) {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t polls = 0;; ++polls) {
      int done = 0;
      MPI_Test(request, &done, MPI_STATUS_IGNORE);
      if (done != 0) return Status::Ok();
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!idle && waited > deadline_seconds_) {
        broken_ = Unavailable(fmt::format(
            "rank {} of {}: no answer from the other ranks within {} s in {}; a rank has died "
            "or hangs (--tp-timeout sets the bound)",
            rank_, size_, deadline_seconds_, what));
        return broken_;
      }
      // Spin briefly (an all-reduce inside a step completes in microseconds), then sleep.
      if (polls > 2000) {
        std::this_thread::sleep_for(std::chrono::microseconds(waited > 1.0 ? 1000 : 50));
      }
    }
  }

  int rank_, size_;
  double deadline_seconds_;
  Status broken_;
};

}  // namespace

StatusOr<std::shared_ptr<Collective>> JoinMpiRanks(int64_t ranks, double deadline_seconds) {
  if (joined == nullptr) {
    int provided = 0;
    // Serialized: the bench's real-clock driver calls the executor from a worker thread.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    joined = std::make_shared<MpiCollective>(rank, size, deadline_seconds);
  }
  if (joined->size() != ranks) {
    return FailedPrecondition(fmt::format(
        "--tp {} needs {} MPI processes, one per rank (mpirun -np {} hwinfer ...); this "
        "process is one of {}",
        ranks, ranks, ranks, joined->size()));
  }
  return joined;
}

int LeaveMpiRanks(int exit_code) {
  if (joined == nullptr) return exit_code;
  // Rank 0 done: the other ranks stop following (they return 0 and leave here too).
  if (exit_code == 0 && joined->rank() == 0) {
    const Status ended = LlamaExecutor::EndTensorParallel(*joined);
    if (!ended.ok()) exit_code = ReportError(ended);
  }
  joined.reset();
  if (exit_code != 0) MPI_Abort(MPI_COMM_WORLD, exit_code);
  MPI_Finalize();
  return exit_code;
}

#else  // no MPI in this build

StatusOr<std::shared_ptr<Collective>> JoinMpiRanks(int64_t ranks, double) {
  return Unsupported(fmt::format(
      "--tp {} runs one rank per MPI process, and this build has no MPI: install OpenMPI "
      "(Debian: libopenmpi-dev openmpi-bin; tools/setup.sh does) and build again",
      ranks));
}

int LeaveMpiRanks(int exit_code) { return exit_code; }

#endif

}  // namespace hwinfer::cli
