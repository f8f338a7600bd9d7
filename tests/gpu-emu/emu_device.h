// emu_device.h — the device side of the GPU emulator: what a kernel file (*.cu)
// of backends/cuda sees instead of cuda_runtime.h / hip_runtime.h when it is compiled as
// plain C++ by the host compiler (g++ -x c++), so the unchanged kernels run on the CPU.
//
// Execution model (emu_launch.cpp): a launch runs to completion in the calling thread (on a
// capturing stream it is recorded instead and runs so at each replay: emu_runtime.h), under one
// process-wide mutex; the blocks of the grid run one after another; the threads of a block are
// coroutines (emu_launch.cpp) switched only at __syncthreads and at warp operations (shuffles,
// ballot, __syncwarp), so everything between two such points runs without interruption (atomics
// are plain read-modify-writes). Warps are 32 threads, or 64 in the wave64 build
// (HWINFER_GPU_EMU_WARP_SIZE, emu_runtime.h: AMD CDNA's wavefronts; shuffles then default to 64
// lanes and ballots return 64-bit masks, as HIP's). A block barrier waits for every thread of
// the block, a warp operation for every lane of the warp; a barrier some threads can never reach
// (they exited, or wait at a different kind of barrier) aborts the process with the kernel's name:
// that is undefined behaviour (a hang) on a GPU. Lane 0 of each warp runs first; when it finishes
// without reaching any barrier, the warp's other lanes run as plain calls (no switches), and one
// of them reaching a barrier aborts the same way (lane 0 exited without it). Threads, warps and
// blocks run in index order, or in reverse with HWINFER_GPUEMU_SCHEDULE=reverse in the environment.
//
// __shared__ is a function-scope static (one copy; blocks never run concurrently), dynamic shared
// memory one buffer (GPU_DYNAMIC_SHARED) filled with 0xff bytes (NaN / -1) before every block.
// Must not be included by host files (they include gpu_runtime.h -> emu_runtime.h).
#ifndef HWINFER_TESTS_GPU_EMU_EMU_DEVICE_H_
#define HWINFER_TESTS_GPU_EMU_EMU_DEVICE_H_

#include <math.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emu_runtime.h"
#include "reference/half.h"

// ---- CUDA keywords ------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static

// ---- vector types -------------------------------------------------------------------------------
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct __align__(8) int2 {
  int x, y;
};
struct __align__(16) int4 {
  int x, y, z, w;
};
struct __align__(8) uint2 {
  unsigned x, y;
};
struct __align__(16) uint4 {
  unsigned x, y, z, w;
};
struct __align__(8) float2 {
  float x, y;
};
struct __align__(16) float4 {
  float x, y, z, w;
};
struct __align__(4) char4 {
  signed char x, y, z, w;
};
struct __align__(4) uchar4 {
  unsigned char x, y, z, w;
};
struct __align__(4) short2 {
  short x, y;
};
struct __align__(4) ushort2 {
  unsigned short x, y;
};
struct __align__(16) double2 {
  double x, y;
};
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline char4 make_char4(signed char x, signed char y, signed char z, signed char w) {
  return {x, y, z, w};
}
inline uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) {
  return {x, y, z, w};
}

