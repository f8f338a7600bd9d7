// object_slots.h — the device, memory, stream and event slots of a plugin's C table, written once
// (plugin kit, issue 19). Each slot is a noexcept template over the backend struct B: it guards
// the call (no exception crosses the ABI: bad_alloc is OUT_OF_MEMORY, anything else INTERNAL),
// names a NULL argument as plugin.h does ("cpu: copy_d2d: dst must not be NULL"), runs the checks
// every backend needs (ordinals, devices opened once, size 0, memory kinds, same-device handles,
// byte ranges, overlapping copies), counts live objects, and only then calls B with references to
// valid handles. plugin_api.h lists what B provides; handles.h the bases its structs derive from.
#ifndef HWINFER_SDK_KIT_OBJECT_SLOTS_H_
#define HWINFER_SDK_KIT_OBJECT_SLOTS_H_

#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <system_error>
#include <type_traits>
#include <utility>

#include "hwinfer/kit/detect.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/kit/kernel_slots.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/kit/plugin_log.h"
#include "hwinfer/kit/plugin_options.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::kit {

// Optional members of a backend struct B (detect.h).
HWINFER_KIT_DETECT(HasImportHost,
                   B::import_host(std::declval<hwinfer_device&>(), std::declval<hwinfer_buffer&>(),
                                  std::declval<void*>()))
HWINFER_KIT_DETECT(HasRelease, B::release(std::declval<hwinfer_buffer&>()))
HWINFER_KIT_DETECT(HasInitStream,
                   B::init_stream(std::declval<hwinfer_device&>(), std::declval<hwinfer_stream&>()))
HWINFER_KIT_DETECT(HasCloseDevice, B::close_device(std::declval<hwinfer_device&>()))
HWINFER_KIT_DETECT(HasDestroyStream, B::destroy_stream(std::declval<hwinfer_stream&>()))
HWINFER_KIT_DETECT(HasInitEvent,
                   B::init_event(std::declval<hwinfer_device&>(), std::declval<hwinfer_event&>()))
HWINFER_KIT_DETECT(HasDestroyEvent, B::destroy_event(std::declval<hwinfer_event&>()))
HWINFER_KIT_DETECT(HasDeviceCountOption, B::kDeviceCountOption)

namespace slots {

inline hwinfer_error* require(const char* name, const void* pointer, const char* what) {
  return backend::require_non_null(name, pointer, what);
}

// OUT_OF_RANGE unless |ordinal| names one of the plugin's devices.
template <typename B>
hwinfer_error* check_ordinal(const PluginOf<B>& plugin, uint32_t ordinal, const char* slot) {
  if (ordinal < plugin.device_count) return nullptr;
  const char* option = "";  // the plugin option that sets the count, if there is one
  if constexpr (HasDeviceCountOption<B>::value) option = B::kDeviceCountOption;
  return hwinfer_make_error(HWINFER_STATUS_OUT_OF_RANGE,
                            "%s %s: device ordinal %" PRIu32
                            " is out of range (the %s plugin has %" PRIu32 " device(s)%s%s%s)",
                            B::kName, slot, ordinal, B::kName, plugin.device_count,
                            option[0] != '\0' ? "; option '" : "", option,
                            option[0] != '\0' ? "'" : "");
}

template <typename B>
hwinfer_error* plugin_init(const hwinfer_host_api* host, const hwinfer_option* options,
                           size_t n_options, PluginOf<B>** out) noexcept {
  return backend::guarded(B::kName, "plugin_init", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, host, "plugin_init: host"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out, "plugin_init: out"));
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::check_option_array(B::kName, "plugin_init", options, n_options));
    std::unique_ptr<PluginOf<B>> plugin;
    HWINFER_KIT_RETURN_IF_ERROR(B::init(*host, options, n_options, &plugin));
    if (plugin == nullptr) {
      return hwinfer_make_error(HWINFER_STATUS_INTERNAL, "%s plugin_init: made no plugin",
                                B::kName);
    }
    plugin->host = host;
    plugin->open.assign(plugin->device_count, false);
    *out = plugin.release();
    return nullptr;
  });
}

