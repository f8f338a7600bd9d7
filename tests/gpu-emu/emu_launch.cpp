// emu_launch.cpp — the GPU emulator's kernel launches (emu_device.h's execution model): the launch
// checks a CUDA device makes, then every block of the grid in turn, its threads as coroutines
// (a stack switch of our own on x86-64, ucontext elsewhere) scheduled at block barriers and warp
// operations.
//
// Scheduling of one block: lane 0 of each warp starts first; if it finishes without reaching a
// barrier, the rest of its warp runs as plain calls ("direct" threads, which must not reach a
// barrier either); otherwise every lane of the warp starts as a coroutine. Then, until every
// thread is done: a warp all of whose lanes wait at a warp operation is released; when none is,
// and every live thread waits at the block barrier and none has exited, the block barrier is
// released; anything else can never complete on a GPU, and aborts with a description. Threads,
// warps and blocks go in index order, or all in reverse under HWINFER_GPUEMU_SCHEDULE=reverse. Must
// not be used by two launches at once (one mutex serialises them, so the statics below are safe).
#include <sys/mman.h>
#include <ucontext.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "emu_device.h"

// AddressSanitizer must be told about every stack switch (its fiber API), or it reports false
// stack errors; a no-op in other builds.
#if defined(__SANITIZE_ADDRESS__)
#define HWINFER_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HWINFER_EMU_ASAN 1
#endif
#endif
#if defined(HWINFER_EMU_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

// x86-64: a stack switch of our own, without ucontext's signal-mask system call per switch (about
// 100 times faster). Saves the callee-saved registers, MXCSR and the x87 control word on the
// current stack, stores the stack pointer in *save_sp, and continues on new_sp, popping the same
// frame.
// (-DHWINFER_EMU_UCONTEXT forces the portable path.)
#if defined(__x86_64__) && !defined(HWINFER_EMU_UCONTEXT)
#define HWINFER_EMU_FAST_SWITCH 1
extern "C" void hwinfer_emu_switch(void** save_sp, void* new_sp);
asm(R"(
  .text
  .p2align 4
  .globl hwinfer_emu_switch
  .hidden hwinfer_emu_switch
  .type hwinfer_emu_switch, @function
hwinfer_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size hwinfer_emu_switch, .-hwinfer_emu_switch
)");
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
#if defined(HWINFER_EMU_FAST_SWITCH)
  void* sp = nullptr;  // the saved stack pointer of a suspended coroutine
#else
  ucontext_t context;
#endif
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
std::vector<Thread> g_threads;
int g_n_threads = 0;
int g_current = 0;
bool g_reverse = false;              // HWINFER_GPUEMU_SCHEDULE=reverse
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

#if defined(HWINFER_EMU_FAST_SWITCH)
void* g_scheduler_sp = nullptr;  // the scheduler's stack pointer while a coroutine runs
#else
ucontext_t g_scheduler;
#endif

// The stack switches: scheduler -> coroutine |i| (returns when it yields or finishes) and the
// running coroutine -> scheduler (returns when the scheduler resumes it).
void switch_to(Thread& thread, int i) {
#if defined(HWINFER_EMU_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, thread.stack, kStackBytes);
#endif
#if defined(HWINFER_EMU_FAST_SWITCH)
  (void)i;
  hwinfer_emu_switch(&g_scheduler_sp, thread.sp);
#else
  if (swapcontext(&g_scheduler, &thread.context) != 0) fail("swapcontext failed", i);
#endif
#if defined(HWINFER_EMU_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

void switch_to_scheduler(Thread& thread) {
#if defined(HWINFER_EMU_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, g_scheduler_stack, g_scheduler_stack_bytes);
#endif
#if defined(HWINFER_EMU_FAST_SWITCH)
  hwinfer_emu_switch(&thread.sp, g_scheduler_sp);
#else
  if (swapcontext(&thread.context, &g_scheduler) != 0) fail("swapcontext failed", g_current);
#endif
#if defined(HWINFER_EMU_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, &g_scheduler_stack, &g_scheduler_stack_bytes);
#endif
}

// A coroutine's first function: runs the kernel, marks the thread done, goes back for good.
void entry() {
#if defined(HWINFER_EMU_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &g_scheduler_stack, &g_scheduler_stack_bytes);
#endif
  g_body(g_context);
  Thread& thread = g_threads[static_cast<size_t>(g_current)];
  thread.state = State::kDone;
#if defined(HWINFER_EMU_ASAN)
  __sanitizer_start_switch_fiber(nullptr, g_scheduler_stack, g_scheduler_stack_bytes);
#endif
#if defined(HWINFER_EMU_FAST_SWITCH)
  hwinfer_emu_switch(&thread.sp, g_scheduler_sp);
  std::abort();  // a finished coroutine is never resumed
#endif
  // ucontext: returning resumes uc_link, the scheduler.
}

void resume(int i) {
  Thread& thread = g_threads[static_cast<size_t>(i)];
  g_current = i;
  g_thread_idx = thread.index;
  thread.state = State::kReady;
  switch_to(thread, i);
}

void start(int i) {
  Thread& thread = g_threads[static_cast<size_t>(i)];
  if (thread.stack == nullptr) {
    void* memory = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) fail("cannot map a coroutine stack", i);
    mprotect(memory, kGuardBytes, PROT_NONE);
    thread.stack = static_cast<unsigned char*>(memory) + kGuardBytes;
#if !defined(HWINFER_EMU_FAST_SWITCH)
    if (getcontext(&thread.context) != 0) fail("getcontext failed", i);
#endif
  }
#if defined(HWINFER_EMU_FAST_SWITCH)
  // The frame hwinfer_emu_switch pops (top down): a null return address for entry (so entry
  // starts with the stack aligned as after a call), entry's address, rbp rbx r12 r13 r14 r15
  // (zero), then MXCSR and the x87 control word at their defaults.
  auto* top = reinterpret_cast<uint64_t*>(thread.stack + kStackBytes);
  uint64_t* sp = top - 9;
  for (int slot = 0; slot < 9; ++slot) sp[slot] = 0;
  sp[7] = reinterpret_cast<uint64_t>(&entry);
  const uint32_t mxcsr = 0x1f80;
  const uint16_t fpu_control = 0x037f;
  std::memcpy(sp, &mxcsr, sizeof(mxcsr));
  std::memcpy(reinterpret_cast<unsigned char*>(sp) + 4, &fpu_control, sizeof(fpu_control));
  thread.sp = sp;
#else
  thread.context.uc_stack.ss_sp = thread.stack;
  thread.context.uc_stack.ss_size = kStackBytes;
  thread.context.uc_link = &g_scheduler;
  makecontext(&thread.context, entry, 0);
#endif
  resume(i);
}

