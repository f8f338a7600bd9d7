// hwinfer/device.h — C++ RAII handles over the plugin ABI: Device, Buffer, Stream, Event.
//
// Each handle owns exactly one plugin object and releases it in its destructor; each keeps what
// it depends on alive (Buffer/Stream/Event -> Device -> Plugin), so tearing down in any order is
// safe. Handles are move-only. Calls return Status; nothing here throws or aborts. These classes
// add no policy: no caching, no fallback to another device.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/plugin.h"
#include "hwinfer/status.h"

namespace hwinfer {

class Plugin;
class Stream;
class Event;
class Graph;
struct HardwareSpec;

enum class MemoryKind : uint32_t {
  kDevice = HWINFER_MEMORY_DEVICE,
  kHostVisible = HWINFER_MEMORY_HOST_VISIBLE,
};

// hwinfer_device_info in C++ form. Zero means unknown for every number.
struct DeviceInfo {
  uint32_t device_type = HWINFER_DEVICE_TYPE_OTHER;
  std::string name;
  std::string vendor;
  std::string driver;
  std::array<uint8_t, 16> uuid{};
  std::string pci_address;
  uint64_t memory_total_bytes = 0;
  uint64_t memory_free_bytes = 0;
  uint64_t max_allocation_bytes = 0;
  uint64_t alignment_bytes = 0;
  uint32_t compute_units = 0;
  double spec_peak_bandwidth_bytes_per_s = 0;
  double spec_peak_flops_f32 = 0;
  double spec_peak_flops_f16 = 0;
  double spec_peak_flops_bf16 = 0;
  double spec_peak_flops_int8 = 0;
  std::string spec_source;  // "plugin", a hardware file path, or "" when no spec is known

  bool has_uuid() const;
  // "8-4-4-4-12" lowercase hex; "" when there is no UUID.
  std::string uuid_string() const;
  // "cpu", "discrete-gpu", ...
  const char* device_type_name() const;

  static DeviceInfo FromAbi(const hwinfer_device_info& info);
  // Replaces the spec peaks with those the user declared in a hardware file.
  void ApplyHardwareSpec(const HardwareSpec& spec);
};

struct KernelSupport {
  bool supported = false;
  std::string reason;  // why not (may be empty when supported)
};

// Any kernel descriptor (hwinfer_gemm_desc, ...) as the common prefix the ABI passes around.
template <typename KernelDesc>
const hwinfer_kernel_desc& AsKernelDesc(const KernelDesc& desc) {
  return reinterpret_cast<const hwinfer_kernel_desc&>(desc);
}

// A name for a kernel kind ("gemm", "attention_decode_paged", ...; "unknown" otherwise).
const char* KernelKindName(uint32_t kind);

class Device : public std::enable_shared_from_this<Device> {
 public:
  // Use Plugin::OpenDevice.
  Device(std::shared_ptr<Plugin> plugin, uint32_t ordinal, hwinfer_device* handle, DeviceInfo info);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();  // device_close

  const DeviceInfo& info() const { return info_; }
  DeviceInfo& mutable_info() { return info_; }
  uint32_t ordinal() const { return ordinal_; }
  const Plugin& plugin() const { return *plugin_; }
  // "cpu:0"
  std::string id() const;
  hwinfer_device* handle() const { return handle_; }

  StatusOr<class Buffer> Allocate(uint64_t size_bytes, MemoryKind kind = MemoryKind::kDevice);
  // Wraps host memory without copying (Unsupported where the device cannot).
  StatusOr<class Buffer> ImportHost(void* host_ptr, uint64_t size_bytes);
  StatusOr<Stream> CreateStream();
  StatusOr<Event> CreateEvent();

  // SUPPORTED/UNSUPPORTED for |desc|. A NULL kernel slot answers unsupported without asking the
  // plugin; a plugin without kernel_query answers unsupported too.
  StatusOr<KernelSupport> QueryKernel(const hwinfer_kernel_desc& desc) const;
  // True when the plugin fills all four graph slots (ABI 1.1: stream capture and replay).
  bool SupportsGraphs() const;