template <typename B>
void plugin_destroy(PluginOf<B>* plugin) noexcept {
  if (plugin == nullptr) return;
  try {
    for (uint32_t ordinal = 0; ordinal < plugin->open.size(); ++ordinal) {
      if (!plugin->open[ordinal]) continue;
      backend::log_message(plugin->host, HWINFER_LOG_WARNING, B::kName,
                           "%s plugin_destroy: device %" PRIu32
                           " is still open; the host must close it first (its handle now dangles)",
                           B::kName, ordinal);
    }
    delete plugin;
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

template <typename B>
hwinfer_error* device_count(PluginOf<B>* plugin, uint32_t* out_count) noexcept {
  return backend::guarded(B::kName, "device_count", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, plugin, "device_count: plugin"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out_count, "device_count: out_count"));
    *out_count = plugin->device_count;
    return nullptr;
  });
}

template <typename B>
hwinfer_error* device_get_info(PluginOf<B>* plugin, uint32_t ordinal,
                               hwinfer_device_info* out) noexcept {
  return backend::guarded(B::kName, "device_get_info", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, plugin, "device_get_info: plugin"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out, "device_get_info: out"));
    HWINFER_KIT_RETURN_IF_ERROR(check_ordinal<B>(*plugin, ordinal, "device_get_info"));
    hwinfer_device_info info;
    std::memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    HWINFER_KIT_RETURN_IF_ERROR(B::device_info(*plugin, ordinal, info));
    hwinfer_copy_out(out, &info, sizeof(info));
    return nullptr;
  });
}

// Marks |ordinal| open; FAILED_PRECONDITION when it already is.
template <typename B>
hwinfer_error* mark_open(PluginOf<B>& plugin, uint32_t ordinal) {
  std::lock_guard<std::mutex> lock(plugin.open_mutex);
  if (plugin.open[ordinal]) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s device_open: device %" PRIu32
                              " is already open in this plugin instance (close it first)",
                              B::kName, ordinal);
  }
  plugin.open[ordinal] = true;
  return nullptr;
}

template <typename B>
void mark_closed(PluginOf<B>& plugin, uint32_t ordinal) {
  std::lock_guard<std::mutex> lock(plugin.open_mutex);
  plugin.open[ordinal] = false;
}

template <typename B>
hwinfer_error* device_open(PluginOf<B>* plugin, uint32_t ordinal, const hwinfer_option* options,
                           size_t n_options, DeviceOf<B>** out) noexcept {
  return backend::guarded(B::kName, "device_open", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, plugin, "device_open: plugin"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out, "device_open: out"));
    HWINFER_KIT_RETURN_IF_ERROR(check_ordinal<B>(*plugin, ordinal, "device_open"));
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::check_option_array(B::kName, "device_open", options, n_options));
    HWINFER_KIT_RETURN_IF_ERROR(mark_open<B>(*plugin, ordinal));
    std::unique_ptr<DeviceOf<B>> device;
    hwinfer_error* error = nullptr;
    try {
      error = B::open_device(*plugin, ordinal, options, n_options, &device);
    } catch (...) {
      mark_closed<B>(*plugin, ordinal);
      throw;
    }
    if (error == nullptr && device == nullptr) {
      error =
          hwinfer_make_error(HWINFER_STATUS_INTERNAL, "%s device_open: opened no device", B::kName);
    }
    if (error != nullptr) {
      mark_closed<B>(*plugin, ordinal);
      return error;
    }
    device->plugin = plugin;
    device->ordinal = ordinal;
    *out = device.release();
    return nullptr;
  });
}

// Logs the objects the host left alive on |device| and returns true when there are any.
template <typename B>
bool warn_live_objects(const DeviceOf<B>& device) {
  const int64_t buffers = device.live_buffers.load();
  const int64_t streams = device.live_streams.load();
  const int64_t events = device.live_events.load();
  if (buffers == 0 && streams == 0 && events == 0) return false;
  backend::log_message(device.plugin->host, HWINFER_LOG_WARNING, B::kName,
                       "%s device_close: %" PRId64 " buffers, %" PRId64 " streams and %" PRId64
                       " events are still alive; the host must destroy them before closing the "
                       "device (it is closed when the last of them is destroyed)",
                       B::kName, buffers, streams, events);
  return true;
}

template <typename B>
void close_now(DeviceOf<B>* device) {
  if constexpr (HasCloseDevice<B>::value) B::close_device(*device);
  delete device;
}

// Closes |device| when device_close has been called and no object is left on it; run after each
// destroy. The exchange makes one caller the closer when several objects go at once.
template <typename B>
void finish_pending_close(DeviceOf<B>* device) {
  if (!device->close_pending.load()) return;
  if (device->live_buffers.load() != 0 || device->live_streams.load() != 0 ||
      device->live_events.load() != 0) {
    return;
  }
  if (device->close_pending.exchange(false)) close_now<B>(device);
}

