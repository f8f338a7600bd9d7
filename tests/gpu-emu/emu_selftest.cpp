// emu_selftest.cpp — the GPU emulator's own test (ctest gpuemu_selftest): block and warp
// reductions of gpu_device.h, every shuffle form and ballot, plain (barrier-free) kernels, dynamic
// shared memory, atomics, the launch checks (grid, block, dynamic shared memory limits), that a
// barrier some threads never reach aborts the launch (run in a child process), and stream capture
// (launches and copies recorded, not run; replays see the buffers' current contents), and a
// stream's queue behind an asynchronous operation. Kernels here are written as the .cu files of
// backends/cuda are (gpu_device.h, GPU_LAUNCH); must not test hwinfer's kernels (the conformance
// suite does, on the gpuemu plugin). Written for any warp width: built for 32 lanes
// (gpuemu_selftest) and for 64 (gpuemu_selftest_wave64).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <future>
#include <vector>

#include "gpu_device.h"

namespace {

using hwinfer::gpu::block_max;
using hwinfer::gpu::block_sum;
using hwinfer::gpu::warp_sum;

// in: [gridDim.x, n];  out: [gridDim.x, 2] = (sum, max) of each row.
__global__ void row_sum_max(const float* in, float* out, int n) {
  __shared__ float reduce[32];
  float sum = 0.0f;
  float max = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
    const float v = in[static_cast<int>(blockIdx.x) * n + i];
    sum += v;
    max = fmaxf(max, v);
  }
  const float total = block_sum(sum, reduce);
  const float largest = block_max(max, reduce);
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = total;
    out[2 * blockIdx.x + 1] = largest;
  }
}

// out: [blockDim.x, 5] per thread: shfl_down 1, shfl_up 3, shfl from lane 5, ballot, warp_sum.
__global__ void warp_ops(long long* out) {
  const int lane = static_cast<int>(threadIdx.x) % warpSize;
  long long* mine = out + threadIdx.x * 5;
  mine[0] = __shfl_down_sync(~0ull, lane, 1);
  mine[1] = __shfl_up_sync(~0ull, lane, 3);
  mine[2] = __shfl_sync(~0ull, lane * 10, 5);
  mine[3] = static_cast<long long>(__ballot_sync(~0ull, lane % 3 == 0));
  mine[4] = static_cast<long long>(warp_sum(static_cast<float>(lane)));
}

__global__ void iota_twice(int* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = 2 * i;
}

// out[block, t] = t-th element of the block's reversed thread ids (through dynamic shared memory).
__global__ void reverse_through_shared(float* out) {
  GPU_DYNAMIC_SHARED(float, staged);
  staged[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}

__global__ void count_threads(int* counter) { atomicAdd(counter, 1); }

__global__ void barrier_after_one_thread_exits(int* out) {
  if (threadIdx.x == 5) return;
  __syncthreads();
  out[0] = 1;
}

__global__ void barrier_after_lane0_exits(int* out) {
  if (threadIdx.x == 0) return;
  __syncthreads();
  out[0] = 1;
}

__global__ void shuffle_in_part_of_a_warp(int* out) {
  if (threadIdx.x < 40) out[threadIdx.x] = static_cast<int>(warp_sum(1.0f));
}

// out[i] = scale * in[i] + i, i < n.
__global__ void scale_plus_index(const int* in, int* out, int n, int scale) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = scale * in[i] + i;
}

int g_failures = 0;

void check(bool ok, const char* what, int line) {
  if (!ok) {
    ++g_failures;
    std::fprintf(stderr, "FAIL (line %d): %s\n", line, what);
  }
}
#define CHECK(condition) check((condition), #condition, __LINE__)

// True when |launch| aborts (in a child process, so this one goes on).
template <typename Launch>
bool aborts(Launch launch) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    launch();
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

}  // namespace

// A stream's queue (emu_runtime.h, asynchronous operations): an operation queued by
// enqueue_async holds back the stream's later work until it ends; events and queries see it.
void check_stream_queue() {
  emuStream_t stream = nullptr;
  CHECK(emuStreamCreateWithFlags(&stream, emuStreamNonBlocking) == emuSuccess);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  CHECK(emu::enqueue_async(stream, [released]() {
          released.wait();
          return emuSuccess;
        }) == emuSuccess);
  std::vector<int> values(64, 7);
  emuEvent_t event = nullptr;
  CHECK(emuEventCreate(&event) == emuSuccess);
  CHECK(emuMemsetAsync(values.data(), 0, values.size() * sizeof(int), stream) == emuSuccess);
  CHECK(emuEventRecord(event, stream) == emuSuccess);
  CHECK(values[0] == 7);  // queued behind the held operation
  CHECK(emuEventQuery(event) == emuErrorNotReady);
  CHECK(emuStreamQuery(stream) == emuErrorNotReady);
  float ms = 0.0f;
  CHECK(emuEventElapsedTime(&ms, event, event) == emuErrorNotReady);
  release.set_value();
  CHECK(emuEventSynchronize(event) == emuSuccess);
  CHECK(emuStreamSynchronize(stream) == emuSuccess);
  CHECK(values[0] == 0 && values[63] == 0);
  CHECK(emuEventQuery(event) == emuSuccess);
  // A queued failure comes back from the next synchronize, once; then the stream runs at enqueue.
  CHECK(emu::enqueue_async(stream, [] { return emuErrorInvalidValue; }) == emuSuccess);
  CHECK(emuStreamSynchronize(stream) == emuErrorInvalidValue);
  CHECK(emuStreamSynchronize(stream) == emuSuccess);
  CHECK(emuMemsetAsync(values.data(), 1, sizeof(int), stream) == emuSuccess);
  CHECK(values[0] == 0x01010101);
  CHECK(emu::enqueue_async(nullptr, [] { return emuSuccess; }) == emuErrorInvalidResourceHandle);
  CHECK(emuEventDestroy(event) == emuSuccess);
  CHECK(emuStreamDestroy(stream) == emuSuccess);
}