// ---- the emulator's state and entry points (emu_launch.cpp) -------------------------------------
namespace emu {

extern dim3 g_thread_idx;  // of the running thread
extern dim3 g_block_idx;
extern dim3 g_block_dim;
extern dim3 g_grid_dim;

inline constexpr int kWarpSize = HWINFER_GPU_EMU_WARP_SIZE;
// A ballot's answer: one bit per lane (32 bits as CUDA's, 64 as HIP's on wave64).
using LaneMask = std::conditional_t<kWarpSize == 64, unsigned long long, unsigned>;
inline constexpr LaneMask kAllLanes = static_cast<LaneMask>(~LaneMask{0});

emuError_t last_error();
void set_last_error(emuError_t error);

// The running thread's block barrier (__syncthreads) and warp barrier (__syncwarp).
void block_barrier();
void warp_barrier();
// The running thread's lane (0..kWarpSize - 1) and the 8-byte slot exchange of a warp operation:
// stores |bits| as this lane's value, waits for the warp, returns the warp's kWarpSize published
// values (valid until this thread's next warp operation).
int lane_id();
const uint64_t* warp_publish(uint64_t bits);
// The dynamic shared memory of the running block (GPU_DYNAMIC_SHARED).
unsigned char* dynamic_shared();

using Body = void (*)(void* context);
// Runs |body(context)| as every thread of every block of |grid| (see the top of the file); returns
// (and records as the last error) a configuration error instead when the launch is invalid.
emuError_t run_grid(const char* name, uintptr_t kernel, dim3 grid, dim3 block,
                    size_t dynamic_shared_bytes, emuStream_t stream, Body body, void* context);

// Stream capture and queues (emu_runtime.h; Operation, submit and enqueue_async are there).
// True while |stream| (NULL: the default stream, never) is capturing. emu_runtime.cpp.
bool capturing(emuStream_t stream);
// True while |stream|'s operations do not run at enqueue: it is capturing, or operations queued
// behind an asynchronous one have not finished. emu_runtime.cpp.
bool deferring(emuStream_t stream);
// Appends |operation| to |stream|'s capture, or else to its queue. emu_runtime.cpp.
void defer(emuStream_t stream, Operation operation);
// Marks |stream|'s capture invalidated (a failed enqueue); nothing when it is not capturing.
// emu_runtime.cpp.
void invalidate_capture(emuStream_t stream);
// The launch checks of run_grid; a valid launch is deferred (defer), an invalid one is returned
// (and recorded as the last error) and invalidates the capture. emu_launch.cpp.
emuError_t defer_launch(uintptr_t kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
                        emuStream_t stream, Operation operation);

// One launch of |kernel| with the converted arguments |params|: each thread calls the kernel with
// its own copies (the kernel's by-value parameters), so |params| is unchanged for a replay.
template <typename... Params>
emuError_t run_launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
                      size_t dynamic_shared_bytes, emuStream_t stream,
                      std::tuple<std::decay_t<Params>...>& params) {
  auto call = [&]() { std::apply(kernel, params); };
  using Call = decltype(call);
  return run_grid(
      name, reinterpret_cast<uintptr_t>(kernel), grid, block, dynamic_shared_bytes, stream,
      [](void* context) { (*static_cast<Call*>(context))(); }, &call);
}

// GPU_LAUNCH's emulated form: the arguments converted to the kernel's parameter types once (as a
// launch does), then run now or, on a deferring stream, kept in the deferred closure.
template <typename... Params, typename... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
            size_t dynamic_shared_bytes, emuStream_t stream, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "GPU_LAUNCH: wrong number of arguments");
  std::tuple<std::decay_t<Params>...> params(std::forward<Args>(args)...);
  if (deferring(stream)) {
    defer_launch(reinterpret_cast<uintptr_t>(kernel), grid, block, dynamic_shared_bytes, stream,
                 [=]() mutable -> emuError_t {
                   return run_launch(name, kernel, grid, block, dynamic_shared_bytes, stream,
                                     params);
                 });
    return;
  }
  run_launch(name, kernel, grid, block, dynamic_shared_bytes, stream, params);
}

template <typename T>
uint64_t to_bits(T value) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffles move <= 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <typename T>
T from_bits(uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}
// The value of lane |source| (the caller's own lane when |source| is outside the caller's
// |width|-lane segment, as CUDA's shuffles).
template <typename T>
T shuffle_from(T value, int source, int width) {
  const int lane = lane_id();
  const int segment = lane / width * width;
  if (source < segment || source >= segment + width) source = lane;
  return from_bits<T>(warp_publish(to_bits(value))[source]);
}

}  // namespace emu

