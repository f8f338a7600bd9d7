// cpu_internal.h — the CPU plugin's handle types and the ABI slot functions its files share.
//
// plugin.h only declares the opaque handle structs; this header defines them, so their contents
// are ours to change: nothing here crosses the ABI. Nothing declared here may be exported (the one
// visible symbol is hwinfer_plugin_query in plugin_entry.cpp), and no C++ exception may leave a
// slot function: each one wraps its body in guarded() or catches everything itself.
//
// Object lifetimes (the host's duty, per plugin.h): streams, events and buffers are destroyed
// before device_close, devices are closed before plugin_destroy. When a host forgets, the plugin
// logs a warning rather than crash, and leaks what it cannot safely free.
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
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"
#include "kit/check_context.h"
#include "kit/dtype_info.h"
#include "kit/plugin_errors.h"
#include "scratch_buffer.h"
#include "stream_worker.h"
#include "thread_pool.h"

#ifndef HWINFER_CPU_PLUGIN_VERSION
#define HWINFER_CPU_PLUGIN_VERSION "0.0.0-unknown"
#endif

// One initialised plugin instance (plugin_init .. plugin_destroy).
struct hwinfer_plugin {
  const hwinfer_host_api* host = nullptr;  // valid until plugin_destroy returns
  int thread_count = 1;                    // threads a kernel runs on (pool workers + caller)
  hwinfer::cpu::GemmIsa gemm_isa = hwinfer::cpu::GemmIsa::kPortable;
  std::unique_ptr<hwinfer::cpu::ThreadPool> pool;  // shared by every stream of the instance
  std::atomic<bool> device_is_open{false};         // the one device may be open once at a time
};

// The one device (ordinal 0): this machine's CPUs and memory.
struct hwinfer_device {
  hwinfer_plugin* plugin = nullptr;
  uint64_t max_allocation_bytes = 0;  // physical memory at open; 0 = unknown (no limit checked)
  // Live objects, so device_close can warn when the host forgot some.
  std::atomic<int64_t> live_buffers{0};
  std::atomic<int64_t> live_streams{0};
  std::atomic<int64_t> live_events{0};
};

// One allocation: 64-byte aligned host memory (both memory kinds), or imported host memory.
struct hwinfer_buffer {
  hwinfer_device* device = nullptr;
  uint8_t* data = nullptr;  // [size_bytes]
  uint64_t size_bytes = 0;
  uint32_t memory_kind = HWINFER_MEMORY_DEVICE;
  bool owns_data = true;  // false for buffer_import_host: the host owns that memory
};

// An in-order queue with its own worker thread; kernels fan out from it through plugin->pool.
struct hwinfer_stream {
  hwinfer_device* device = nullptr;
  hwinfer::cpu::ThreadPool* pool = nullptr;
  hwinfer::cpu::GemmIsa gemm_isa = hwinfer::cpu::GemmIsa::kPortable;
  hwinfer::cpu::ScratchBuffer scratch;  // for kernels running on |worker| only
  hwinfer::cpu::StreamWorker worker;    // last: its thread joins first on destruction
};

// A point in a stream. event_record bumps recorded_generation at once; the stream bumps
// completed_generation (and takes the timestamp) when it gets there. The event is complete when
// completed_generation >= recorded_generation, so a re-record resets it until the stream catches up
// and a never-recorded event (both 0) is complete.
struct hwinfer_event {
  hwinfer_device* device = nullptr;
  std::mutex mutex;  // guards the three counters
  std::condition_variable completed;
  uint64_t recorded_generation = 0;
  uint64_t completed_generation = 0;
  uint64_t timestamp_ns = 0;  // std::chrono::steady_clock at completed_generation
};

