// vendor_comm.cpp — see vendor_comm.h. The only file of backends/cuda that includes the vendor
// folder's collective header (gpu_vendor_comm.h: nccl.h's types in the cuda build, for TYPES
// only: the entries come from dlsym and their pointer types are decltype'd from the header's
// declarations; the in-process stand-in in the emulator's).
#include "vendor_comm.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#if HWINFER_GPU_HAS_COMM
#include "gpu_vendor_comm.h"  // the plugin's vendor folder: comm::, HWINFER_GPU_COMM
#include "vendor_library.h"
#endif

namespace hwinfer::gpu {

#if HWINFER_GPU_HAS_COMM

// One rank's communicator; the streams that ran its all-reduces share it (all_reduced_by).
struct CommState {
  std::mutex mutex;             // held around every library call on |handle|
  comm::Comm handle = nullptr;  // null once aborted (CommAbort frees it) or destroyed
  bool aborted = false;
  std::string broken;  // the first error the library reported for it ("" while healthy)
  uint32_t rank = 0, nranks = 0;
};

namespace {

namespace entry {
using GetUniqueId = decltype(&HWINFER_GPU_COMM(GetUniqueId));
using CommInitRankConfig = decltype(&HWINFER_GPU_COMM(CommInitRankConfig));
using CommGetAsyncError = decltype(&HWINFER_GPU_COMM(CommGetAsyncError));
using AllReduce = decltype(&HWINFER_GPU_COMM(AllReduce));
using CommAbort = decltype(&HWINFER_GPU_COMM(CommAbort));
using CommDestroy = decltype(&HWINFER_GPU_COMM(CommDestroy));
using GetErrorString = decltype(&HWINFER_GPU_COMM(GetErrorString));
using GetLastError = decltype(&HWINFER_GPU_COMM(GetLastError));
}  // namespace entry

// The library, opened once per process at the first use, or why it is not.
struct CommLibrary {
  VendorLibrary opened;
  entry::GetUniqueId get_unique_id = nullptr;
  entry::CommInitRankConfig init_rank_config = nullptr;
  entry::CommGetAsyncError get_async_error = nullptr;
  entry::AllReduce all_reduce = nullptr;
  entry::CommAbort abort = nullptr;
  entry::CommDestroy destroy = nullptr;
  entry::GetErrorString error_string = nullptr;
  entry::GetLastError last_error = nullptr;
};

CommLibrary load_comm_library() {
  CommLibrary library;
  library.opened = open_vendor_library(
      comm::kInProcess, comm::kInProcessFile, comm::in_process_symbol, comm::library_files(),
      [&](const EntryLookup& lookup, std::string* missing) {
        const auto entry = [&](const char* suffix, auto* out) {
          resolve_entry(lookup, comm::kSymbolPrefix, suffix, out, missing);
        };
        entry("GetUniqueId", &library.get_unique_id);
        entry("CommInitRankConfig", &library.init_rank_config);  // NCCL 2.14 and later
        entry("CommGetAsyncError", &library.get_async_error);
        entry("AllReduce", &library.all_reduce);
        entry("CommAbort", &library.abort);
        entry("CommDestroy", &library.destroy);
        entry("GetErrorString", &library.error_string);
        entry("GetLastError", &library.last_error);
        return missing->empty();
      });
  return library;
}

const CommLibrary& comm_library() {
  static const CommLibrary loaded = load_comm_library();  // thread-safe, once per process
  return loaded;
}

// The library, or UNAVAILABLE naming the files tried.
hwinfer_error* require_library(const char* slot, const CommLibrary** out) {
  const CommLibrary& loaded = comm_library();
  if (!loaded.opened.loaded) {
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "%s %s: %s is not loaded: %s",
                              kPluginName, slot, comm::kName, loaded.opened.why_not.c_str());
  }
  *out = &loaded;
  return nullptr;
}

// "<library>'s <call> failed: <code> (<its string>; <its last error>)" for a result other than
// success; what an error of |slot| says after the plugin and the rank.
std::string result_text(const CommLibrary& library, comm::Result result, const char* call,
                        comm::Comm handle) {
  const char* last = library.last_error(handle);
  return std::string(comm::kName) + " " + call +
         " failed: " + std::to_string(static_cast<int>(result)) + " (" +
         library.error_string(result) +
         (last != nullptr && *last != 0 ? std::string("; ") + last : std::string()) + ")";
}

hwinfer_error* comm_failure(uint32_t status, const char* slot, uint32_t rank, uint32_t nranks,
                            const std::string& why) {
  return hwinfer_make_error(status, "%s %s (rank %" PRIu32 " of %" PRIu32 "): %s", kPluginName,
                            slot, rank, nranks, why.c_str());
}

// Polls |handle|'s state until it is no longer in progress or |deadline| passed; the state.
comm::Result poll_state(const CommLibrary& library, comm::Comm handle,
                        std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    comm::Result state = comm::kInProgress;
    const comm::Result asked = library.get_async_error(handle, &state);
    if (asked != comm::kSuccess) return asked;
    if (state != comm::kInProgress || std::chrono::steady_clock::now() >= deadline) return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The first error |state| shows (aborted, or broken as the library reported), "" while healthy.
// The caller holds state.mutex.
std::string broken_reason(const CommLibrary& library, CommState& state) {
  if (state.aborted) return "the communicator was aborted";
  if (state.broken.empty() && state.handle != nullptr) {
    comm::Result async = comm::kSuccess;
    const comm::Result asked = library.get_async_error(state.handle, &async);
    if (asked != comm::kSuccess) {
      state.broken = result_text(library, asked, "CommGetAsyncError", state.handle);
    } else if (async != comm::kSuccess && async != comm::kInProgress) {
      state.broken = result_text(library, async, "collective", state.handle);
    }
  }
  return state.broken;
}

}  // namespace

hwinfer_error* GpuBackend::create_comm_id(hwinfer_plugin& plugin, hwinfer_comm_id* out) {
  (void)plugin;
  const CommLibrary* library = nullptr;
  GPU_RETURN_IF_ERROR(require_library("comm_create_id", &library));
  static_assert(sizeof(comm::UniqueId) <= HWINFER_COMM_ID_BYTES, "the id fits the ABI's");
  comm::UniqueId unique{};
  const comm::Result result = library->get_unique_id(&unique);
  if (result != comm::kSuccess) {
    return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE, "%s comm_create_id: %s", kPluginName,
                              result_text(*library, result, "GetUniqueId", nullptr).c_str());
  }
  hwinfer_comm_id id{};
  std::memcpy(id.bytes, &unique, sizeof(unique));
  *out = id;
  return nullptr;
}

