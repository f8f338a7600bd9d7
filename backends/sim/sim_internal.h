// sim_internal.h — the simulated backend's handle types and the ABI slot functions its files
// share (see README.md for the model: roofline cost, virtual clock, virtual buffers, fingerprints).
//
// plugin.h only declares the opaque handle structs; this header defines them. Nothing here crosses
// the ABI or is exported (the one visible symbol is hwinfer_plugin_query in plugin_entry.cpp), and
// no C++ exception may leave a slot function: each wraps its body in guarded().
//
// All work runs synchronously on the enqueueing thread: a "queued" copy or kernel has finished
// when its slot returns, and its modelled duration advances the stream's virtual clock. Nothing
// reads a real clock.
#ifndef HWINFER_BACKENDS_SIM_SIM_INTERNAL_H_
#define HWINFER_BACKENDS_SIM_SIM_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hwinfer/hardware_spec.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"
#include "kit/check_context.h"
#include "kit/plugin_errors.h"

#ifndef HWINFER_SIM_PLUGIN_VERSION
#define HWINFER_SIM_PLUGIN_VERSION "0.0.0-unknown"
#endif

// One initialised plugin instance: the hardware it pretends to be, and per-ordinal state.
struct hwinfer_plugin {
  const hwinfer_host_api* host = nullptr;
  hwinfer::HardwareSpec spec;       // from the `hardware` file
  uint64_t memory_total_bytes = 0;  // memory_gib of the file, or 80 GiB
  uint64_t backed_limit_bytes = 0;  // buffers up to this size get host memory
  uint32_t device_count = 1;        // option `devices`
  std::mutex mutex;                 // guards the two vectors below
  std::vector<bool> open;           // [device_count] device_open'ed now
  std::vector<uint64_t> allocated;  // [device_count] bytes of live buffers (info's free)
};

// One opened simulated device.
struct hwinfer_device {
  hwinfer_plugin* plugin = nullptr;
  uint32_t ordinal = 0;
  std::mutex mutex;     // guards allocated_bytes and clock_ns
  double clock_ns = 0;  // device-wide virtual clock: max over its streams' cursors
  std::atomic<int64_t> live_buffers{0};
  std::atomic<int64_t> live_streams{0};
  std::atomic<int64_t> live_events{0};
};

// One allocation. |data| is zero-initialised host memory [size_bytes] for a backed buffer, NULL
// for a VIRTUAL one (bigger than backed_limit_bytes: only its size exists).
struct hwinfer_buffer {
  hwinfer_device* device = nullptr;
  uint8_t* data = nullptr;
  uint64_t size_bytes = 0;
  uint32_t memory_kind = HWINFER_MEMORY_DEVICE;
  // Byte offsets of the 1e30 "one-hot" logits gemm/matmul_quantized wrote (fingerprint.h), so a
  // later write of the same row can clear them.
  std::mutex one_hot_mutex;
  std::set<uint64_t> one_hot_offsets;
  bool backed() const { return data != nullptr; }
};

// An in-order queue with a virtual time cursor (ns since the device opened).
struct hwinfer_stream {
  hwinfer_device* device = nullptr;
  double now_ns = 0;
  hwinfer_error* pending_error = nullptr;  // first error found "while running"; sync returns it
};

// A point on a stream's virtual timeline. Work is synchronous, so a recorded event is complete.
struct hwinfer_event {
  hwinfer_device* device = nullptr;
  bool recorded = false;
  double time_ns = 0;
};

namespace hwinfer::sim {

inline constexpr const char* kPluginName = "sim";

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

// Advances |stream|'s cursor by |duration_ns| and the device clock to at least the new cursor.
void advance_clock(hwinfer_stream* stream, double duration_ns);

// The modelled duration of moving |bytes| at the spec bandwidth, plus the launch overhead.
double transfer_ns(const hwinfer_plugin& plugin, double bytes);

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
// The context of the shared descriptor checks (sdk/kit/kernel_checks.h) for this plugin:
// "sim" messages, buffers read through hwinfer_buffer above (data is the host address, NULL for
// a virtual buffer), views on |device|, buffers required when |require_buffers| (the enqueue
// slots; kernel_query passes false). No kernel_limits hook: the sim accepts exactly what the
// shared checks accept, as a real backend does.
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

}  // namespace hwinfer::sim

#endif  // HWINFER_BACKENDS_SIM_SIM_INTERNAL_H_