template <typename B>
void device_close(DeviceOf<B>* device) noexcept {
  if (device == nullptr) return;
  try {
    mark_closed<B>(*device->plugin, device->ordinal);
    if (!warn_live_objects<B>(*device)) {
      close_now<B>(device);
      return;
    }
    // Live objects still point at the device: it stays until the last of them is destroyed.
    device->close_pending.store(true);
    finish_pending_close<B>(device);  // one may have gone since the count was read
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

template <typename B>
hwinfer_error* check_new_buffer(const char* slot, uint64_t size_bytes, uint32_t memory_kind) {
  if (size_bytes == 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT, "%s %s: size_bytes must be > 0",
                              B::kName, slot);
  }
  if (memory_kind != HWINFER_MEMORY_DEVICE && memory_kind != HWINFER_MEMORY_HOST_VISIBLE) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "%s %s: unknown memory kind %" PRIu32
                              " (the %s device has DEVICE=0 and HOST_VISIBLE=1)",
                              B::kName, slot, memory_kind, B::kName);
  }
  return nullptr;
}

// A new buffer handle of |size_bytes| and |memory_kind| on |device|, not yet counted.
template <typename B>
std::unique_ptr<BufferOf<B>> new_buffer(DeviceOf<B>* device, uint64_t size_bytes,
                                        uint32_t memory_kind) {
  auto buffer = std::make_unique<BufferOf<B>>();
  buffer->device = device;
  buffer->size_bytes = size_bytes;
  buffer->memory_kind = memory_kind;
  return buffer;
}

template <typename B>
hwinfer_error* buffer_alloc(DeviceOf<B>* device, uint64_t size_bytes, uint32_t memory_kind,
                            BufferOf<B>** out) noexcept {
  return backend::guarded(B::kName, "buffer_alloc", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, device, "buffer_alloc: device"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out, "buffer_alloc: out"));
    HWINFER_KIT_RETURN_IF_ERROR(check_new_buffer<B>("buffer_alloc", size_bytes, memory_kind));
    if (device->max_allocation_bytes != 0 && size_bytes > device->max_allocation_bytes) {
      return hwinfer_make_error(HWINFER_STATUS_OUT_OF_MEMORY,
                                "%s buffer_alloc: %" PRIu64
                                " bytes exceed the device's max_allocation_bytes (%" PRIu64 ")",
                                B::kName, size_bytes, device->max_allocation_bytes);
    }
    std::unique_ptr<BufferOf<B>> buffer = new_buffer<B>(device, size_bytes, memory_kind);
    HWINFER_KIT_RETURN_IF_ERROR(B::allocate(*device, *buffer));
    device->live_buffers.fetch_add(1);
    *out = buffer.release();
    return nullptr;
  });
}

template <typename B>
hwinfer_error* buffer_import_host(DeviceOf<B>* device, void* host_ptr, uint64_t size_bytes,
                                  BufferOf<B>** out) noexcept {
  return backend::guarded(B::kName, "buffer_import_host", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, device, "buffer_import_host: device"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, host_ptr, "buffer_import_host: host_ptr"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out, "buffer_import_host: out"));
    HWINFER_KIT_RETURN_IF_ERROR(
        check_new_buffer<B>("buffer_import_host", size_bytes, HWINFER_MEMORY_HOST_VISIBLE));
    std::unique_ptr<BufferOf<B>> buffer =
        new_buffer<B>(device, size_bytes, HWINFER_MEMORY_HOST_VISIBLE);
    HWINFER_KIT_RETURN_IF_ERROR(B::import_host(*device, *buffer, host_ptr));
    device->live_buffers.fetch_add(1);
    *out = buffer.release();
    return nullptr;
  });
}

template <typename B>
void buffer_free(BufferOf<B>* buffer) noexcept {
  if (buffer == nullptr) return;
  try {
    DeviceOf<B>* device = buffer->device;
    if constexpr (HasRelease<B>::value) B::release(*buffer);
    delete buffer;
    device->live_buffers.fetch_sub(1);
    finish_pending_close<B>(device);
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

template <typename B>
hwinfer_error* buffer_map(BufferOf<B>* buffer, void** out_host_ptr) noexcept {
  return backend::guarded(B::kName, "buffer_map", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, buffer, "buffer_map: buffer"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out_host_ptr, "buffer_map: out_host_ptr"));
    return B::map(*buffer, out_host_ptr);
  });
}