void yield(State state) {
  Thread& thread = g_threads[static_cast<size_t>(g_current)];
  thread.state = state;
  thread.reached_barrier = true;
  switch_to_scheduler(thread);
}

// The k-th of |count| threads, warps or blocks to run: k, or count - 1 - k under
// HWINFER_GPUEMU_SCHEDULE=reverse (a second schedule, so a kernel that works only because lower
// threads or blocks happen to run first, a missing barrier, fails in one of the two).
int in_order(int k, int count) { return g_reverse ? count - 1 - k : k; }

void run_block() {
  const int n = g_n_threads;
  const int n_warps = (n + kWarpSize - 1) / kWarpSize;
  for (int i = 0; i < n; ++i) {
    Thread& thread = g_threads[static_cast<size_t>(i)];
    thread.state = State::kReady;
    thread.reached_barrier = false;
    thread.warp_ops = 0;
  }
  for (int k = 0; k < n_warps; ++k) {
    const int first = in_order(k, n_warps) * kWarpSize;
    const int end = first + kWarpSize < n ? first + kWarpSize : n;
    start(first);
    const Thread& lane0 = g_threads[static_cast<size_t>(first)];
    if (lane0.state == State::kDone && !lane0.reached_barrier) {
      g_direct = true;
      for (int lane = 0; lane < end - first - 1; ++lane) {
        const int i = first + 1 + in_order(lane, end - first - 1);
        g_current = i;
        g_thread_idx = g_threads[static_cast<size_t>(i)].index;
        g_body(g_context);
        g_threads[static_cast<size_t>(i)].state = State::kDone;
      }
      g_direct = false;
    } else {
      for (int lane = 0; lane < end - first - 1; ++lane) {
        start(first + 1 + in_order(lane, end - first - 1));
      }
    }
  }
  for (;;) {
    bool released = false;
    for (int k = 0; k < n_warps; ++k) {
      const int first = in_order(k, n_warps) * kWarpSize;
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
      for (int lane = 0; lane < end - first; ++lane) resume(first + in_order(lane, end - first));
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
    for (int k = 0; k < n; ++k) resume(in_order(k, n));
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
  static const bool reverse = [] {
    const char* schedule = std::getenv("HWINFER_GPUEMU_SCHEDULE");
    return schedule != nullptr && std::strcmp(schedule, "reverse") == 0;
  }();
  g_reverse = reverse;
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        g_block_idx =
            g_reverse ? dim3(grid.x - 1 - x, grid.y - 1 - y, grid.z - 1 - z) : dim3(x, y, z);
        std::memset(g_dynamic_shared.data(), 0xff, dynamic_shared_bytes);
        run_block();
      }
    }
  }
  return emuSuccess;
}

emuError_t defer_launch(uintptr_t kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
                        emuStream_t stream, Operation operation) {
  emuError_t error = emuSuccess;
  {
    std::lock_guard<std::mutex> lock(g_launch_mutex);
    error = check_launch(kernel, grid, block, dynamic_shared_bytes);
  }
  if (error != emuSuccess) {
    t_last_error = error;
    invalidate_capture(stream);
    return error;
  }
  defer(stream, std::move(operation));
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
