// emu_runtime.cpp — the GPU emulator's host runtime (emu_runtime.h): one device, host memory,
// streams that run every operation at enqueue (or record it while capturing), graphs that run the
// recorded operations in order, events stamped with the host clock at record.
//
// Allocations are tracked (size per pointer) so MemGetInfo reports what is left of the device's
// kEmuMemoryBytes and an allocation beyond it fails with emuErrorMemoryAllocation, as a GPU's
// would. Must not run kernels (emu_launch.cpp does) or know about hwinfer's handles.
#include "emu_runtime.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "emu_device.h"

// What a capturing stream has recorded so far.
struct EmuCapture {
  std::vector<emu::Operation> operations;
  bool invalidated = false;
};

struct EmuStream {
  unsigned flags = 0;
  std::unique_ptr<EmuCapture> capture;  // non-null while capturing
};

struct EmuGraph {
  std::vector<emu::Operation> operations;
};

struct EmuGraphExec {
  std::vector<emu::Operation> operations;
};

struct EmuEvent {
  bool recorded = false;
  std::chrono::steady_clock::time_point when{};
};

namespace {

constexpr size_t kAlignment = 256;

std::mutex g_memory_mutex;
std::map<void*, size_t>& allocations() {  // pointer -> bytes, device and host allocations
  static std::map<void*, size_t> map;
  return map;
}
uint64_t g_device_bytes = 0;  // live device allocations

emuError_t allocate(void** pointer, size_t bytes, bool device) {
  if (pointer == nullptr) return emuErrorInvalidValue;
  *pointer = nullptr;
  if (bytes == 0) return emuSuccess;
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  if (device && (bytes > kEmuMemoryBytes || g_device_bytes + bytes > kEmuMemoryBytes)) {
    return emuErrorMemoryAllocation;
  }
  // Exactly |bytes| (no rounding up), so an AddressSanitizer build sees a kernel's overrun.
  void* memory = nullptr;
  if (posix_memalign(&memory, kAlignment, bytes) != 0) return emuErrorMemoryAllocation;
  allocations()[memory] = device ? bytes : 0;
  if (device) g_device_bytes += bytes;
  *pointer = memory;
  return emuSuccess;
}

emuError_t release(void* pointer) {
  if (pointer == nullptr) return emuSuccess;
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  const auto found = allocations().find(pointer);
  if (found == allocations().end()) return emuErrorInvalidValue;
  g_device_bytes -= found->second;
  allocations().erase(found);
  std::free(pointer);
  return emuSuccess;
}

// On a capturing stream, an operation that cannot be captured: invalidates the capture and returns
// emuErrorStreamCaptureUnsupported (as CUDA does); emuSuccess otherwise.
emuError_t refuse_while_capturing(emuStream_t stream) {
  if (!emu::capturing(stream)) return emuSuccess;
  emu::invalidate_capture(stream);
  return emuErrorStreamCaptureUnsupported;
}

// |error|, also kept as the thread's last error when it is one (emuGetLastError reads it).
emuError_t recorded(emuError_t error) {
  if (error != emuSuccess) emu::set_last_error(error);
  return error;
}

emuError_t run_all(const std::vector<emu::Operation>& operations) {
  for (const emu::Operation& operation : operations) {
    const emuError_t error = operation();
    if (error != emuSuccess) return error;
  }
  return emuSuccess;
}

}  // namespace

namespace emu {

bool capturing(emuStream_t stream) { return stream != nullptr && stream->capture != nullptr; }

void record(emuStream_t stream, Operation operation) {
  stream->capture->operations.push_back(std::move(operation));
}

void invalidate_capture(emuStream_t stream) {
  if (capturing(stream)) stream->capture->invalidated = true;
}

}  // namespace emu

emuError_t emuGetDeviceCount(int* count) {
  if (count == nullptr) return emuErrorInvalidValue;
  *count = 1;
  return emuSuccess;
}

emuError_t emuGetDeviceProperties(emuDeviceProp* prop, int device) {
  if (prop == nullptr) return emuErrorInvalidValue;
  if (device != 0) return emuErrorInvalidDevice;
  *prop = emuDeviceProp{};
  std::snprintf(prop->name, sizeof(prop->name), "%s",
                HWINFER_GPU_EMU_WARP_SIZE == 64 ? "hwinfer GPU emulator (CPU, 64-lane wavefronts)"
                                                : "hwinfer GPU emulator (CPU)");
  prop->totalGlobalMem = kEmuMemoryBytes;
  prop->sharedMemPerBlock = kEmuDefaultDynamicShared;
  prop->sharedMemPerBlockOptin = kEmuMaxDynamicShared;
  prop->multiProcessorCount = kEmuMultiprocessors;
  prop->maxThreadsPerBlock = 1024;
  prop->warpSize = HWINFER_GPU_EMU_WARP_SIZE;
  prop->integrated = 0;
  prop->major = 9;
  prop->minor = 0;
  return emuSuccess;
}

