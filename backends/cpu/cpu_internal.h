// cpu_internal.h — the CPU plugin's handle types, on the plugin kit's bases
// (sdk/include/hwinfer/kit/handles.h).
//
// plugin.h only declares the opaque handle structs; this header defines them, so their contents
// are ours to change: nothing here crosses the ABI. The kit writes every slot around them and the
// one visible symbol (cpu_backend.h, plugin_entry.cpp); it also counts live objects and warns about
// the ones a host forgets to destroy.
#ifndef HWINFER_BACKENDS_CPU_CPU_INTERNAL_H_
#define HWINFER_BACKENDS_CPU_CPU_INTERNAL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include "gemm_f32.h"
#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"
#include "scratch_buffer.h"
#include "shm_group.h"
#include "stream_worker.h"
#include "thread_pool.h"

#ifndef HWINFER_CPU_PLUGIN_VERSION
#define HWINFER_CPU_PLUGIN_VERSION "0.0.0-unknown"
#endif

// One initialised plugin instance (plugin_init .. plugin_destroy): one device, ordinal 0.
struct hwinfer_plugin : hwinfer::kit::PluginBase {
  int thread_count = 1;  // threads a kernel runs on (pool workers + caller)
  hwinfer::cpu::GemmIsa gemm_isa = hwinfer::cpu::GemmIsa::kPortable;
  std::unique_ptr<hwinfer::cpu::ThreadPool> pool;  // shared by every stream of the instance
};

// The one device (ordinal 0): this machine's CPUs and memory. Its max_allocation_bytes is the
// physical memory at open (0 = unknown: no limit checked).
struct hwinfer_device : hwinfer::kit::DeviceBase {};

// One allocation: 64-byte aligned host memory (both memory kinds), or imported host memory.
struct hwinfer_buffer : hwinfer::kit::HostBuffer {};

// An in-order queue with its own worker thread; kernels fan out from it through plugin->pool.
struct hwinfer_stream : hwinfer::kit::StreamBase {
  hwinfer::cpu::ThreadPool* pool = nullptr;
  hwinfer::cpu::GemmIsa gemm_isa = hwinfer::cpu::GemmIsa::kPortable;
  hwinfer::cpu::ScratchBuffer scratch;  // for kernels running on |worker| only
  hwinfer::cpu::StreamWorker worker;    // last: its thread joins first on destruction
};

// A point in a stream. event_record bumps recorded_generation at once; the stream bumps
// completed_generation (and takes the timestamp) when it gets there. The event is complete when
// completed_generation >= recorded_generation, so a re-record resets it until the stream catches up
// and a never-recorded event (both 0) is complete.
struct hwinfer_event : hwinfer::kit::EventBase {
  std::mutex mutex;  // guards the three counters
  std::condition_variable completed;
  uint64_t recorded_generation = 0;
  uint64_t completed_generation = 0;
  uint64_t timestamp_ns = 0;  // std::chrono::steady_clock at completed_generation
};

// One rank's end of a device-collective communicator (ABI 1.4): a shared-memory group of the ranks
// on this machine (shm_group.h).
struct hwinfer_comm : hwinfer::kit::CommBase {
  std::unique_ptr<hwinfer::cpu::ShmGroup> group;
};

namespace hwinfer::cpu {

inline constexpr const char* kPluginName = "cpu";

// Address of the view's element [0, ..., 0]. The view must have passed its kind's check with a
// buffer.
inline uint8_t* view_data(const hwinfer_tensor_view& view) {
  return view.buffer->data + view.offset_bytes;
}

// Bytes per element of a non-block dtype (F32, F16, BF16, I8, I32); 0 for Q8_0, Q4_0 and unknown.
using backend::dtype_element_bytes;

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_CPU_INTERNAL_H_