namespace hwinfer::cpu {

inline constexpr const char* kPluginName = "cpu";

// Sends one printf-style message to the host's log callback, if there is one. Never prints.
void log_message(const hwinfer_host_api* host, uint32_t level, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

// guarded(), require_non_null() and check_buffer_range() with this plugin's name in their
// messages (sdk/kit/plugin_errors.h): guarded runs |body| (returning hwinfer_error*) and
// turns any exception into an error value, so nothing throws across the ABI; |what| names the
// entry point in the message.
template <typename Body>
hwinfer_error* guarded(const char* what, Body&& body) noexcept {
  return backend::guarded(kPluginName, what, std::forward<Body>(body));
}

// INVALID_ARGUMENT naming |what| when |pointer| is NULL, else NULL.
inline hwinfer_error* require_non_null(const void* pointer, const char* what) {
  return backend::require_non_null(kPluginName, pointer, what);
}

// NULL when [offset, offset + size) lies inside |buffer|, else OUT_OF_RANGE naming |what| with the
// offset, size and buffer size.
inline hwinfer_error* check_buffer_range(const hwinfer_buffer* buffer, uint64_t offset,
                                         uint64_t size, const char* what) {
  return backend::check_byte_range(kPluginName, buffer->size_bytes, offset, size, what);
}

// The ABI's function slots, grouped by the file that implements them.

// plugin_entry.cpp
hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                           size_t n_options, hwinfer_plugin** out);
void plugin_destroy(hwinfer_plugin* plugin);

// device.cpp
hwinfer_error* device_count(hwinfer_plugin* plugin, uint32_t* out_count);
hwinfer_error* device_get_info(hwinfer_plugin* plugin, uint32_t ordinal, hwinfer_device_info* out);
hwinfer_error* device_open(hwinfer_plugin* plugin, uint32_t ordinal, const hwinfer_option* options,
                           size_t n_options, hwinfer_device** out);
void device_close(hwinfer_device* device);

// memory.cpp
hwinfer_error* buffer_alloc(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                            hwinfer_buffer** out);
void buffer_free(hwinfer_buffer* buffer);
hwinfer_error* buffer_map(hwinfer_buffer* buffer, void** out_host_ptr);
hwinfer_error* buffer_import_host(hwinfer_device* device, void* host_ptr, uint64_t size_bytes,
                                  hwinfer_buffer** out);
// The context of the shared descriptor checks (sdk/kit/kernel_checks.h) for this plugin:
// "cpu" messages, buffers read through hwinfer_buffer above (data is the host address), views on
// |device|, buffers required when |require_buffers| (the enqueue slots; kernel_query passes
// false). No kernel_limits hook: the CPU runs every descriptor the shared checks accept.
backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers);

// stream.cpp
hwinfer_error* stream_create(hwinfer_device* device, hwinfer_stream** out);
void stream_destroy(hwinfer_stream* stream);
hwinfer_error* stream_synchronize(hwinfer_stream* stream);
hwinfer_error* copy_h2d(hwinfer_stream* stream, const void* src, hwinfer_buffer* dst,
                        uint64_t dst_offset, uint64_t size_bytes);
hwinfer_error* copy_d2h(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset, void* dst,
                        uint64_t size_bytes);
hwinfer_error* copy_d2d(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                        hwinfer_buffer* dst, uint64_t dst_offset, uint64_t size_bytes);

// event.cpp
hwinfer_error* event_create(hwinfer_device* device, hwinfer_event** out);
void event_destroy(hwinfer_event* event);
hwinfer_error* event_record(hwinfer_event* event, hwinfer_stream* stream);
hwinfer_error* stream_wait_event(hwinfer_stream* stream, hwinfer_event* event);
hwinfer_error* event_synchronize(hwinfer_event* event);
hwinfer_error* event_query(hwinfer_event* event, uint32_t* out_complete);
hwinfer_error* event_elapsed_ns(hwinfer_event* start, hwinfer_event* end, uint64_t* out_elapsed_ns);

// kernels.cpp
hwinfer_error* kernel_query(hwinfer_device* device, const hwinfer_kernel_desc* desc,
                            hwinfer_kernel_support* out);
const hwinfer_kernel_table* kernel_table();

// Address of the view's element [0, ..., 0]. The view must have passed its kind's check with a
// buffer.
inline uint8_t* view_data(const hwinfer_tensor_view& view) {
  return view.buffer->data + view.offset_bytes;
}

// Bytes per element of a non-block dtype (F32, F16, BF16, I8, I32); 0 for Q8_0, Q4_0 and unknown.
using backend::dtype_element_bytes;

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_CPU_INTERNAL_H_