template <typename B>
hwinfer_error* stream_create(DeviceOf<B>* device, StreamOf<B>** out) noexcept {
  return backend::guarded(B::kName, "stream_create", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, device, "stream_create: device"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out, "stream_create: out"));
    std::unique_ptr<StreamOf<B>> stream;
    try {
      stream = std::make_unique<StreamOf<B>>();  // may start a thread
    } catch (const std::system_error& e) {
      return hwinfer_make_error(HWINFER_STATUS_UNAVAILABLE,
                                "%s stream_create: cannot start the stream: %s", B::kName,
                                e.what());
    }
    stream->device = device;
    if constexpr (HasInitStream<B>::value) {
      HWINFER_KIT_RETURN_IF_ERROR(B::init_stream(*device, *stream));
    }
    device->live_streams.fetch_add(1);
    *out = stream.release();
    return nullptr;
  });
}

template <typename B>
void stream_destroy(StreamOf<B>* stream) noexcept {
  if (stream == nullptr) return;
  try {
    DeviceOf<B>* device = stream->device;
    // The backend finishes the stream's work first (destroy_stream, or the struct's destructor).
    if constexpr (HasDestroyStream<B>::value) B::destroy_stream(*stream);
    delete stream;
    device->live_streams.fetch_sub(1);
    finish_pending_close<B>(device);
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

template <typename B>
hwinfer_error* stream_synchronize(StreamOf<B>* stream) noexcept {
  return backend::guarded(B::kName, "stream_synchronize", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, stream, "stream_synchronize: stream"));
    return B::synchronize(*stream);
  });
}

// INVALID_ARGUMENT unless |buffer| lives on |stream|'s device; |what| names the slot and operand.
template <typename B>
hwinfer_error* check_same_device(const StreamOf<B>& stream, const BufferOf<B>& buffer,
                                 const char* what) {
  if (buffer.device == stream.device) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: the buffer belongs to another device than the stream", B::kName,
                            what);
}

// The checks of a copy's one buffer operand: its device and the byte range.
template <typename B>
hwinfer_error* check_copy_operand(const StreamOf<B>& stream, const BufferOf<B>& buffer,
                                  uint64_t offset, uint64_t size_bytes, const char* what) {
  HWINFER_KIT_RETURN_IF_ERROR(check_same_device<B>(stream, buffer, what));
  return backend::check_byte_range(B::kName, buffer.size_bytes, offset, size_bytes, what);
}

template <typename B>
hwinfer_error* copy_h2d(StreamOf<B>* stream, const void* src, BufferOf<B>* dst, uint64_t dst_offset,
                        uint64_t size_bytes) noexcept {
  return backend::guarded(B::kName, "copy_h2d", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, stream, "copy_h2d: stream"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, dst, "copy_h2d: dst"));
    HWINFER_KIT_RETURN_IF_ERROR(
        check_copy_operand<B>(*stream, *dst, dst_offset, size_bytes, "copy_h2d (dst)"));
    if (size_bytes == 0) return nullptr;
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, src, "copy_h2d: src"));
    return B::copy_h2d(*stream, src, *dst, dst_offset, size_bytes);
  });
}

template <typename B>
hwinfer_error* copy_d2h(StreamOf<B>* stream, BufferOf<B>* src, uint64_t src_offset, void* dst,
                        uint64_t size_bytes) noexcept {
  return backend::guarded(B::kName, "copy_d2h", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, stream, "copy_d2h: stream"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, src, "copy_d2h: src"));
    HWINFER_KIT_RETURN_IF_ERROR(
        check_copy_operand<B>(*stream, *src, src_offset, size_bytes, "copy_d2h (src)"));
    if (size_bytes == 0) return nullptr;
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, dst, "copy_d2h: dst"));
    return B::copy_d2h(*stream, *src, src_offset, dst, size_bytes);
  });
}

// INVALID_ARGUMENT "<name> copy_d2d: source [...] and destination [...] overlap in memory".
template <typename B>
hwinfer_error* overlap_error(uint64_t src_offset, uint64_t dst_offset, uint64_t size_bytes) {
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s copy_d2d: source [offset %" PRIu64 ", size %" PRIu64
                            ") and destination [offset %" PRIu64 ", same size) overlap in memory",
                            B::kName, src_offset, size_bytes, dst_offset);
}

