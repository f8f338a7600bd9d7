// emu_runtime.cpp — the GPU emulator's host runtime (emu_runtime.h): one device, host memory,
// streams that run every operation at enqueue (or record it while capturing, or queue it behind
// an asynchronous operation on the stream's worker thread), graphs that run the recorded
// operations in order, events stamped with the host clock when the stream reaches them.
//
// Allocations are tracked (size per pointer) so MemGetInfo reports what is left of the device's
// kEmuMemoryBytes and an allocation beyond it fails with emuErrorMemoryAllocation, as a GPU's
// would. Must not run kernels (emu_launch.cpp does) or know about hwinfer's handles.
#include "emu_runtime.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "emu_device.h"

// What a capturing stream has recorded so far.
struct EmuCapture {
  std::vector<emu::Operation> operations;
  bool invalidated = false;
};

// A stream's queue (emu_runtime.h, "Asynchronous operations"): the operations that wait behind an
// asynchronous one, run in order by the stream's worker thread.
struct EmuQueue {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<emu::Operation> waiting;
  uint64_t submitted = 0;         // operations ever queued
  uint64_t completed = 0;         // of them, finished
  emuError_t error = emuSuccess;  // the first failure, until the stream's next synchronize / query
  bool stopping = false;          // the stream is being destroyed: drain, then end
  std::thread worker;
};

struct EmuStream {
  unsigned flags = 0;
  std::unique_ptr<EmuCapture> capture;  // non-null while capturing
  std::shared_ptr<EmuQueue> queue;      // made by the stream's first asynchronous operation
};

struct EmuGraph {
  std::vector<emu::Operation> operations;
};

struct EmuGraphExec {
  std::vector<emu::Operation> operations;
};

// When an event's stream reached it (shared with a queued record that has yet to run).
struct EmuEventStamp {
  bool recorded = false;
  std::chrono::steady_clock::time_point when{};
};

