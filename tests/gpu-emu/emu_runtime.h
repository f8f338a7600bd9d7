// emu_runtime.h — the host-side runtime of the GPU emulator: the subset of the
// CUDA runtime API that backends/cuda's host files call, spelled emu<Name> so GPU(Name) of
// gpu_runtime.h works unchanged, implemented on the CPU in emu_runtime.cpp.
//
// One emulated device ("hwinfer GPU emulator (CPU)"). Memory is host memory (malloc'd, 256-byte
// aligned), so a device pointer is a host pointer. Every stream operation (copy, memset, kernel
// launch) runs to completion at enqueue, in the calling thread: an event is complete when it is
// recorded, and the time between two events is the host clock between their records. Must not
// include any vendor header; the device side (kernels) is emu_device.h.
//
// Stream capture (CUDA graphs): between emuStreamBeginCapture and emuStreamEndCapture a stream
// RECORDS its kernel launches, copies and memsets (each a closure holding its arguments and, for
// a launch, its grid, block and dynamic shared memory) instead of running them; the graph runs
// them in order at each emuGraphLaunch. As on CUDA, a failed enqueue (a launch configuration
// error) invalidates the capture, and what cannot be captured (synchronize, query, events) fails
// with emuErrorStreamCaptureUnsupported and invalidates it; EndCapture then returns
// emuErrorStreamCaptureInvalidated and no graph. The three capture modes behave alike (one
// emulated device, no implicit synchronisation to protect).
//
// Asynchronous operations: an operation that waits for other processes or threads (the emulated
// NCCL's all-reduce, emu_nccl.h) is queued on the stream's own worker thread instead
// (emu::enqueue_async, emu_device.h), so its enqueue returns at once as on a GPU. Until the queue
// has run dry, every later operation of that stream (copies, memsets, launches, graph launches,
// event records, waits on another stream's event) is queued behind it, launch checks still made
// at enqueue; then the stream runs operations at enqueue again. A queued event is complete (Query,
// Synchronize, ElapsedTime) once the worker reaches it; Synchronize and Query of the stream return
// the first failure of a queued operation once; StreamDestroy lets the queue run dry first.
#ifndef HWINFER_TESTS_GPU_EMU_EMU_RUNTIME_H_
#define HWINFER_TESTS_GPU_EMU_EMU_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <functional>

// The emulated warp width: 32 lanes (NVIDIA, RDNA), or 64 (CDNA's wavefronts) in the wave64 build
// of the plugin (tests/gpu-emu/CMakeLists.txt), which compiles the kernels for it as hipcc does
// for gfx90a / gfx940: a compile-time constant of the kernels, never a launch parameter.
#ifndef HWINFER_GPU_EMU_WARP_SIZE
#define HWINFER_GPU_EMU_WARP_SIZE 32
#endif
static_assert(HWINFER_GPU_EMU_WARP_SIZE == 32 || HWINFER_GPU_EMU_WARP_SIZE == 64,
              "the emulator runs 32- or 64-lane warps");

enum emuError_t : int {
  emuSuccess = 0,
  emuErrorInvalidValue = 1,
  emuErrorMemoryAllocation = 2,
  emuErrorInvalidConfiguration = 9,
  emuErrorInvalidDevice = 101,
  emuErrorInvalidResourceHandle = 400,
  emuErrorIllegalState = 401,
  emuErrorNotReady = 600,
  emuErrorLaunchOutOfResources = 701,
  emuErrorStreamCaptureUnsupported = 900,
  emuErrorStreamCaptureInvalidated = 901,
};

enum emuStreamCaptureMode : int {
  emuStreamCaptureModeGlobal = 0,
  emuStreamCaptureModeThreadLocal = 1,
  emuStreamCaptureModeRelaxed = 2,
};

enum emuStreamCaptureStatus : int {
  emuStreamCaptureStatusNone = 0,
  emuStreamCaptureStatusActive = 1,
  emuStreamCaptureStatusInvalidated = 2,
};

enum emuMemcpyKind : int {
  emuMemcpyHostToHost = 0,
  emuMemcpyHostToDevice = 1,
  emuMemcpyDeviceToHost = 2,
  emuMemcpyDeviceToDevice = 3,
  emuMemcpyDefault = 4,
};

enum emuFuncAttribute : int {
  emuFuncAttributeMaxDynamicSharedMemorySize = 8,
};

inline constexpr unsigned emuStreamDefault = 0;
inline constexpr unsigned emuStreamNonBlocking = 1;
inline constexpr unsigned emuHostAllocDefault = 0;
inline constexpr unsigned emuHostAllocPortable = 1;
inline constexpr unsigned emuHostAllocMapped = 2;

struct EmuStream;
struct EmuEvent;
struct EmuGraph;
struct EmuGraphExec;
using emuStream_t = EmuStream*;
using emuEvent_t = EmuEvent*;
using emuGraph_t = EmuGraph*;
using emuGraphExec_t = EmuGraphExec*;

// The fields of cudaDeviceProp that device.cpp reads.
struct emuDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  int multiProcessorCount;
  int maxThreadsPerBlock;
  int warpSize;
  int integrated;
  int major;
  int minor;
  int pciDomainID;
  int pciBusID;
  int pciDeviceID;
};

