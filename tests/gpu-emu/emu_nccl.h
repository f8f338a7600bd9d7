// emu_nccl.h — the GPU emulator's stand-in for NCCL: the subset of the NCCL API that
// backends/cuda/vendor_comm.cpp calls, spelled emunccl<Name> / EMUNCCL_* with NCCL's values,
// implemented on the CPU in emu_nccl.cpp from NCCL's documentation. Like emu_blas.h for cuBLAS, it
// stands in for the dlopen'd libnccl (vendor_comm.cpp resolves these entries by name,
// emunccl_symbol), so the gpuemu plugin runs the cuda plugin's communicator code in CI, two ranks
// included (processes under mpirun or threads of the conformance suite).
//
// Semantics the plugin relies on, as NCCL documents them: a 128-byte unique id; a communicator
// made with config.blocking = 0 returns emuncclInProgress from CommInitRankConfig and reports
// emuncclInProgress through CommGetAsyncError until every rank joined (then success, or the error
// that ended the join); AllReduce (float32, sum) is enqueued in stream order and returns at once
// (the stream's later work waits for it, emu_runtime.h's asynchronous operations); every rank gets
// the same bits; CommAbort ends a join or an all-reduce in progress on this rank at once, marks the
// communicator broken for the others (their CommGetAsyncError reports emuncclRemoteError) and frees
// the handle; CommDestroy frees the handle. Its transport is the CPU plugin's shared-memory group
// (backends/cpu/shm_group.cpp, compiled in), which unlike NCCL accepts two ranks on one device.
// Collectives cannot be captured (emuncclInvalidUsage). Must not include vendor headers.
#ifndef HWINFER_TESTS_GPU_EMU_EMU_NCCL_H_
#define HWINFER_TESTS_GPU_EMU_EMU_NCCL_H_

#include <climits>
#include <cstddef>

#include "emu_runtime.h"

enum emuncclResult_t : int {
  emuncclSuccess = 0,
  emuncclUnhandledCudaError = 1,
  emuncclSystemError = 2,
  emuncclInternalError = 3,
  emuncclInvalidArgument = 4,
  emuncclInvalidUsage = 5,
  emuncclRemoteError = 6,
  emuncclInProgress = 7,
};

enum emuncclDataType_t : int { emuncclFloat32 = 7 };
enum emuncclRedOp_t : int { emuncclSum = 0 };

inline constexpr int EMUNCCL_UNIQUE_ID_BYTES = 128;
struct emuncclUniqueId {
  char internal[EMUNCCL_UNIQUE_ID_BYTES];
};

// ncclConfig_t's leading fields (size, magic, version) and the one this stand-in reads.
struct emuncclConfig_t {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;  // 0: non-blocking init (INT_MIN, unset: blocking, NCCL's default)
};
#define EMUNCCL_CONFIG_INITIALIZER \
  { sizeof(emuncclConfig_t), 0xcafebeef, 22809, INT_MIN }

struct EmuNcclComm;
using emuncclComm_t = EmuNcclComm*;

emuncclResult_t emuncclGetVersion(int* version);
const char* emuncclGetErrorString(emuncclResult_t result);
emuncclResult_t emuncclGetUniqueId(emuncclUniqueId* unique_id);
emuncclResult_t emuncclCommInitRankConfig(emuncclComm_t* comm, int nranks, emuncclUniqueId comm_id,
                                          int rank, emuncclConfig_t* config);
emuncclResult_t emuncclCommGetAsyncError(emuncclComm_t comm, emuncclResult_t* async_error);
const char* emuncclGetLastError(emuncclComm_t comm);
emuncclResult_t emuncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 emuncclDataType_t datatype, emuncclRedOp_t op, emuncclComm_t comm,
                                 emuStream_t stream);
emuncclResult_t emuncclCommAbort(emuncclComm_t comm);
emuncclResult_t emuncclCommDestroy(emuncclComm_t comm);

// The entry named |name| ("emuncclAllReduce", ...) as dlsym would return it from a library, or
// nullptr for a name this stand-in does not have.
void* emunccl_symbol(const char* name);

#endif  // HWINFER_TESTS_GPU_EMU_EMU_NCCL_H_