hwinfer_error* GpuBackend::init_comm(hwinfer_device& device, const hwinfer_comm_id& id,
                                     uint32_t nranks, uint32_t rank, uint64_t timeout_ns,
                                     hwinfer_comm** out) {
  const CommLibrary* library = nullptr;
  GPU_RETURN_IF_ERROR(require_library("comm_init", &library));
  GPU_RETURN_IF_ERROR(use_device(&device, "comm_init"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  comm::UniqueId unique{};
  std::memcpy(&unique, id.bytes, sizeof(unique));
  comm::Config config = comm::default_config();
  config.blocking = 0;  // so that a join short of ranks can be given up (CommAbort)
  comm::Comm handle = nullptr;
  comm::Result result = library->init_rank_config(&handle, static_cast<int>(nranks), unique,
                                                  static_cast<int>(rank), &config);
  if (result == comm::kSuccess || result == comm::kInProgress) {
    result = poll_state(*library, handle, deadline);
  }
  if (result != comm::kSuccess) {
    const bool timed_out = result == comm::kInProgress;
    std::string why = timed_out ? "not every rank joined within " +
                                      std::to_string(static_cast<double>(timeout_ns) * 1e-9) + " s"
                                : result_text(*library, result, "CommInitRankConfig", handle);
    if (handle != nullptr) (void)library->abort(handle);
    const uint32_t status = result == comm::kInvalidArgument || result == comm::kInvalidUsage
                                ? HWINFER_STATUS_INVALID_ARGUMENT
                                : HWINFER_STATUS_UNAVAILABLE;
    return comm_failure(status, "comm_init", rank, nranks, why);
  }
  auto made = std::make_unique<hwinfer_comm>();
  made->state = std::make_shared<CommState>();
  made->state->handle = handle;
  made->state->rank = rank;
  made->state->nranks = nranks;
  *out = made.release();
  return nullptr;
}

hwinfer_error* GpuBackend::all_reduce_sum_f32(hwinfer_comm& comm, hwinfer_stream& stream,
                                              hwinfer_buffer& buffer, uint64_t offset,
                                              uint64_t count) {
  const CommLibrary* library = nullptr;
  GPU_RETURN_IF_ERROR(require_library("comm_all_reduce_sum_f32", &library));
  GPU_RETURN_IF_ERROR(use_device(stream.device, "comm_all_reduce_sum_f32"));
  CommState& state = *comm.state;
  std::lock_guard<std::mutex> lock(state.mutex);
  const std::string broken = broken_reason(*library, state);
  if (!broken.empty()) {
    return comm_failure(HWINFER_STATUS_UNAVAILABLE, "comm_all_reduce_sum_f32", state.rank,
                        state.nranks, broken);
  }
  uint8_t* values = buffer.device_ptr + offset;
  comm::Result result =
      library->all_reduce(values, values, static_cast<size_t>(count), comm::kFloat32, comm::kSum,
                          state.handle, stream.stream);
  if (result == comm::kInProgress) {  // a non-blocking communicator may still be enqueueing
    result = poll_state(*library, state.handle,
                        std::chrono::steady_clock::now() + std::chrono::seconds(60));
  }
  if (result != comm::kSuccess) {
    return comm_failure(HWINFER_STATUS_UNAVAILABLE, "comm_all_reduce_sum_f32", state.rank,
                        state.nranks, result_text(*library, result, "AllReduce", state.handle));
  }
  std::vector<std::shared_ptr<CommState>>& ran = stream.all_reduced_by;
  if (std::find(ran.begin(), ran.end(), comm.state) == ran.end()) ran.push_back(comm.state);
  return nullptr;
}

hwinfer_error* GpuBackend::comm_error(hwinfer_comm& comm) {
  const CommLibrary* library = nullptr;
  GPU_RETURN_IF_ERROR(require_library("comm_get_error", &library));
  CommState& state = *comm.state;
  std::lock_guard<std::mutex> lock(state.mutex);
  const std::string broken = broken_reason(*library, state);
  if (broken.empty()) return nullptr;
  return comm_failure(HWINFER_STATUS_UNAVAILABLE, "communicator", state.rank, state.nranks, broken);
}

void GpuBackend::abort_comm(hwinfer_comm& comm) {
  CommState& state = *comm.state;  // its handle came from the library, so it is loaded
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.aborted) return;
  state.aborted = true;
  if (state.handle != nullptr && use_device_quietly(comm.device, "comm_abort")) {
    (void)comm_library().abort(state.handle);  // ends this rank's collectives; frees the handle
  }
  state.handle = nullptr;
}

void GpuBackend::destroy_comm(hwinfer_comm* comm) {
  {
    CommState& state = *comm->state;
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.handle != nullptr && use_device_quietly(comm->device, "comm_destroy")) {
      (void)comm_library().destroy(state.handle);
    }
    state.handle = nullptr;
  }
  delete comm;
}

hwinfer_error* comm_error_after_sync(hwinfer_stream* stream) {
  if (stream->all_reduced_by.empty()) return nullptr;
  const std::vector<std::shared_ptr<CommState>> ran = std::move(stream->all_reduced_by);
  stream->all_reduced_by.clear();
  const CommLibrary* library = nullptr;
  GPU_RETURN_IF_ERROR(require_library("stream_synchronize", &library));
  for (const std::shared_ptr<CommState>& state : ran) {
    std::lock_guard<std::mutex> lock(state->mutex);
    const std::string broken = broken_reason(*library, *state);
    if (!broken.empty()) {
      return comm_failure(HWINFER_STATUS_UNAVAILABLE, "stream_synchronize", state->rank,
                          state->nranks, "the stream's all-reduces did not complete: " + broken);
    }
  }
  return nullptr;
}

#else  // no collective library in this build: nothing can have been all-reduced

hwinfer_error* comm_error_after_sync(hwinfer_stream* stream) {
  stream->all_reduced_by.clear();
  return nullptr;
}

#endif  // HWINFER_GPU_HAS_COMM

}  // namespace hwinfer::gpu