// The emulated device's limits (what a CUDA device of compute capability 9.0 allows).
inline constexpr int kEmuMultiprocessors = 4;
inline constexpr uint64_t kEmuMemoryBytes = uint64_t{8} << 30;
inline constexpr size_t kEmuDefaultDynamicShared = 48 * 1024;  // without FuncSetAttribute
inline constexpr size_t kEmuMaxDynamicShared = 227 * 1024;     // the most FuncSetAttribute allows

emuError_t emuGetDeviceCount(int* count);
emuError_t emuGetDeviceProperties(emuDeviceProp* prop, int device);
emuError_t emuSetDevice(int device);
emuError_t emuGetDevice(int* device);
emuError_t emuDriverGetVersion(int* version);
emuError_t emuRuntimeGetVersion(int* version);
emuError_t emuMemGetInfo(size_t* free_bytes, size_t* total_bytes);
emuError_t emuDeviceSynchronize();
// The last error of this thread's calls (a failed launch or memory call), reset to emuSuccess by
// GetLastError.
emuError_t emuGetLastError();
emuError_t emuPeekAtLastError();
const char* emuGetErrorString(emuError_t error);

emuError_t emuMalloc(void** pointer, size_t bytes);
emuError_t emuFree(void* pointer);
emuError_t emuHostAlloc(void** pointer, size_t bytes, unsigned flags);
emuError_t emuFreeHost(void* pointer);
emuError_t emuHostGetDevicePointer(void** device_pointer, void* host_pointer, unsigned flags);
emuError_t emuMemcpy(void* dst, const void* src, size_t bytes, emuMemcpyKind kind);
emuError_t emuMemcpyAsync(void* dst, const void* src, size_t bytes, emuMemcpyKind kind,
                          emuStream_t stream);
emuError_t emuMemset(void* dst, int value, size_t bytes);
emuError_t emuMemsetAsync(void* dst, int value, size_t bytes, emuStream_t stream);

emuError_t emuStreamCreateWithFlags(emuStream_t* stream, unsigned flags);
emuError_t emuStreamDestroy(emuStream_t stream);
emuError_t emuStreamSynchronize(emuStream_t stream);
emuError_t emuStreamQuery(emuStream_t stream);
emuError_t emuStreamWaitEvent(emuStream_t stream, emuEvent_t event, unsigned flags);

// Capture (see the top of the file). BeginCapture on a capturing stream and EndCapture on one that
// is not are emuErrorIllegalState.
emuError_t emuStreamBeginCapture(emuStream_t stream, emuStreamCaptureMode mode);
emuError_t emuStreamEndCapture(emuStream_t stream, emuGraph_t* graph);
emuError_t emuStreamIsCapturing(emuStream_t stream, emuStreamCaptureStatus* status);
// The executable copy of |graph| (CUDA 12's signature; |flags| must be 0).
emuError_t emuGraphInstantiate(emuGraphExec_t* exec, emuGraph_t graph, unsigned long long flags);
// Runs the recorded operations in order (recorded into |stream| when it is capturing); returns
// the first one's error, after which nothing more runs.
emuError_t emuGraphLaunch(emuGraphExec_t exec, emuStream_t stream);
emuError_t emuGraphExecDestroy(emuGraphExec_t exec);
emuError_t emuGraphDestroy(emuGraph_t graph);

emuError_t emuEventCreate(emuEvent_t* event);
emuError_t emuEventDestroy(emuEvent_t event);
emuError_t emuEventRecord(emuEvent_t event, emuStream_t stream);
emuError_t emuEventSynchronize(emuEvent_t event);
emuError_t emuEventQuery(emuEvent_t event);
emuError_t emuEventElapsedTime(float* milliseconds, emuEvent_t start, emuEvent_t end);

// The dynamic shared memory a kernel may ask for (emuFuncAttributeMaxDynamicSharedMemorySize, up
// to kEmuMaxDynamicShared); other attributes are accepted and ignored. |kernel| is the kernel
// function (CUDA's spelling) or its address as a const void* (HIP's).
emuError_t emu_func_set_attribute(uintptr_t kernel, emuFuncAttribute attribute, int value);
template <typename Kernel>
emuError_t emuFuncSetAttribute(Kernel* kernel, emuFuncAttribute attribute, int value) {
  return emu_func_set_attribute(reinterpret_cast<uintptr_t>(kernel), attribute, value);
}

// Stream order for the emulator's vendor-library stand-ins (emu_blas.cpp, emu_nccl.cpp).
namespace emu {
// Enqueued work: a recorded one runs again at each graph replay and returns its error; a queued
// one runs once, on the stream's worker thread.
using Operation = std::function<emuError_t()>;
// Runs |operation| now, or, while |stream| is capturing or has queued work, records or queues it.
emuError_t submit(emuStream_t stream, Operation operation);
// Queues |operation| on |stream|'s worker thread, so the enqueue returns at once and the stream's
// later operations wait for it (what an emulated collective needs: it waits for other ranks).
// emuErrorStreamCaptureUnsupported while capturing (the capture is invalidated), and
// emuErrorInvalidResourceHandle on the default stream.
emuError_t enqueue_async(emuStream_t stream, Operation operation);
}  // namespace emu

#endif  // HWINFER_TESTS_GPU_EMU_EMU_RUNTIME_H_
