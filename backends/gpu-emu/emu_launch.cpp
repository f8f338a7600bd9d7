// emu_launch.cpp — the GPU emulator's kernel launches (emu_device.h's execution model): the launch
// checks a CUDA device makes, then every block of the grid in turn, its threads as ucontext
// coroutines scheduled at block barriers and warp operations.
//
// Scheduling of one block: lane 0 of each warp starts first; if it finishes without reaching a
// barrier, the rest of its warp runs as plain calls ("direct" threads, which must not reach a
// barrier either); otherwise every lane of the warp starts as a coroutine. Then, until every
// thread is done: a warp all of whose lanes wait at a warp operation is released; when none is,
// and every live thread waits at the block barrier and none has exited, the block barrier is
// released; anything else can never complete on a GPU, and aborts with a description. Must not be
// used by two launches at once (one mutex serialises them, so the statics below are safe).
#include <sys/mman.h>
#include <ucontext.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "emu_device.h"

// AddressSanitizer must be told about every stack switch (its fiber API), or it reports false
// stack errors; a no-op in other builds.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define HWINFER_EMU_ASAN 1
#endif

namespace emu {

dim3 g_thread_idx;
dim3 g_block_idx;
dim3 g_block_dim;
dim3 g_grid_dim;

namespace {

constexpr size_t kStackBytes = 256 * 1024;  // per coroutine; a guard page below it
constexpr size_t kGuardBytes = 4096;
constexpr int kMaxThreads = 1024;

enum class State { kReady, kBlockWait, kWarpWait, kDone };

struct Thread {
  ucontext_t context;
  unsigned char* stack = nullptr;  // kStackBytes, above a PROT_NONE guard page
  State state = State::kReady;
  bool reached_barrier = false;  // yielded at least once in this block
  unsigned warp_ops = 0;         // warp operations done in this block (lanes must agree)
  dim3 index;
};

thread_local emuError_t t_last_error = emuSuccess;

std::mutex g_launch_mutex;
std::map<uintptr_t, size_t> g_dynamic_shared_limit;  // FuncSetAttribute; guarded by the mutex

// The running launch; valid while g_launch_mutex is held.
const char* g_kernel_name = "";
Body g_body = nullptr;
void* g_context = nullptr;
ucontext_t g_scheduler;
std::vector<Thread> g_threads;
int g_n_threads = 0;
int g_current = 0;
bool g_direct = false;               // the running thread is a plain call, not a coroutine
std::vector<uint64_t> g_warp_slots;  // [2][kMaxThreads]: warp operations, double-buffered
std::vector<unsigned char> g_dynamic_shared;

[[noreturn]] void fail(const char* what, int thread) {
  std::fprintf(stderr,
               "hwinfer GPU emulator: kernel %s, block (%u, %u, %u), thread %d: %s\n"
               "(on a GPU this hangs or is undefined behaviour)\n",
               g_kernel_name, g_block_idx.x, g_block_idx.y, g_block_idx.z, thread, what);
  std::fflush(stderr);
  std::abort();
}

#if defined(HWINFER_EMU_ASAN)
const void* g_scheduler_stack = nullptr;  // the launching thread's stack (ASan's fiber API)
size_t g_scheduler_stack_bytes = 0;
#endif

// Switches from the scheduler to |thread|'s coroutine and back.
void switch_to(ucontext_t* thread_context, const unsigned char* stack, int i) {
#if defined(HWINFER_EMU_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, stack, kStackBytes);
#else
  (void)stack;
#endif
  if (swapcontext(&g_scheduler, thread_context) != 0) fail("swapcontext failed", i);
#if defined(HWINFER_EMU_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

// Switches from the running coroutine to the scheduler, until it resumes this coroutine.
void switch_to_scheduler(ucontext_t* thread_context) {
#if defined(HWINFER_EMU_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, g_scheduler_stack, g_scheduler_stack_bytes);
#endif
  if (swapcontext(thread_context, &g_scheduler) != 0) fail("swapcontext failed", g_current);
#if defined(HWINFER_EMU_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, &g_scheduler_stack, &g_scheduler_stack_bytes);
#endif
}

void entry() {
#if defined(HWINFER_EMU_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &g_scheduler_stack, &g_scheduler_stack_bytes);
#endif
  g_body(g_context);
  g_threads[static_cast<size_t>(g_current)].state = State::kDone;
#if defined(HWINFER_EMU_ASAN)
  __sanitizer_start_switch_fiber(nullptr, g_scheduler_stack, g_scheduler_stack_bytes);
#endif
  // Returning resumes uc_link: the scheduler.
}

void resume(int i) {
  Thread& thread = g_threads[static_cast<size_t>(i)];
  g_current = i;
  g_thread_idx = thread.index;
  thread.state = State::kReady;
  switch_to(&thread.context, thread.stack, i);
}

void start(int i) {
  Thread& thread = g_threads[static_cast<size_t>(i)];
  if (thread.stack == nullptr) {
    void* memory = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) fail("cannot map a coroutine stack", i);
    mprotect(memory, kGuardBytes, PROT_NONE);
    thread.stack = static_cast<unsigned char*>(memory) + kGuardBytes;
    if (getcontext(&thread.context) != 0) fail("getcontext failed", i);
  }
  thread.context.uc_stack.ss_sp = thread.stack;
  thread.context.uc_stack.ss_size = kStackBytes;
  thread.context.uc_link = &g_scheduler;
  makecontext(&thread.context, entry, 0);
  resume(i);
}

void yield(State state) {
  Thread& thread = g_threads[static_cast<size_t>(g_current)];
  thread.state = state;
  thread.reached_barrier = true;
  switch_to_scheduler(&thread.context);
}

void run_block() {
  const int n = g_n_threads;
  const int n_warps = (n + kWarpSize - 1) / kWarpSize;
  for (int i = 0; i < n; ++i) {
    Thread& thread = g_threads[static_cast<size_t>(i)];
    thread.state = State::kReady;
    thread.reached_barrier = false;
    thread.warp_ops = 0;
  }
  for (int w = 0; w < n_warps; ++w) {
    const int first = w * kWarpSize;
    const int end = first + kWarpSize < n ? first + kWarpSize : n;
    start(first);
    const Thread& lane0 = g_threads[static_cast<size_t>(first)];
    if (lane0.state == State::kDone && !lane0.reached_barrier) {
      g_direct = true;
      for (int i = first + 1; i < end; ++i) {
        g_current = i;
        g_thread_idx = g_threads[static_cast<size_t>(i)].index;
        g_body(g_context);
        g_threads[static_cast<size_t>(i)].state = State::kDone;
      }
      g_direct = false;
    } else {
      for (int i = first + 1; i < end; ++i) start(i);
    }
  }
  for (;;) {
    bool released = false;
    for (int w = 0; w < n_warps; ++w) {
      const int first = w * kWarpSize;
      const int end = first + kWarpSize < n ? first + kWarpSize : n;
      int waiting = 0;
      for (int i = first; i < end; ++i) {
        waiting += g_threads[static_cast<size_t>(i)].state == State::kWarpWait ? 1 : 0;
      }
      if (waiting == 0) continue;
      if (waiting != end - first) continue;  // judged below if nothing else can move
      for (int i = first + 1; i < end; ++i) {
        if (g_threads[static_cast<size_t>(i)].warp_ops !=
            g_threads[static_cast<size_t>(first)].warp_ops) {
          fail("the lanes of this warp are at different warp operations (shuffles)", i);
        }
      }
      for (int i = first; i < end; ++i) resume(i);
      released = true;
    }
    if (released) continue;
    int block_waiting = 0;
    int warp_waiting = 0;
    int done = 0;
    int a_waiter = 0;
    for (int i = 0; i < n; ++i) {
      const State state = g_threads[static_cast<size_t>(i)].state;
      if (state == State::kBlockWait) {
        ++block_waiting;
        a_waiter = i;
      } else if (state == State::kWarpWait) {
        ++warp_waiting;
        a_waiter = i;
      } else {
        ++done;
      }
    }
    if (block_waiting == 0 && warp_waiting == 0) return;  // every thread is done
    if (warp_waiting != 0) {
      fail(
          "a warp operation (shuffle) that some lanes of the warp never reach (they exited or "
          "wait at __syncthreads)",
          a_waiter);
    }
    if (done != 0) {
      fail("__syncthreads that some threads of the block never reach (they exited)", a_waiter);
    }
    for (int i = 0; i < n; ++i) resume(i);
  }
}

emuError_t check_launch(uintptr_t kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes) {
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  if (threads == 0 || threads > kMaxThreads || block.x > 1024 || block.y > 1024 || block.z > 64) {
    return emuErrorInvalidConfiguration;
  }
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 ||
      grid.z > 65535) {
    return emuErrorInvalidConfiguration;
  }
  const auto limit = g_dynamic_shared_limit.find(kernel);
  const size_t allowed =
      limit != g_dynamic_shared_limit.end() ? limit->second : kEmuDefaultDynamicShared;
  if (dynamic_shared_bytes > allowed) return emuErrorInvalidValue;
  return emuSuccess;
}

}  // namespace