emuError_t emuSetDevice(int device) { return device == 0 ? emuSuccess : emuErrorInvalidDevice; }

emuError_t emuGetDevice(int* device) {
  if (device == nullptr) return emuErrorInvalidValue;
  *device = 0;
  return emuSuccess;
}

emuError_t emuDriverGetVersion(int* version) {
  if (version == nullptr) return emuErrorInvalidValue;
  *version = 1;
  return emuSuccess;
}

emuError_t emuRuntimeGetVersion(int* version) { return emuDriverGetVersion(version); }

emuError_t emuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return emuErrorInvalidValue;
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  *total_bytes = kEmuMemoryBytes;
  *free_bytes = kEmuMemoryBytes - g_device_bytes;
  return emuSuccess;
}

emuError_t emuDeviceSynchronize() { return emuSuccess; }

emuError_t emuGetLastError() {
  const emuError_t error = emu::last_error();
  emu::set_last_error(emuSuccess);
  return error;
}

emuError_t emuPeekAtLastError() { return emu::last_error(); }

const char* emuGetErrorString(emuError_t error) {
  switch (error) {
    case emuSuccess:
      return "no error";
    case emuErrorInvalidValue:
      return "invalid argument";
    case emuErrorMemoryAllocation:
      return "out of memory";
    case emuErrorInvalidConfiguration:
      return "invalid configuration argument";
    case emuErrorInvalidDevice:
      return "invalid device ordinal";
    case emuErrorInvalidResourceHandle:
      return "invalid resource handle";
    case emuErrorNotReady:
      return "device not ready";
    case emuErrorLaunchOutOfResources:
      return "too many resources requested for launch";
    case emuErrorIllegalState:
      return "the operation cannot be performed in the present state";
    case emuErrorStreamCaptureUnsupported:
      return "operation not permitted when stream is capturing";
    case emuErrorStreamCaptureInvalidated:
      return "operation failed due to a previous error during capture";
  }
  return "unknown error";
}

// The memory calls record a failure as the thread's last error too, as CUDA and HIP do for every
// failed call: a launcher that reads GetLastError after an allocation failed sees it.
emuError_t emuMalloc(void** pointer, size_t bytes) {
  return recorded(allocate(pointer, bytes, true));
}
emuError_t emuFree(void* pointer) { return recorded(release(pointer)); }
emuError_t emuHostAlloc(void** pointer, size_t bytes, unsigned /*flags*/) {
  return recorded(allocate(pointer, bytes, false));
}
emuError_t emuFreeHost(void* pointer) { return recorded(release(pointer)); }

emuError_t emuHostGetDevicePointer(void** device_pointer, void* host_pointer, unsigned flags) {
  if (device_pointer == nullptr || host_pointer == nullptr || flags != 0) {
    return emuErrorInvalidValue;
  }
  *device_pointer = host_pointer;
  return emuSuccess;
}

emuError_t emuMemcpy(void* dst, const void* src, size_t bytes, emuMemcpyKind /*kind*/) {
  if (bytes == 0) return emuSuccess;
  if (dst == nullptr || src == nullptr) return emuErrorInvalidValue;
  std::memmove(dst, src, bytes);
  return emuSuccess;
}

emuError_t emuMemcpyAsync(void* dst, const void* src, size_t bytes, emuMemcpyKind kind,
                          emuStream_t stream) {
  if (!emu::capturing(stream)) return emuMemcpy(dst, src, bytes, kind);
  if (bytes != 0 && (dst == nullptr || src == nullptr)) {
    emu::invalidate_capture(stream);
    return emuErrorInvalidValue;
  }
  emu::record(stream, [=]() { return emuMemcpy(dst, src, bytes, kind); });
  return emuSuccess;
}

emuError_t emuMemset(void* dst, int value, size_t bytes) {
  if (bytes == 0) return emuSuccess;
  if (dst == nullptr) return emuErrorInvalidValue;
  std::memset(dst, value, bytes);
  return emuSuccess;
}

emuError_t emuMemsetAsync(void* dst, int value, size_t bytes, emuStream_t stream) {
  if (!emu::capturing(stream)) return emuMemset(dst, value, bytes);
  if (bytes != 0 && dst == nullptr) {
    emu::invalidate_capture(stream);
    return emuErrorInvalidValue;
  }
  emu::record(stream, [=]() { return emuMemset(dst, value, bytes); });
  return emuSuccess;
}

emuError_t emuStreamCreateWithFlags(emuStream_t* stream, unsigned flags) {
  if (stream == nullptr) return emuErrorInvalidValue;
  *stream = new EmuStream{flags, nullptr};
  return emuSuccess;
}

emuError_t emuStreamDestroy(emuStream_t stream) {
  if (stream == nullptr) return emuErrorInvalidResourceHandle;
  delete stream;
  return emuSuccess;
}