#define threadIdx (::emu::g_thread_idx)
#define blockIdx (::emu::g_block_idx)
#define blockDim (::emu::g_block_dim)
#define gridDim (::emu::g_grid_dim)
inline constexpr int warpSize = ::emu::kWarpSize;

inline void __syncthreads() { ::emu::block_barrier(); }
inline void __syncwarp(unsigned /*mask*/ = 0xffffffffu) { ::emu::warp_barrier(); }
inline void __threadfence() {}
inline void __threadfence_block() {}
inline ::emu::LaneMask __activemask() { return ::emu::kAllLanes; }

// ---- warp operations (every lane of the warp must take part; the mask is not checked) -----------
template <typename T>
T __shfl_xor_sync(unsigned long long /*mask*/, T value, int lane_mask, int width = warpSize) {
  return ::emu::shuffle_from(value, ::emu::lane_id() ^ lane_mask, width);
}
template <typename T>
T __shfl_sync(unsigned long long /*mask*/, T value, int source_lane, int width = warpSize) {
  return ::emu::shuffle_from(value, ::emu::lane_id() / width * width + source_lane % width, width);
}
template <typename T>
T __shfl_down_sync(unsigned long long /*mask*/, T value, unsigned delta, int width = warpSize) {
  return ::emu::shuffle_from(value, ::emu::lane_id() + static_cast<int>(delta), width);
}
template <typename T>
T __shfl_up_sync(unsigned long long /*mask*/, T value, unsigned delta, int width = warpSize) {
  return ::emu::shuffle_from(value, ::emu::lane_id() - static_cast<int>(delta), width);
}
// HIP's spellings (no mask).
template <typename T>
T __shfl_xor(T value, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(0xffffffffu, value, lane_mask, width);
}
template <typename T>
T __shfl(T value, int source_lane, int width = warpSize) {
  return __shfl_sync(0xffffffffu, value, source_lane, width);
}
template <typename T>
T __shfl_down(T value, unsigned delta, int width = warpSize) {
  return __shfl_down_sync(0xffffffffu, value, delta, width);
}
template <typename T>
T __shfl_up(T value, unsigned delta, int width = warpSize) {
  return __shfl_up_sync(0xffffffffu, value, delta, width);
}
inline ::emu::LaneMask __ballot_sync(unsigned long long /*mask*/, int predicate) {
  const uint64_t* lanes = ::emu::warp_publish(predicate != 0 ? 1u : 0u);
  ::emu::LaneMask bits = 0;
  for (int lane = 0; lane < warpSize; ++lane) {
    bits |= static_cast<::emu::LaneMask>(lanes[lane] & 1u) << lane;
  }
  return bits;
}
inline int __any_sync(unsigned long long mask, int predicate) {
  return __ballot_sync(mask, predicate) != 0;
}
inline int __all_sync(unsigned long long mask, int predicate) {
  return __ballot_sync(mask, predicate) == ::emu::kAllLanes;
}
// HIP's spellings (no mask).
inline ::emu::LaneMask __ballot(int predicate) { return __ballot_sync(0, predicate); }
inline int __any(int predicate) { return __any_sync(0, predicate); }
inline int __all(int predicate) { return __all_sync(0, predicate); }

