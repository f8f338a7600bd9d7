// emu_nccl.cpp — the CPU implementation of emu_nccl.h (the emulator's NCCL stand-in) over the CPU
// plugin's shared-memory group: an id is a magic string and the segment's random name; a
// non-blocking init opens the group at once and waits for the other ranks on its own thread (which
// CommAbort ends); an all-reduce is an asynchronous operation on the emulated stream.
#include "emu_nccl.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "shm_group.h"

namespace {

using hwinfer::cpu::ShmGroup;

constexpr char kIdMagic[] = "hwinfer-emunccl1";  // 16 bytes, then the segment's name
constexpr size_t kMagicBytes = sizeof(kIdMagic) - 1;
static_assert(kMagicBytes + ShmGroup::kNameBytes <= EMUNCCL_UNIQUE_ID_BYTES);
constexpr unsigned kConfigMagic = 0xcafebeef;

// What emuncclGetLastError returns: one process-wide message, as NCCL keeps (no thread_local: a
// dlopen'd module's dynamic TLS upset LeakSanitizer's thread scan in the sanitizer build).
std::mutex g_last_error_mutex;
char g_last_error[1024] = "";

void set_last_error(const std::string& why) {
  std::lock_guard<std::mutex> lock(g_last_error_mutex);
  std::snprintf(g_last_error, sizeof(g_last_error), "%s", why.c_str());
}

emuncclResult_t fail(emuncclResult_t result, const std::string& why) {
  set_last_error(why);
  return result;
}

// One rank's communicator state; shared with its queued all-reduces, which may outlive the handle.
struct CommState {
  std::unique_ptr<ShmGroup> group;
  std::thread joiner;  // a non-blocking init's wait for the other ranks
  std::mutex mutex;
  emuncclResult_t result = emuncclInProgress;  // emuncclSuccess once joined; else what broke it
  std::string error;                           // why, when result is an error

  void finish(emuncclResult_t outcome, const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex);
    if (result != emuncclInProgress && result != emuncclSuccess) return;  // the first error stays
    result = outcome;
    if (outcome != emuncclSuccess) error = why;
  }
  // The result, with a break by another rank seen since (emuncclRemoteError) folded in.
  emuncclResult_t current(std::string* why) {
    std::lock_guard<std::mutex> lock(mutex);
    if (result == emuncclSuccess) {
      const std::string broken = group->BrokenReason();
      if (!broken.empty()) result = emuncclRemoteError, error = broken;
    }
    if (why != nullptr) *why = error;
    return result;
  }
  void wait_for_ranks() {
    std::string why;
    const bool joined = group->WaitForRanks(0, &why);  // no limit: the caller polls and aborts
    finish(joined ? emuncclSuccess : emuncclSystemError, why);
  }
};

}  // namespace

struct EmuNcclComm {
  std::shared_ptr<CommState> state;
};

emuncclResult_t emuncclGetVersion(int* version) {
  if (version == nullptr) return fail(emuncclInvalidArgument, "version is NULL");
  *version = 22809;
  return emuncclSuccess;
}

const char* emuncclGetErrorString(emuncclResult_t result) {
  switch (result) {
    case emuncclSuccess:
      return "no error";
    case emuncclUnhandledCudaError:
      return "unhandled cuda error";
    case emuncclSystemError:
      return "unhandled system error";
    case emuncclInternalError:
      return "internal error";
    case emuncclInvalidArgument:
      return "invalid argument";
    case emuncclInvalidUsage:
      return "invalid usage";
    case emuncclRemoteError:
      return "remote process exited or there was a network error";
    case emuncclInProgress:
      return "NCCL operation in progress";
  }
  return "unknown result code";
}

emuncclResult_t emuncclGetUniqueId(emuncclUniqueId* unique_id) {
  if (unique_id == nullptr) return fail(emuncclInvalidArgument, "uniqueId is NULL");
  emuncclUniqueId id{};
  std::memcpy(id.internal, kIdMagic, kMagicBytes);
  uint8_t name[ShmGroup::kNameBytes];
  std::string why;
  if (!ShmGroup::RandomName(name, &why)) return fail(emuncclSystemError, why);
  std::memcpy(id.internal + kMagicBytes, name, sizeof(name));
  *unique_id = id;
  return emuncclSuccess;
}

emuncclResult_t emuncclCommInitRankConfig(emuncclComm_t* comm, int nranks, emuncclUniqueId comm_id,
                                          int rank, emuncclConfig_t* config) {
  if (comm == nullptr) return fail(emuncclInvalidArgument, "comm is NULL");
  *comm = nullptr;
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return fail(emuncclInvalidArgument,
                "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " ranks");
  }
  if (config != nullptr &&
      (config->size < sizeof(emuncclConfig_t) || config->magic != kConfigMagic)) {
    return fail(emuncclInvalidArgument, "the config was not set by EMUNCCL_CONFIG_INITIALIZER");
  }
  if (std::memcmp(comm_id.internal, kIdMagic, kMagicBytes) != 0) {
    return fail(emuncclInvalidArgument, "the unique id was not made by emuncclGetUniqueId");
  }
  uint8_t name[ShmGroup::kNameBytes];
  std::memcpy(name, comm_id.internal + kMagicBytes, sizeof(name));
  auto state = std::make_shared<CommState>();
  std::string why;
  state->group =
      ShmGroup::Open(name, static_cast<uint32_t>(nranks), static_cast<uint32_t>(rank), &why);
  if (state->group == nullptr) return fail(emuncclInvalidUsage, why);
  const bool blocking = config == nullptr || config->blocking != 0;
  if (blocking) {
    state->wait_for_ranks();
  } else {
    state->joiner = std::thread([raw = state.get()] { raw->wait_for_ranks(); });
  }
  *comm = new EmuNcclComm{state};
  if (!blocking) return emuncclInProgress;
  const emuncclResult_t result = state->current(&why);
  if (result != emuncclSuccess) set_last_error(why);
  return result;
}