emuError_t emuStreamSynchronize(emuStream_t stream) { return refuse_while_capturing(stream); }
emuError_t emuStreamQuery(emuStream_t stream) { return refuse_while_capturing(stream); }

emuError_t emuStreamWaitEvent(emuStream_t stream, emuEvent_t event, unsigned /*flags*/) {
  if (event == nullptr) return emuErrorInvalidResourceHandle;
  return refuse_while_capturing(stream);
}

emuError_t emuStreamBeginCapture(emuStream_t stream, emuStreamCaptureMode mode) {
  if (stream == nullptr) return emuErrorStreamCaptureUnsupported;  // the legacy default stream
  if (mode != emuStreamCaptureModeGlobal && mode != emuStreamCaptureModeThreadLocal &&
      mode != emuStreamCaptureModeRelaxed) {
    return emuErrorInvalidValue;
  }
  if (stream->capture != nullptr) return emuErrorIllegalState;
  stream->capture = std::make_unique<EmuCapture>();
  return emuSuccess;
}

emuError_t emuStreamEndCapture(emuStream_t stream, emuGraph_t* graph) {
  if (stream == nullptr || graph == nullptr) return emuErrorInvalidValue;
  if (stream->capture == nullptr) return emuErrorIllegalState;
  const std::unique_ptr<EmuCapture> capture = std::move(stream->capture);
  *graph = nullptr;
  if (capture->invalidated) return emuErrorStreamCaptureInvalidated;
  // Test hook: every capture fails as an invalidated one would (the executor's fallback to direct
  // launches is tested with it).
  if (std::getenv("HWINFER_GPUEMU_CAPTURE_FAULT") != nullptr) {
    return emuErrorStreamCaptureInvalidated;
  }
  *graph = new EmuGraph{std::move(capture->operations)};
  return emuSuccess;
}

emuError_t emuStreamIsCapturing(emuStream_t stream, emuStreamCaptureStatus* status) {
  if (status == nullptr) return emuErrorInvalidValue;
  if (!emu::capturing(stream)) {
    *status = emuStreamCaptureStatusNone;
  } else {
    *status = stream->capture->invalidated ? emuStreamCaptureStatusInvalidated
                                           : emuStreamCaptureStatusActive;
  }
  return emuSuccess;
}

emuError_t emuGraphInstantiate(emuGraphExec_t* exec, emuGraph_t graph, unsigned long long flags) {
  if (exec == nullptr || graph == nullptr || flags != 0) return emuErrorInvalidValue;
  *exec = new EmuGraphExec{graph->operations};
  return emuSuccess;
}

emuError_t emuGraphLaunch(emuGraphExec_t exec, emuStream_t stream) {
  if (exec == nullptr) return emuErrorInvalidValue;
  if (emu::capturing(stream)) {
    emu::record(stream, [exec]() { return run_all(exec->operations); });
    return emuSuccess;
  }
  return run_all(exec->operations);
}

emuError_t emuGraphExecDestroy(emuGraphExec_t exec) {
  if (exec == nullptr) return emuErrorInvalidValue;
  delete exec;
  return emuSuccess;
}

emuError_t emuGraphDestroy(emuGraph_t graph) {
  if (graph == nullptr) return emuErrorInvalidValue;
  delete graph;
  return emuSuccess;
}

emuError_t emuEventCreate(emuEvent_t* event) {
  if (event == nullptr) return emuErrorInvalidValue;
  *event = new EmuEvent;
  return emuSuccess;
}

emuError_t emuEventDestroy(emuEvent_t event) {
  if (event == nullptr) return emuErrorInvalidResourceHandle;
  delete event;
  return emuSuccess;
}

emuError_t emuEventRecord(emuEvent_t event, emuStream_t stream) {
  if (event == nullptr) return emuErrorInvalidResourceHandle;
  if (const emuError_t error = refuse_while_capturing(stream); error != emuSuccess) return error;
  event->recorded = true;
  event->when = std::chrono::steady_clock::now();
  return emuSuccess;
}

emuError_t emuEventSynchronize(emuEvent_t event) {
  return event == nullptr ? emuErrorInvalidResourceHandle : emuSuccess;
}

emuError_t emuEventQuery(emuEvent_t event) {
  return event == nullptr ? emuErrorInvalidResourceHandle : emuSuccess;
}

emuError_t emuEventElapsedTime(float* milliseconds, emuEvent_t start, emuEvent_t end) {
  if (milliseconds == nullptr) return emuErrorInvalidValue;
  if (start == nullptr || end == nullptr) return emuErrorInvalidResourceHandle;
  if (!start->recorded || !end->recorded) return emuErrorInvalidResourceHandle;
  const std::chrono::duration<double, std::milli> elapsed = end->when - start->when;
  *milliseconds = static_cast<float>(elapsed.count());
  return emuSuccess;
}