emuError_t last_error() { return t_last_error; }
void set_last_error(emuError_t error) { t_last_error = error; }

void block_barrier() {
  if (g_direct) {
    fail("__syncthreads reached after lane 0 of this warp exited without reaching any barrier",
         g_current);
  }
  yield(State::kBlockWait);
}

void warp_barrier() {
  if (g_direct) {
    fail("a warp operation reached after lane 0 of this warp exited without reaching any barrier",
         g_current);
  }
  ++g_threads[static_cast<size_t>(g_current)].warp_ops;
  yield(State::kWarpWait);
}

int lane_id() { return g_current % kWarpSize; }

const uint64_t* warp_publish(uint64_t bits) {
  // Buffer (ops % 2): a lane can be one operation ahead of a slower lane's read, never two (the
  // next operation's barrier waits for it).
  const unsigned ops = g_threads[static_cast<size_t>(g_current)].warp_ops;
  uint64_t* slots = g_warp_slots.data() + (ops % 2) * kMaxThreads;
  slots[g_current] = bits;
  warp_barrier();
  return slots + g_current / kWarpSize * kWarpSize;
}

unsigned char* dynamic_shared() { return g_dynamic_shared.data(); }

emuError_t run_grid(const char* name, uintptr_t kernel, dim3 grid, dim3 block,
                    size_t dynamic_shared_bytes, emuStream_t /*stream*/, Body body, void* context) {
  std::lock_guard<std::mutex> lock(g_launch_mutex);
  const emuError_t error = check_launch(kernel, grid, block, dynamic_shared_bytes);
  if (error != emuSuccess) {
    t_last_error = error;
    return error;
  }
  g_kernel_name = name;
  g_body = body;
  g_context = context;
  g_grid_dim = grid;
  g_block_dim = block;
  g_n_threads = static_cast<int>(block.x * block.y * block.z);
  // Sized once and never moved: a ucontext_t points into itself (its FP state).
  if (g_threads.empty()) g_threads.resize(kMaxThreads);
  for (int i = 0; i < g_n_threads; ++i) {
    const auto linear = static_cast<unsigned>(i);
    g_threads[static_cast<size_t>(i)].index =
        dim3(linear % block.x, linear / block.x % block.y, linear / (block.x * block.y));
  }
  g_warp_slots.resize(2 * kMaxThreads);
  g_dynamic_shared.resize(kEmuMaxDynamicShared + 16);
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        g_block_idx = dim3(x, y, z);
        std::memset(g_dynamic_shared.data(), 0xff, dynamic_shared_bytes);
        run_block();
      }
    }
  }
  return emuSuccess;
}

emuError_t set_dynamic_shared_limit(uintptr_t kernel, size_t bytes) {
  if (bytes > kEmuMaxDynamicShared) return emuErrorInvalidValue;
  std::lock_guard<std::mutex> lock(g_launch_mutex);
  g_dynamic_shared_limit[kernel] = bytes;
  return emuSuccess;
}

}  // namespace emu

emuError_t emu_func_set_attribute(uintptr_t kernel, emuFuncAttribute attribute, int value) {
  if (kernel == 0 || value < 0) return emuErrorInvalidValue;
  if (attribute != emuFuncAttributeMaxDynamicSharedMemorySize) return emuSuccess;
  return emu::set_dynamic_shared_limit(kernel, static_cast<size_t>(value));
}
