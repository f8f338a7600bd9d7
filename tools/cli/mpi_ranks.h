// tools/cli/mpi_ranks.h — the command line's tensor-parallel ranks: the processes `mpirun -np N`
// started, joined as one Collective over MPI_COMM_WORLD (hwinfer/collective.h), and left at exit:
// MPI_Finalize after success, MPI_Abort after an error so no other rank waits on this one.
// Built with OpenMPI where CMake finds it; without it, joining says so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hwinfer/collective.h"
#include "hwinfer/status.h"

namespace hwinfer::cli {

// Initialises MPI (once per process) and returns this process's rank. |flag| names the option
// in errors ("--tp"). FailedPrecondition when mpirun did not start |ranks| processes (naming
// both), Unsupported when this build has no MPI. Each collective waits at most
// |deadline_seconds| for the other ranks (a wait for rank 0's next step: without a bound).
StatusOr<std::shared_ptr<Collective>> JoinMpiRanks(int64_t ranks, double deadline_seconds);

// True when this process was started by mpirun (OpenMPI's, MPICH's or a PMIx launcher's
// environment).
bool StartedByMpirun();

// The device rank |rank| of |ranks| runs on: entry |rank| of |devices| ("A,B", one per rank) when
// given (InvalidArgument for another count), else |device| (every rank the same selector).
StatusOr<std::string> RankDevice(const std::string& devices, const std::string& device,
                                 int64_t ranks, int rank);

// Ends this process's part in MPI if it joined: after |exit_code| 0 MPI_Finalize, else MPI_Abort
// with it (mpirun then stops every rank). Returns |exit_code|.
int LeaveMpiRanks(int exit_code);

}  // namespace hwinfer::cli