emuncclResult_t emuncclCommGetAsyncError(emuncclComm_t comm, emuncclResult_t* async_error) {
  if (comm == nullptr || async_error == nullptr) {
    return fail(emuncclInvalidArgument, "comm or asyncError is NULL");
  }
  std::string why;
  *async_error = comm->state->current(&why);
  if (*async_error != emuncclSuccess && *async_error != emuncclInProgress) set_last_error(why);
  return emuncclSuccess;
}

const char* emuncclGetLastError(emuncclComm_t /*comm*/) { return g_last_error; }

emuncclResult_t emuncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 emuncclDataType_t datatype, emuncclRedOp_t op, emuncclComm_t comm,
                                 emuStream_t stream) {
  if (comm == nullptr) return fail(emuncclInvalidArgument, "comm is NULL");
  if (datatype != emuncclFloat32 || op != emuncclSum) {
    return fail(emuncclInvalidArgument, "the stand-in sums float32 values only");
  }
  std::string why;
  const emuncclResult_t state = comm->state->current(&why);
  if (state == emuncclInProgress) {
    return fail(emuncclInvalidUsage, "the communicator's init has not finished");
  }
  if (state != emuncclSuccess) return fail(state, why);
  if (count == 0) return emuncclSuccess;
  if (sendbuff == nullptr || recvbuff == nullptr) {
    return fail(emuncclInvalidArgument, "sendbuff or recvbuff is NULL");
  }
  const emuError_t queued =
      emu::enqueue_async(stream, [shared = comm->state, sendbuff, recvbuff, count]() {
        auto* values = static_cast<float*>(recvbuff);
        if (sendbuff != recvbuff) std::memmove(values, sendbuff, count * sizeof(float));
        std::string broken;
        if (!shared->group->AllReduceSum(values, count, &broken)) {
          shared->finish(emuncclRemoteError, broken);
        }
        return emuSuccess;  // as an NCCL kernel: the stream goes on, the error is the comm's
      });
  if (queued == emuErrorStreamCaptureUnsupported) {
    return fail(emuncclInvalidUsage, "the stand-in cannot capture collectives");
  }
  if (queued != emuSuccess) return fail(emuncclInvalidArgument, "not a stream of the emulator");
  return emuncclSuccess;
}

emuncclResult_t emuncclCommAbort(emuncclComm_t comm) {
  if (comm == nullptr) return emuncclSuccess;
  CommState& state = *comm->state;
  state.group->Abort();  // ends the join and every wait of this rank; tells the others
  if (state.joiner.joinable()) state.joiner.join();
  state.finish(emuncclSystemError, "this rank aborted the communicator");
  delete comm;
  return emuncclSuccess;
}

emuncclResult_t emuncclCommDestroy(emuncclComm_t comm) {
  if (comm == nullptr) return emuncclSuccess;
  if (comm->state->current(nullptr) == emuncclInProgress) return emuncclCommAbort(comm);
  if (comm->state->joiner.joinable()) comm->state->joiner.join();
  delete comm;
  return emuncclSuccess;
}

void* emunccl_symbol(const char* name) {
  struct Entry {
    const char* name;
    void* address;
  };
  static const Entry kEntries[] = {
      {"emuncclGetVersion", reinterpret_cast<void*>(&emuncclGetVersion)},
      {"emuncclGetErrorString", reinterpret_cast<void*>(&emuncclGetErrorString)},
      {"emuncclGetUniqueId", reinterpret_cast<void*>(&emuncclGetUniqueId)},
      {"emuncclCommInitRankConfig", reinterpret_cast<void*>(&emuncclCommInitRankConfig)},
      {"emuncclCommGetAsyncError", reinterpret_cast<void*>(&emuncclCommGetAsyncError)},
      {"emuncclGetLastError", reinterpret_cast<void*>(&emuncclGetLastError)},
      {"emuncclAllReduce", reinterpret_cast<void*>(&emuncclAllReduce)},
      {"emuncclCommAbort", reinterpret_cast<void*>(&emuncclCommAbort)},
      {"emuncclCommDestroy", reinterpret_cast<void*>(&emuncclCommDestroy)},
  };
  for (const Entry& entry : kEntries) {
    if (std::strcmp(entry.name, name) == 0) return entry.address;
  }
  return nullptr;
}