// ---- atomics (threads switch only at barriers, so plain read-modify-writes are atomic) ----------
template <typename T, typename U>
T atomicAdd(T* address, U value) {
  const T old = *address;
  *address = static_cast<T>(old + static_cast<T>(value));
  return old;
}
template <typename T, typename U>
T atomicSub(T* address, U value) {
  const T old = *address;
  *address = static_cast<T>(old - static_cast<T>(value));
  return old;
}
template <typename T, typename U>
T atomicMax(T* address, U value) {
  const T old = *address;
  if (static_cast<T>(value) > old) *address = static_cast<T>(value);
  return old;
}
template <typename T, typename U>
T atomicMin(T* address, U value) {
  const T old = *address;
  if (static_cast<T>(value) < old) *address = static_cast<T>(value);
  return old;
}
template <typename T, typename U>
T atomicOr(T* address, U value) {
  const T old = *address;
  *address = static_cast<T>(old | static_cast<T>(value));
  return old;
}
template <typename T, typename U>
T atomicAnd(T* address, U value) {
  const T old = *address;
  *address = static_cast<T>(old & static_cast<T>(value));
  return old;
}
template <typename T, typename U>
T atomicExch(T* address, U value) {
  const T old = *address;
  *address = static_cast<T>(value);
  return old;
}
template <typename T, typename U, typename V>
T atomicCAS(T* address, U compare, V value) {
  const T old = *address;
  if (old == static_cast<T>(compare)) *address = static_cast<T>(value);
  return old;
}

// ---- bits, integer and float intrinsics
// ----------------------------------------------------------
inline unsigned __float_as_uint(float v) { return hwinfer::reference::f32_to_bits(v); }
inline float __uint_as_float(unsigned v) { return hwinfer::reference::bits_to_f32(v); }
inline int __float_as_int(float v) { return static_cast<int>(hwinfer::reference::f32_to_bits(v)); }
inline float __int_as_float(int v) {
  return hwinfer::reference::bits_to_f32(static_cast<uint32_t>(v));
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v == 0 ? 32 : __builtin_clz(static_cast<unsigned>(v)); }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline int __dp4a(int a, int b, int c) {
  int8_t x[4];
  int8_t y[4];
  std::memcpy(x, &a, 4);
  std::memcpy(y, &b, 4);
  return c + x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
}
template <typename T>
T __ldg(const T* address) {
  return *address;
}
// Round-to-nearest arithmetic: plain IEEE float operations (the emulator is built with
// -ffp-contract=off, so nothing is fused).
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float a) { return std::exp(a); }
inline float __logf(float a) { return std::log(a); }
inline float __saturatef(float a) { return a < 0.0f ? 0.0f : (a > 1.0f ? 1.0f : a); }
inline float rsqrtf(float a) { return 1.0f / std::sqrt(a); }
inline float __int2float_rn(int a) { return static_cast<float>(a); }
inline int __float2int_rn(float a) { return static_cast<int>(std::nearbyint(a)); }
inline int __float2int_rz(float a) { return static_cast<int>(a); }
using std::max;
using std::min;

// ---- half precision on raw bits (sdk/reference/half.h: round to nearest even) ----------
struct __half {
  uint16_t bits;
};
struct __half2 {
  __half x, y;
};
inline __half __ushort_as_half(unsigned short bits) { return __half{bits}; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline float __half2float(__half h) { return hwinfer::reference::f16_to_f32(h.bits); }
inline __half __float2half_rn(float v) { return __half{hwinfer::reference::f32_to_f16(v)}; }
inline __half __float2half(float v) { return __float2half_rn(v); }
inline float __low2float(__half2 h) { return __half2float(h.x); }
inline float __high2float(__half2 h) { return __half2float(h.y); }
inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
inline __half2 __floats2half2_rn(float a, float b) {
  return __half2{__float2half_rn(a), __float2half_rn(b)};
}
inline float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }
using half = __half;
using half2 = __half2;

// GPU_LAUNCH and GPU_DYNAMIC_SHARED (gpu_device.h) in their emulated form.
#define HWINFER_EMU_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
  ::emu::launch(#kernel, kernel, grid, block, shared_bytes, stream, __VA_ARGS__)
#define HWINFER_EMU_DYNAMIC_SHARED(type, name) \
  type* const name = reinterpret_cast<type*>(::emu::dynamic_shared())

#endif  // HWINFER_TESTS_GPU_EMU_EMU_DEVICE_H_
