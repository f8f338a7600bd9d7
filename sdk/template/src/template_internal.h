// template_internal.h — the plugin's private types and the functions its files share.
//
// TEMPLATE: this whole folder is a skeleton to copy. Replace `template` with your backend's name
// everywhere (file names, identifiers, the CMake target, "Template device"), keeping the case of
// each occurrence, then fill in the places marked "DRIVER:" with calls into your driver.
//
// The ABI hands the host opaque pointers (hwinfer_plugin*, hwinfer_device*, ...). plugin.h only
// declares those structs; this header defines them, so their contents are ours to change at will:
// nothing here crosses the ABI. Nothing in this header may be exported: the one visible symbol is
// hwinfer_plugin_query (template_plugin.cpp), everything else has hidden visibility.
//
// Note for the find/replace: this code avoids the C++ keyword that shares the skeleton's name, so
// a blind replace of it cannot break the code.
#ifndef HWINFER_TEMPLATE_INTERNAL_H_
#define HWINFER_TEMPLATE_INTERNAL_H_

#include <atomic>
#include <cstdarg>
#include <cstdint>

#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"  // hwinfer_make_error, hwinfer_copy_out, hwinfer_set_support

// One initialised plugin instance (plugin_init .. plugin_destroy). The host may create several
// instances of one library; keep per-instance state here, never in globals.
struct hwinfer_plugin {
  const hwinfer_host_api* host = nullptr;  // valid until plugin_destroy returns
  // The template has exactly one device. The ABI allows it to be open once per instance at a time;
  // device_open/close flip this flag atomically because device calls may come from any thread.
  std::atomic<bool> device_is_open{false};
  // DRIVER: your driver's context/instance handle lives here (e.g. a CUcontext, a VkInstance).
};

// One opened device.
struct hwinfer_device {
  hwinfer_plugin* plugin = nullptr;
  uint32_t ordinal = 0;
  // What device_get_info reports as max_allocation_bytes; buffer_alloc enforces it, so the limit a
  // plugin reports and the one it applies cannot drift apart. 0 = no limit known.
  uint64_t max_allocation_bytes = 0;
  // Live objects created on this device. The ABI says the host destroys them all before
  // device_close; counting them lets us log (not abort) when a host gets that wrong.
  std::atomic<int64_t> live_buffers{0};
  std::atomic<int64_t> live_streams{0};
  std::atomic<int64_t> live_events{0};
  // DRIVER: your device handle, queues, allocator... live here.
};

// One allocation. The template's "device memory" is host memory, so every buffer is mappable.
struct hwinfer_buffer {
  hwinfer_device* device = nullptr;
  void* data = nullptr;  // DRIVER: a device pointer / VkDeviceMemory instead
  uint64_t size_bytes = 0;
  uint32_t memory_kind = HWINFER_MEMORY_DEVICE;
  bool owns_data = true;  // false for buffer_import_host: the host owns that memory
};

// A stream. The template runs every copy and kernel synchronously inside the enqueue call, which
// trivially keeps the ABI's promise that a stream is in order. A real backend records the work into
// a driver queue (CUDA stream, Vulkan command buffer) and returns at once.
struct hwinfer_stream {
  hwinfer_device* device = nullptr;
  // DRIVER: your queue handle. Errors found while queued work runs are kept here and returned by
  // the next stream_synchronize (the template never has any: it reports them at enqueue time).
};

// An event: a point in a stream plus the device timestamp taken when the stream reached it.
struct hwinfer_event {
  hwinfer_device* device = nullptr;
  // steady_clock nanoseconds of the last record; 0 = never recorded. Atomic because event_query
  // may run on one thread while another records.
  std::atomic<uint64_t> timestamp_ns{0};
  // DRIVER: a CUevent / VkQueryPool slot, read back in event_elapsed_ns.
};

namespace hwinfer_template {

// Sends one printf-style message to the host's log callback, if the host provides one. Plugins
// never print to stdout/stderr: the host decides where messages go.
void log_message(const hwinfer_plugin* plugin, uint32_t level, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

// Rejects every option with INVALID_ARGUMENT naming its key (the template has none). |what| is
// "plugin_init" or "device_open", for the message.
hwinfer_error* reject_unknown_options(const hwinfer_option* options, size_t n_options,
                                      const char* what);

// The ABI's function slots, grouped by the file that implements them.

// template_plugin.cpp
hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                           size_t n_options, hwinfer_plugin** out);
void plugin_destroy(hwinfer_plugin* plugin);

// template_device.cpp
// The largest single allocation the device allows (what device_get_info reports).
uint64_t device_max_allocation_bytes();
hwinfer_error* device_count(hwinfer_plugin* plugin, uint32_t* out_count);
hwinfer_error* device_get_info(hwinfer_plugin* plugin, uint32_t ordinal, hwinfer_device_info* out);
hwinfer_error* device_open(hwinfer_plugin* plugin, uint32_t ordinal, const hwinfer_option* options,
                           size_t n_options, hwinfer_device** out);
void device_close(hwinfer_device* device);

// template_buffer.cpp
hwinfer_error* buffer_alloc(hwinfer_device* device, uint64_t size_bytes, uint32_t memory_kind,
                            hwinfer_buffer** out);
void buffer_free(hwinfer_buffer* buffer);
hwinfer_error* buffer_map(hwinfer_buffer* buffer, void** out_host_ptr);
hwinfer_error* buffer_import_host(hwinfer_device* device, void* host_ptr, uint64_t size_bytes,
                                  hwinfer_buffer** out);
// NULL when [offset, offset + size) lies inside |buffer|, else OUT_OF_RANGE naming |what|.
hwinfer_error* check_buffer_range(const hwinfer_buffer* buffer, uint64_t offset, uint64_t size,
                                  const char* what);

// template_stream.cpp
hwinfer_error* stream_create(hwinfer_device* device, hwinfer_stream** out);
void stream_destroy(hwinfer_stream* stream);
hwinfer_error* stream_synchronize(hwinfer_stream* stream);
hwinfer_error* copy_h2d(hwinfer_stream* stream, const void* src, hwinfer_buffer* dst,
                        uint64_t dst_offset, uint64_t size_bytes);
hwinfer_error* copy_d2h(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset, void* dst,
                        uint64_t size_bytes);
hwinfer_error* copy_d2d(hwinfer_stream* stream, hwinfer_buffer* src, uint64_t src_offset,
                        hwinfer_buffer* dst, uint64_t dst_offset, uint64_t size_bytes);

// template_event.cpp
hwinfer_error* event_create(hwinfer_device* device, hwinfer_event** out);
void event_destroy(hwinfer_event* event);
hwinfer_error* event_record(hwinfer_event* event, hwinfer_stream* stream);
hwinfer_error* stream_wait_event(hwinfer_stream* stream, hwinfer_event* event);
hwinfer_error* event_synchronize(hwinfer_event* event);
hwinfer_error* event_query(hwinfer_event* event, uint32_t* out_complete);
hwinfer_error* event_elapsed_ns(hwinfer_event* start, hwinfer_event* end, uint64_t* out_elapsed_ns);

// template_kernels.cpp
hwinfer_error* kernel_query(hwinfer_device* device, const hwinfer_kernel_desc* desc,
                            hwinfer_kernel_support* out);
// The kernel table: static storage, only the bandwidth probe filled in.
const hwinfer_kernel_table* kernel_table();

}  // namespace hwinfer_template

#endif  // HWINFER_TEMPLATE_INTERNAL_H_