 private:
  std::shared_ptr<Plugin> plugin_;
  uint32_t ordinal_;
  hwinfer_device* handle_;
  DeviceInfo info_;
};

class Buffer {
 public:
  Buffer() = default;
  Buffer(std::shared_ptr<Device> device, hwinfer_buffer* handle, uint64_t size_bytes,
         MemoryKind kind);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  ~Buffer();  // buffer_free

  hwinfer_buffer* handle() const { return handle_; }
  uint64_t size_bytes() const { return size_bytes_; }
  MemoryKind kind() const { return kind_; }
  Device& device() const { return *device_; }
  // Host pointer to the whole buffer (FailedPrecondition where the device cannot map it).
  StatusOr<void*> Map() const;

 private:
  void Reset();
  std::shared_ptr<Device> device_;
  hwinfer_buffer* handle_ = nullptr;
  uint64_t size_bytes_ = 0;
  MemoryKind kind_ = MemoryKind::kDevice;
};

class Stream {
 public:
  Stream() = default;
  Stream(std::shared_ptr<Device> device, hwinfer_stream* handle);
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  ~Stream();  // waits for queued work, then stream_destroy

  hwinfer_stream* handle() const { return handle_; }
  Device& device() const { return *device_; }

  // Asynchronous copies; host memory must stay valid until the stream has passed them.
  Status CopyH2D(const void* src, const Buffer& dst, uint64_t dst_offset, uint64_t size_bytes);
  Status CopyD2H(const Buffer& src, uint64_t src_offset, void* dst, uint64_t size_bytes);
  Status CopyD2D(const Buffer& src, uint64_t src_offset, const Buffer& dst, uint64_t dst_offset,
                 uint64_t size_bytes);
  // Later work on this stream waits for |event|.
  Status Wait(const Event& event);
  // Blocks until everything queued has finished; returns the first error any of it hit.
  Status Synchronize();
  // Enqueues the kernel |desc| describes (dispatching on desc.kind to its slot). A NULL slot is
  // Unsupported and the plugin is not called.
  Status Launch(const hwinfer_kernel_desc& desc);

  // Graph capture (plugin.h, "graphs"): between BeginCapture and EndCapture kernels and D2D copies
  // are recorded, not run. Unsupported where the device has no graphs (Device::SupportsGraphs).
  Status BeginCapture();
  StatusOr<Graph> EndCapture();

 private:
  void Reset();
  std::shared_ptr<Device> device_;
  hwinfer_stream* handle_ = nullptr;
};

class Event {
 public:
  Event() = default;
  Event(std::shared_ptr<Device> device, hwinfer_event* handle);
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  ~Event();

  hwinfer_event* handle() const { return handle_; }
  Status Record(const Stream& stream);
  Status Synchronize() const;
  StatusOr<bool> IsComplete() const;
  // Device time from |start| to |end| (both recorded and complete), in nanoseconds.
  static StatusOr<uint64_t> ElapsedNs(const Event& start, const Event& end);

 private:
  void Reset();
  std::shared_ptr<Device> device_;
  hwinfer_event* handle_ = nullptr;
};

// Work recorded from a stream, replayed with one call. Keeps its device alive; the buffers it
// uses must outlive it (plugin.h).
class Graph {
 public:
  Graph() = default;
  Graph(std::shared_ptr<Device> device, hwinfer_graph* handle);
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  ~Graph();  // graph_destroy; the replays queued must have finished

  hwinfer_graph* handle() const { return handle_; }
  // Enqueues one replay of the recorded work on |stream|.
  Status Launch(const Stream& stream) const;

 private:
  void Reset();
  std::shared_ptr<Device> device_;
  hwinfer_graph* handle_ = nullptr;
};

// Among devices meant to be used together (replicas, a layer split): the first whose id an
// earlier entry already has ("cpu:0" twice), or nullptr when none repeats. Null entries are
// skipped (callers refuse them first).
const Device* RepeatedDevice(const std::vector<std::shared_ptr<Device>>& devices);

}  // namespace hwinfer