int main() {
  constexpr int kBlocks = 3;
  constexpr int kRow = 1000;
  std::vector<float> in(kBlocks * kRow);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 17);
  std::vector<float> sums(2 * kBlocks);
  GPU_LAUNCH(row_sum_max, kBlocks, 256, 0, nullptr, in.data(), sums.data(), kRow);
  CHECK(emuGetLastError() == emuSuccess);
  for (int b = 0; b < kBlocks; ++b) {
    float want = 0.0f;
    for (int i = 0; i < kRow; ++i) want += in[static_cast<size_t>(b * kRow + i)];
    CHECK(sums[static_cast<size_t>(2 * b)] == want);
    CHECK(sums[static_cast<size_t>(2 * b + 1)] == 16.0f);
  }

  constexpr int kLanes = warpSize;  // two warps of it
  long long every_third = 0;        // the ballot of lane % 3 == 0
  for (int lane = 0; lane < kLanes; lane += 3) every_third |= 1ll << lane;
  std::vector<long long> lanes(2 * kLanes * 5);
  GPU_LAUNCH(warp_ops, 1, 2 * kLanes, 0, nullptr, lanes.data());
  for (int t = 0; t < 2 * kLanes; ++t) {
    const int lane = t % kLanes;
    const long long* got = lanes.data() + t * 5;
    CHECK(got[0] == (lane < kLanes - 1 ? lane + 1 : lane));
    CHECK(got[1] == (lane >= 3 ? lane - 3 : lane));
    CHECK(got[2] == 50);
    CHECK(got[3] == every_third);
    CHECK(got[4] == kLanes * (kLanes - 1) / 2);
  }

  std::vector<int> iota(1000);
  GPU_LAUNCH(iota_twice, 4, 256, 0, nullptr, iota.data(), 1000);
  for (int i = 0; i < 1000; ++i) CHECK(iota[static_cast<size_t>(i)] == 2 * i);

  std::vector<float> reversed(2 * 128);
  GPU_LAUNCH(reverse_through_shared, 2, 128, 128 * sizeof(float), nullptr, reversed.data());
  for (int i = 0; i < 256; ++i) {
    CHECK(reversed[static_cast<size_t>(i)] == static_cast<float>(127 - i % 128));
  }

  int counter = 0;
  GPU_LAUNCH(count_threads, 5, 192, 0, nullptr, &counter);
  CHECK(counter == 5 * 192);

  // Launch checks: the error is reported by GetLastError (once), nothing runs.
  GPU_LAUNCH(count_threads, dim3(1, 70000), 64, 0, nullptr, &counter);
  CHECK(emuGetLastError() == emuErrorInvalidConfiguration);
  CHECK(emuGetLastError() == emuSuccess);
  GPU_LAUNCH(count_threads, 1, 2048, 0, nullptr, &counter);
  CHECK(emuGetLastError() == emuErrorInvalidConfiguration);
  CHECK(counter == 5 * 192);
  GPU_LAUNCH(reverse_through_shared, 1, 64, 64 * 1024, nullptr, reversed.data());
  CHECK(emuGetLastError() == emuErrorInvalidValue);
  CHECK(emuFuncSetAttribute(reverse_through_shared, emuFuncAttributeMaxDynamicSharedMemorySize,
                            100 * 1024) == emuSuccess);
  GPU_LAUNCH(reverse_through_shared, 1, 64, 64 * 1024, nullptr, reversed.data());
  CHECK(emuGetLastError() == emuSuccess);

  // A refused allocation is the thread's last error until read, as on a GPU.
  void* too_big = nullptr;
  CHECK(emuMalloc(&too_big, kEmuMemoryBytes + 1) == emuErrorMemoryAllocation);
  CHECK(emuPeekAtLastError() == emuErrorMemoryAllocation);
  CHECK(emuGetLastError() == emuErrorMemoryAllocation);
  CHECK(emuGetLastError() == emuSuccess);

  // Capture: a launch, a D2D copy and a memset recorded on |stream|; nothing runs until a replay.
  {
    constexpr int kN = 300;
    std::vector<int> input(kN, 1);
    std::vector<int> scaled(kN, -7);
    std::vector<int> copied(kN, -7);
    std::vector<int> zeroed(kN, -7);
    emuStream_t stream = nullptr;
    CHECK(emuStreamCreateWithFlags(&stream, emuStreamNonBlocking) == emuSuccess);
    CHECK(emuStreamBeginCapture(stream, emuStreamCaptureModeRelaxed) == emuSuccess);
    CHECK(emuStreamBeginCapture(stream, emuStreamCaptureModeRelaxed) == emuErrorIllegalState);
    GPU_LAUNCH(scale_plus_index, 2, 256, 0, stream, input.data(), scaled.data(), kN, 3);
    CHECK(emuGetLastError() == emuSuccess);
    CHECK(emuMemcpyAsync(copied.data(), scaled.data(), kN * sizeof(int), emuMemcpyDeviceToDevice,
                         stream) == emuSuccess);
    CHECK(emuMemsetAsync(zeroed.data(), 0, kN * sizeof(int), stream) == emuSuccess);
    emuStreamCaptureStatus status = emuStreamCaptureStatusNone;
    CHECK(emuStreamIsCapturing(stream, &status) == emuSuccess);
    CHECK(status == emuStreamCaptureStatusActive);
    emuGraph_t graph = nullptr;
    CHECK(emuStreamEndCapture(stream, &graph) == emuSuccess && graph != nullptr);
    CHECK(scaled[0] == -7 && scaled[kN - 1] == -7 && copied[5] == -7 && zeroed[9] == -7);
    emuGraphExec_t exec = nullptr;
    CHECK(emuGraphInstantiate(&exec, graph, 0) == emuSuccess && exec != nullptr);
    CHECK(emuGraphDestroy(graph) == emuSuccess);  // the executable copy stands alone
    for (int replay = 0; replay < 2; ++replay) {
      for (int i = 0; i < kN; ++i) input[static_cast<size_t>(i)] = 10 * replay + i % 7;
      std::fill(copied.begin(), copied.end(), -7);
      CHECK(emuGraphLaunch(exec, stream) == emuSuccess);
      CHECK(emuStreamSynchronize(stream) == emuSuccess);
      for (int i = 0; i < kN; ++i) {
        const int want = 3 * (10 * replay + i % 7) + i;
        CHECK(scaled[static_cast<size_t>(i)] == want);
        CHECK(copied[static_cast<size_t>(i)] == want);
        CHECK(zeroed[static_cast<size_t>(i)] == 0);
      }
    }
    // A launch configuration error invalidates the capture: no graph, the stream back to normal.
    CHECK(emuStreamBeginCapture(stream, emuStreamCaptureModeRelaxed) == emuSuccess);
    GPU_LAUNCH(scale_plus_index, 1, 4096, 0, stream, input.data(), scaled.data(), kN, 3);
    CHECK(emuGetLastError() == emuErrorInvalidConfiguration);
    graph = nullptr;
    CHECK(emuStreamEndCapture(stream, &graph) == emuErrorStreamCaptureInvalidated);
    CHECK(graph == nullptr);
    CHECK(emuStreamEndCapture(stream, &graph) == emuErrorIllegalState);
    // Synchronize and events cannot be captured: refused, and the capture is invalidated.
    emuEvent_t event = nullptr;
    CHECK(emuEventCreate(&event) == emuSuccess);
    CHECK(emuStreamBeginCapture(stream, emuStreamCaptureModeRelaxed) == emuSuccess);
    CHECK(emuEventRecord(event, stream) == emuErrorStreamCaptureUnsupported);
    CHECK(emuStreamSynchronize(stream) == emuErrorStreamCaptureUnsupported);
    CHECK(emuStreamEndCapture(stream, &graph) == emuErrorStreamCaptureInvalidated);
    CHECK(emuEventDestroy(event) == emuSuccess);
    // Direct launches run at enqueue again.
    GPU_LAUNCH(scale_plus_index, 2, 256, 0, stream, input.data(), scaled.data(), kN, 1);
    CHECK(scaled[kN - 1] == input[kN - 1] + kN - 1);
    CHECK(emuGraphExecDestroy(exec) == emuSuccess);
    CHECK(emuStreamDestroy(stream) == emuSuccess);
  }

  check_stream_queue();

  int out[64] = {};
  CHECK(aborts([&] { GPU_LAUNCH(barrier_after_one_thread_exits, 1, 64, 0, nullptr, out); }));
  CHECK(aborts([&] { GPU_LAUNCH(barrier_after_lane0_exits, 1, 64, 0, nullptr, out); }));
  CHECK(aborts([&] { GPU_LAUNCH(shuffle_in_part_of_a_warp, 1, 64, 0, nullptr, out); }));

  std::printf("gpuemu self-test, %d-lane warps: %s (%d failures)\n", kLanes,
              g_failures == 0 ? "passed" : "FAILED", g_failures);
  return g_failures == 0 ? 0 : 1;
}