template <typename B>
hwinfer_error* copy_d2d(StreamOf<B>* stream, BufferOf<B>* src, uint64_t src_offset,
                        BufferOf<B>* dst, uint64_t dst_offset, uint64_t size_bytes) noexcept {
  // A capture records copy_d2d: its result goes through after_enqueue as a kernel's does.
  return after_enqueue<B>(
      stream, backend::guarded(B::kName, "copy_d2d", [&]() -> hwinfer_error* {
        HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, stream, "copy_d2d: stream"));
        HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, src, "copy_d2d: src"));
        HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, dst, "copy_d2d: dst"));
        HWINFER_KIT_RETURN_IF_ERROR(
            check_copy_operand<B>(*stream, *src, src_offset, size_bytes, "copy_d2d (src)"));
        HWINFER_KIT_RETURN_IF_ERROR(
            check_copy_operand<B>(*stream, *dst, dst_offset, size_bytes, "copy_d2d (dst)"));
        if (size_bytes == 0) return nullptr;
        if (src == dst && src_offset < dst_offset + size_bytes &&
            dst_offset < src_offset + size_bytes) {
          return overlap_error<B>(src_offset, dst_offset, size_bytes);
        }
        return B::copy_d2d(*stream, *src, src_offset, *dst, dst_offset, size_bytes);
      }));
}

template <typename B>
hwinfer_error* event_create(DeviceOf<B>* device, EventOf<B>** out) noexcept {
  return backend::guarded(B::kName, "event_create", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, device, "event_create: device"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out, "event_create: out"));
    auto event = std::make_unique<EventOf<B>>();
    event->device = device;
    if constexpr (HasInitEvent<B>::value) {
      HWINFER_KIT_RETURN_IF_ERROR(B::init_event(*device, *event));
    }
    device->live_events.fetch_add(1);
    *out = event.release();
    return nullptr;
  });
}

template <typename B>
void event_destroy(EventOf<B>* event) noexcept {
  if (event == nullptr) return;
  try {
    DeviceOf<B>* device = event->device;
    if constexpr (HasDestroyEvent<B>::value) B::destroy_event(*event);
    delete event;
    device->live_events.fetch_sub(1);
    finish_pending_close<B>(device);
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

// INVALID_ARGUMENT unless |event| and |stream| belong to one device.
template <typename B>
hwinfer_error* check_event_device(const EventOf<B>& event, const StreamOf<B>& stream,
                                  const char* slot) {
  if (event.device == stream.device) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "%s %s: the event and the stream belong to different devices", B::kName,
                            slot);
}

template <typename B>
hwinfer_error* event_record(EventOf<B>* event, StreamOf<B>* stream) noexcept {
  return backend::guarded(B::kName, "event_record", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, event, "event_record: event"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, stream, "event_record: stream"));
    HWINFER_KIT_RETURN_IF_ERROR(check_event_device<B>(*event, *stream, "event_record"));
    return B::record(*event, *stream);
  });
}

template <typename B>
hwinfer_error* stream_wait_event(StreamOf<B>* stream, EventOf<B>* event) noexcept {
  return backend::guarded(B::kName, "stream_wait_event", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, stream, "stream_wait_event: stream"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, event, "stream_wait_event: event"));
    HWINFER_KIT_RETURN_IF_ERROR(check_event_device<B>(*event, *stream, "stream_wait_event"));
    return B::wait(*stream, *event);
  });
}

template <typename B>
hwinfer_error* event_synchronize(EventOf<B>* event) noexcept {
  return backend::guarded(B::kName, "event_synchronize", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, event, "event_synchronize: event"));
    return B::synchronize(*event);
  });
}

template <typename B>
hwinfer_error* event_query(EventOf<B>* event, uint32_t* out_complete) noexcept {
  return backend::guarded(B::kName, "event_query", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, event, "event_query: event"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, out_complete, "event_query: out_complete"));
    bool complete = false;
    HWINFER_KIT_RETURN_IF_ERROR(B::is_complete(*event, &complete));
    *out_complete = complete ? 1u : 0u;
    return nullptr;
  });
}

template <typename B>
hwinfer_error* event_elapsed_ns(EventOf<B>* start, EventOf<B>* end,
                                uint64_t* out_elapsed_ns) noexcept {
  return backend::guarded(B::kName, "event_elapsed_ns", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, start, "event_elapsed_ns: start"));
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, end, "event_elapsed_ns: end"));
    HWINFER_KIT_RETURN_IF_ERROR(
        require(B::kName, out_elapsed_ns, "event_elapsed_ns: out_elapsed_ns"));
    if (start->device != end->device) {
      return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                                "%s event_elapsed_ns: the events belong to different devices",
                                B::kName);
    }
    return B::elapsed_ns(*start, *end, out_elapsed_ns);
  });
}

}  // namespace slots
}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_OBJECT_SLOTS_H_
