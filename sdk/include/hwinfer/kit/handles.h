// handles.h — the bases a kit plugin builds its handle structs on (plugin kit, issue 19). plugin.h
// only declares hwinfer_plugin, hwinfer_device, ... as opaque structs; a kit plugin defines each as
// a struct deriving from the base here, adding what its backend needs:
//   struct hwinfer_plugin : hwinfer::kit::PluginBase { MyOptions options; };
//   struct hwinfer_device : hwinfer::kit::DeviceBase { MyQueue queue; };
//   struct hwinfer_buffer : hwinfer::kit::HostBuffer {};   // or BufferBase for device memory
//   struct hwinfer_stream : hwinfer::kit::StreamBase { ... };
//   struct hwinfer_event : hwinfer::kit::EventBase { ... };
// The kit's slots (plugin_api.h) fill and read these fields; the backend reads them too. They are
// plugin-private: nothing here crosses the ABI.
#ifndef HWINFER_SDK_KIT_HANDLES_H_
#define HWINFER_SDK_KIT_HANDLES_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "hwinfer/plugin.h"

namespace hwinfer::kit {

// One plugin_init .. plugin_destroy. The backend's init sets device_count; the kit sets host and
// keeps |open| (device_open refuses a device that is open, plugin_destroy warns about one left).
struct PluginBase {
  const hwinfer_host_api* host = nullptr;  // valid until plugin_destroy returns
  uint32_t device_count = 0;               // ordinals 0 .. device_count - 1
  std::mutex open_mutex;                   // guards |open|
  std::vector<bool> open;                  // [device_count]: opened and not closed
};

// One opened device. The kit sets plugin and ordinal after the backend's open_device and counts
// the objects created on it, so device_close can warn about the ones the host forgot (and leave
// the device open until the last of them is destroyed).
struct DeviceBase {
  hwinfer_plugin* plugin = nullptr;
  uint32_t ordinal = 0;
  uint64_t max_allocation_bytes = 0;  // buffer_alloc refuses more; 0: no limit checked
  std::atomic<int64_t> live_buffers{0};
  std::atomic<int64_t> live_streams{0};
  std::atomic<int64_t> live_events{0};
  // Set by a device_close that found live objects: the last of them to go closes the device.
  std::atomic<bool> close_pending{false};
};

// One allocation or import: the kit sets all three fields before the backend's allocate runs.
struct BufferBase {
  hwinfer_device* device = nullptr;
  uint64_t size_bytes = 0;
  uint32_t memory_kind = HWINFER_MEMORY_DEVICE;
};

// A buffer in host memory (host_memory.h): |data| [size_bytes], or NULL for a buffer without
// backing (the sim's virtual buffers); the host owns imported memory (owns_data false).
struct HostBuffer : BufferBase {
  uint8_t* data = nullptr;
  bool owns_data = true;
};

// A stream or an event: the device it was created on (the kit compares them).
struct StreamBase {
  hwinfer_device* device = nullptr;
};
struct EventBase {
  hwinfer_device* device = nullptr;
};
// One rank's end of a communicator (ABI 1.4, comm_slots.h): the device it joined on, set by the
// kit after the backend's init_comm.
struct CommBase {
  hwinfer_device* device = nullptr;
  uint32_t nranks = 0, rank = 0;
};

// The plugin's handle types, named through its backend struct B: inside the kit's templates the
// structs are then dependent types, looked at when a plugin instantiates them (where they are
// complete), not where the kit is compiled.
template <typename B>
struct Handles {
  using Plugin = hwinfer_plugin;
  using Device = hwinfer_device;
  using Buffer = hwinfer_buffer;
  using Stream = hwinfer_stream;
  using Event = hwinfer_event;
  using Graph = hwinfer_graph;
  using Comm = hwinfer_comm;
};
template <typename B>
using PluginOf = typename Handles<B>::Plugin;
template <typename B>
using DeviceOf = typename Handles<B>::Device;
template <typename B>
using BufferOf = typename Handles<B>::Buffer;
template <typename B>
using StreamOf = typename Handles<B>::Stream;
template <typename B>
using EventOf = typename Handles<B>::Event;
template <typename B>
using GraphOf = typename Handles<B>::Graph;
template <typename B>
using CommOf = typename Handles<B>::Comm;

}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_HANDLES_H_