struct EmuEvent {
  std::shared_ptr<EmuEventStamp> stamp = std::make_shared<EmuEventStamp>();
  std::shared_ptr<EmuQueue> queue;  // recorded behind queued work: complete at |ticket|
  uint64_t ticket = 0;
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

std::mutex g_queues_mutex;
std::set<std::shared_ptr<EmuQueue>>& live_queues() {  // for emuDeviceSynchronize
  static std::set<std::shared_ptr<EmuQueue>> queues;
  return queues;
}

void run_queue(EmuQueue* queue) {
  std::unique_lock<std::mutex> lock(queue->mutex);
  for (;;) {
    queue->changed.wait(lock, [&] { return !queue->waiting.empty() || queue->stopping; });
    if (queue->waiting.empty()) return;  // stopping, and nothing is left
    emu::Operation operation = std::move(queue->waiting.front());
    queue->waiting.pop_front();
    lock.unlock();
    const emuError_t error = operation();
    lock.lock();
    if (error != emuSuccess && queue->error == emuSuccess) queue->error = error;
    ++queue->completed;
    queue->changed.notify_all();
  }
}

bool busy(EmuQueue& queue) {
  std::lock_guard<std::mutex> lock(queue.mutex);
  return queue.completed < queue.submitted;
}

// True while |stream| has queued operations that have not finished.
bool queued(emuStream_t stream) {
  return stream != nullptr && stream->queue != nullptr && busy(*stream->queue);
}

// Appends |operation| to |stream|'s queue (starting its worker at the first); returns its ticket
// (the queue's count of completed operations once it has run).
uint64_t push(emuStream_t stream, emu::Operation operation) {
  if (stream->queue == nullptr) {
    auto queue = std::make_shared<EmuQueue>();
    queue->worker = std::thread(run_queue, queue.get());
    std::lock_guard<std::mutex> lock(g_queues_mutex);
    live_queues().insert(queue);
    stream->queue = std::move(queue);
  }
  EmuQueue& queue = *stream->queue;
  std::lock_guard<std::mutex> lock(queue.mutex);
  queue.waiting.push_back(std::move(operation));
  queue.changed.notify_all();
  return ++queue.submitted;
}

// Waits until |queue| has completed |ticket| operations.
void wait_for(EmuQueue& queue, uint64_t ticket) {
  std::unique_lock<std::mutex> lock(queue.mutex);
  queue.changed.wait(lock, [&] { return queue.completed >= ticket; });
}

// Waits for everything queued on |stream|; returns (and clears) the first queued failure.
emuError_t drain(emuStream_t stream) {
  if (stream == nullptr || stream->queue == nullptr) return emuSuccess;
  EmuQueue& queue = *stream->queue;
  std::unique_lock<std::mutex> lock(queue.mutex);
  queue.changed.wait(lock, [&] { return queue.completed == queue.submitted; });
  return std::exchange(queue.error, emuSuccess);
}

bool event_complete(const EmuEvent& event) {
  if (event.queue == nullptr) return true;
  std::lock_guard<std::mutex> lock(event.queue->mutex);
  return event.queue->completed >= event.ticket;
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

bool deferring(emuStream_t stream) { return capturing(stream) || queued(stream); }

void defer(emuStream_t stream, Operation operation) {
  if (capturing(stream)) {
    stream->capture->operations.push_back(std::move(operation));
  } else {
    push(stream, std::move(operation));
  }
}

emuError_t submit(emuStream_t stream, Operation operation) {
  if (!deferring(stream)) return operation();
  defer(stream, std::move(operation));
  return emuSuccess;
}

emuError_t enqueue_async(emuStream_t stream, Operation operation) {
  if (stream == nullptr) return emuErrorInvalidResourceHandle;
  if (capturing(stream)) {
    invalidate_capture(stream);
    return emuErrorStreamCaptureUnsupported;
  }
  push(stream, std::move(operation));
  return emuSuccess;
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

emuError_t emuDeviceSynchronize() {
  std::vector<std::shared_ptr<EmuQueue>> queues;
  {
    std::lock_guard<std::mutex> lock(g_queues_mutex);
    queues.assign(live_queues().begin(), live_queues().end());
  }
  for (const std::shared_ptr<EmuQueue>& queue : queues) {
    std::unique_lock<std::mutex> lock(queue->mutex);
    queue->changed.wait(lock, [&] { return queue->completed == queue->submitted; });
  }
  return emuSuccess;
}

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
  if (!emu::deferring(stream)) return emuMemcpy(dst, src, bytes, kind);
  if (bytes != 0 && (dst == nullptr || src == nullptr)) {
    emu::invalidate_capture(stream);
    return emuErrorInvalidValue;
  }
  emu::defer(stream, [=]() { return emuMemcpy(dst, src, bytes, kind); });
  return emuSuccess;
}

emuError_t emuMemset(void* dst, int value, size_t bytes) {
  if (bytes == 0) return emuSuccess;
  if (dst == nullptr) return emuErrorInvalidValue;
  std::memset(dst, value, bytes);
  return emuSuccess;
}

emuError_t emuMemsetAsync(void* dst, int value, size_t bytes, emuStream_t stream) {
  if (!emu::deferring(stream)) return emuMemset(dst, value, bytes);
  if (bytes != 0 && dst == nullptr) {
    emu::invalidate_capture(stream);
    return emuErrorInvalidValue;
  }
  emu::defer(stream, [=]() { return emuMemset(dst, value, bytes); });
  return emuSuccess;
}

emuError_t emuStreamCreateWithFlags(emuStream_t* stream, unsigned flags) {
  if (stream == nullptr) return emuErrorInvalidValue;
  *stream = new EmuStream{flags, nullptr, nullptr};
  return emuSuccess;
}

emuError_t emuStreamDestroy(emuStream_t stream) {
  if (stream == nullptr) return emuErrorInvalidResourceHandle;
  if (stream->queue != nullptr) {  // what is queued still runs (as on a GPU), then the worker ends
    {
      std::lock_guard<std::mutex> lock(stream->queue->mutex);
      stream->queue->stopping = true;
      stream->queue->changed.notify_all();
    }
    stream->queue->worker.join();
    std::lock_guard<std::mutex> lock(g_queues_mutex);
    live_queues().erase(stream->queue);
  }
  delete stream;
  return emuSuccess;
}

emuError_t emuStreamSynchronize(emuStream_t stream) {
  if (const emuError_t error = refuse_while_capturing(stream); error != emuSuccess) return error;
  return drain(stream);
}

emuError_t emuStreamQuery(emuStream_t stream) {
  if (const emuError_t error = refuse_while_capturing(stream); error != emuSuccess) return error;
  if (queued(stream)) return emuErrorNotReady;
  return drain(stream);  // nothing left to wait for: returns the queued failure, if any
}

emuError_t emuStreamWaitEvent(emuStream_t stream, emuEvent_t event, unsigned /*flags*/) {
  if (event == nullptr) return emuErrorInvalidResourceHandle;
  if (const emuError_t error = refuse_while_capturing(stream); error != emuSuccess) return error;
  if (stream == nullptr || event_complete(*event) || event->queue == stream->queue) {
    return emuSuccess;  // done already, or in this stream's own order
  }
  push(stream, [queue = event->queue, ticket = event->ticket]() {
    wait_for(*queue, ticket);
    return emuSuccess;
  });
  return emuSuccess;
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
  return emu::submit(stream, [exec]() { return run_all(exec->operations); });
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
  auto stamp = std::make_shared<EmuEventStamp>();
  event->stamp = stamp;
  event->queue.reset();
  if (queued(stream)) {  // stamped when the stream's worker reaches it
    event->ticket = push(stream, [stamp]() {
      stamp->when = std::chrono::steady_clock::now();
      stamp->recorded = true;
      return emuSuccess;
    });
    event->queue = stream->queue;
    return emuSuccess;
  }
  stamp->when = std::chrono::steady_clock::now();
  stamp->recorded = true;
  return emuSuccess;
}

emuError_t emuEventSynchronize(emuEvent_t event) {
  if (event == nullptr) return emuErrorInvalidResourceHandle;
  if (event->queue != nullptr) wait_for(*event->queue, event->ticket);
  return emuSuccess;
}

emuError_t emuEventQuery(emuEvent_t event) {
  if (event == nullptr) return emuErrorInvalidResourceHandle;
  return event_complete(*event) ? emuSuccess : emuErrorNotReady;
}

emuError_t emuEventElapsedTime(float* milliseconds, emuEvent_t start, emuEvent_t end) {
  if (milliseconds == nullptr) return emuErrorInvalidValue;
  if (start == nullptr || end == nullptr) return emuErrorInvalidResourceHandle;
  if (!event_complete(*start) || !event_complete(*end)) return emuErrorNotReady;
  if (!start->stamp->recorded || !end->stamp->recorded) return emuErrorInvalidResourceHandle;
  const std::chrono::duration<double, std::milli> elapsed = end->stamp->when - start->stamp->when;
  *milliseconds = static_cast<float>(elapsed.count());
  return emuSuccess;
}
