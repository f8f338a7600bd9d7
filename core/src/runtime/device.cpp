// device.cpp — the RAII handles over plugin devices, buffers, streams and events. Each call
// forwards to one ABI slot and turns its error into a Status; a slot the plugin does not provide
// is Unsupported and is never called. No policy lives here.
#include "hwinfer/device.h"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstring>

#include "hwinfer/hardware_spec.h"
#include "hwinfer/plugin_loader.h"
#include "hwinfer/plugin_support.h"
#include "hwinfer/text_escape.h"

namespace hwinfer {
namespace {

std::string FixedString(const char* text, size_t capacity) {
  return std::string(text, strnlen(text, capacity));
}

Status MissingSlot(const Device& device, const char* slot) {
  return Unsupported(device.id() + ": plugin '" + device.plugin().name() + "' does not provide " +
                     slot);
}

}  // namespace

// ---- DeviceInfo -----------------------------------------------------------------------------

bool DeviceInfo::has_uuid() const {
  for (uint8_t byte : uuid) {
    if (byte != 0) return true;
  }
  return false;
}

std::string DeviceInfo::uuid_string() const {
  if (!has_uuid()) return "";
  std::string out;
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", uuid[i]);
  }
  return out;
}

const char* DeviceInfo::device_type_name() const {
  switch (device_type) {
    case HWINFER_DEVICE_TYPE_CPU:
      return "cpu";
    case HWINFER_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete-gpu";
    case HWINFER_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated-gpu";
    case HWINFER_DEVICE_TYPE_VIRTUAL:
      return "virtual";
    default:
      return "other";
  }
}

DeviceInfo DeviceInfo::FromAbi(const hwinfer_device_info& info) {
  DeviceInfo out;
  out.device_type = info.device_type;
  // A plugin's strings are printed and written to results: control characters escaped here, at
  // the ABI boundary, once for every use.
  out.name = EscapeControlCharacters(FixedString(info.name, sizeof(info.name)));
  out.vendor = EscapeControlCharacters(FixedString(info.vendor, sizeof(info.vendor)));
  out.driver = EscapeControlCharacters(FixedString(info.driver, sizeof(info.driver)));
  std::memcpy(out.uuid.data(), info.uuid, sizeof(info.uuid));
  out.pci_address =
      EscapeControlCharacters(FixedString(info.pci_address, sizeof(info.pci_address)));
  out.memory_total_bytes = info.memory_total_bytes;
  out.memory_free_bytes = info.memory_free_bytes;
  out.max_allocation_bytes = info.max_allocation_bytes;
  out.alignment_bytes = info.alignment_bytes;
  out.compute_units = info.compute_units;
  // A peak that is not a finite positive number is unknown (0), never a NaN or inf MBU.
  const auto peak = [](double value) { return std::isfinite(value) && value > 0 ? value : 0.0; };
  out.spec_peak_bandwidth_bytes_per_s = peak(info.spec_peak_bandwidth_bytes_per_s);
  out.spec_peak_flops_f32 = peak(info.spec_peak_flops_f32);
  out.spec_peak_flops_f16 = peak(info.spec_peak_flops_f16);
  out.spec_peak_flops_bf16 = peak(info.spec_peak_flops_bf16);
  out.spec_peak_flops_int8 = peak(info.spec_peak_flops_int8);
  if (out.spec_peak_bandwidth_bytes_per_s > 0) out.spec_source = "plugin";
  return out;
}

void DeviceInfo::ApplyHardwareSpec(const HardwareSpec& spec) {
  spec_peak_bandwidth_bytes_per_s = spec.peak_bandwidth_bytes_per_s;
  spec_peak_flops_f32 = spec.peak_flops_f32;
  spec_peak_flops_f16 = spec.peak_flops_f16;
  spec_peak_flops_bf16 = spec.peak_flops_bf16;
  spec_peak_flops_int8 = spec.peak_flops_int8;
  spec_source = spec.file;
}

const char* KernelKindName(uint32_t kind) {
  const char* name = hwinfer_kernel_kind_name(kind);
  return name != nullptr ? name : "unknown";
}

// ---- Device ---------------------------------------------------------------------------------

Device::Device(std::shared_ptr<Plugin> plugin, uint32_t ordinal, hwinfer_device* handle,
               DeviceInfo info)
    : plugin_(std::move(plugin)), ordinal_(ordinal), handle_(handle), info_(std::move(info)) {}

Device::~Device() {
  if (handle_ != nullptr) plugin_->api().device_close(handle_);
}

std::string Device::id() const { return plugin_->name() + ":" + std::to_string(ordinal_); }

StatusOr<Buffer> Device::Allocate(uint64_t size_bytes, MemoryKind kind) {
  hwinfer_buffer* handle = nullptr;
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(
      plugin_->api().buffer_alloc(handle_, size_bytes, static_cast<uint32_t>(kind), &handle),
      id() + ": buffer_alloc(" + std::to_string(size_bytes) + " bytes)"));
  return Buffer(shared_from_this(), handle, size_bytes, kind);
}

StatusOr<Buffer> Device::ImportHost(void* host_ptr, uint64_t size_bytes) {
  if (plugin_->api().buffer_import_host == nullptr) {
    return MissingSlot(*this, "buffer_import_host");
  }
  hwinfer_buffer* handle = nullptr;
  HWINFER_RETURN_IF_ERROR(
      ConsumePluginError(plugin_->api().buffer_import_host(handle_, host_ptr, size_bytes, &handle),
                         id() + ": buffer_import_host"));
  return Buffer(shared_from_this(), handle, size_bytes, MemoryKind::kHostVisible);
}

StatusOr<Stream> Device::CreateStream() {
  hwinfer_stream* handle = nullptr;
  HWINFER_RETURN_IF_ERROR(
      ConsumePluginError(plugin_->api().stream_create(handle_, &handle), id() + ": stream_create"));
  return Stream(shared_from_this(), handle);
}

StatusOr<Event> Device::CreateEvent() {
  if (plugin_->api().event_create == nullptr) return MissingSlot(*this, "event_create");
  hwinfer_event* handle = nullptr;
  HWINFER_RETURN_IF_ERROR(
      ConsumePluginError(plugin_->api().event_create(handle_, &handle), id() + ": event_create"));
  return Event(shared_from_this(), handle);
}

namespace {

// hwinfer/kernel_kinds.def against plugin.h: kind values 1, 2, ... in the list's order, each
// slot right after the previous one, the last one ending the table, no kind newer than the header.
enum KernelKindIndex : uint32_t {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) kIndexOf##KIND,
#include "hwinfer/kernel_kinds.def"
  kKernelKindCount
};
constexpr size_t kFirstKernelSlot = offsetof(hwinfer_kernel_table, gemm);
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor)                                   \
  static_assert(HWINFER_KERNEL_##KIND == kIndexOf##KIND + 1u,                                    \
                "kernel_kinds.def: HWINFER_KERNEL_" #KIND " is not at its value's place");       \
  static_assert(                                                                                 \
      offsetof(hwinfer_kernel_table, slot) == kFirstKernelSlot + kIndexOf##KIND * sizeof(void*), \
      "kernel_kinds.def: the " #slot " slot is not at its place in the kernel table");           \
  static_assert((abi_minor) <= HWINFER_ABI_MINOR, "kernel_kinds.def: " #KIND " is too new");
#include "hwinfer/kernel_kinds.def"
static_assert(kFirstKernelSlot + kKernelKindCount * sizeof(void*) == sizeof(hwinfer_kernel_table),
              "hwinfer_kernel_table has a slot that kernel_kinds.def does not list");

// The kernel-table slot a descriptor kind dispatches to (as an untyped pointer), or NULL.
const void* KernelSlot(const hwinfer_kernel_table& table, uint32_t kind) {
  switch (kind) {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  case HWINFER_KERNEL_##KIND:                                  \
    return reinterpret_cast<const void*>(table.slot);
#include "hwinfer/kernel_kinds.def"
    default:
      return nullptr;
  }
}

}  // namespace

StatusOr<KernelSupport> Device::QueryKernel(const hwinfer_kernel_desc& desc) const {
  const char* kernel = KernelKindName(desc.kind);
  if (KernelSlot(plugin_->kernels(), desc.kind) == nullptr) {
    return KernelSupport{false,
                         "plugin '" + plugin_->name() + "' provides no " + kernel + " kernel"};
  }
  if (plugin_->api().kernel_query == nullptr) {
    return KernelSupport{false, "plugin '" + plugin_->name() +
                                    "' provides no kernel_query, so no kernel can be placed"};
  }
  hwinfer_kernel_support support;
  std::memset(&support, 0, sizeof(support));
  support.struct_size = sizeof(support);
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(plugin_->api().kernel_query(handle_, &desc, &support),
                                             id() + ": kernel_query(" + kernel + ")"));
  return KernelSupport{support.supported == HWINFER_KERNEL_SUPPORTED,
                       FixedString(support.reason, sizeof(support.reason))};
}

// ---- Buffer ---------------------------------------------------------------------------------

Buffer::Buffer(std::shared_ptr<Device> device, hwinfer_buffer* handle, uint64_t size_bytes,
               MemoryKind kind)
    : device_(std::move(device)), handle_(handle), size_bytes_(size_bytes), kind_(kind) {}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(std::move(other.device_)),
      handle_(std::exchange(other.handle_, nullptr)),
      size_bytes_(other.size_bytes_),
      kind_(other.kind_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = std::move(other.device_);
    handle_ = std::exchange(other.handle_, nullptr);
    size_bytes_ = other.size_bytes_;
    kind_ = other.kind_;
  }
  return *this;
}

Buffer::~Buffer() { Reset(); }

void Buffer::Reset() {
  if (handle_ != nullptr) device_->plugin().api().buffer_free(handle_);
  handle_ = nullptr;
  device_.reset();
}

StatusOr<void*> Buffer::Map() const {
  if (handle_ == nullptr) return FailedPrecondition("Map() of an empty Buffer");
  if (device_->plugin().api().buffer_map == nullptr) return MissingSlot(*device_, "buffer_map");
  void* pointer = nullptr;
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(device_->plugin().api().buffer_map(handle_, &pointer),
                                             device_->id() + ": buffer_map"));
  return pointer;
}

// ---- Stream ---------------------------------------------------------------------------------

Stream::Stream(std::shared_ptr<Device> device, hwinfer_stream* handle)
    : device_(std::move(device)), handle_(handle) {}

Stream::Stream(Stream&& other) noexcept
    : device_(std::move(other.device_)), handle_(std::exchange(other.handle_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = std::move(other.device_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Stream::~Stream() { Reset(); }

void Stream::Reset() {
  if (handle_ != nullptr) device_->plugin().api().stream_destroy(handle_);
  handle_ = nullptr;
  device_.reset();
}

Status Stream::CopyH2D(const void* src, const Buffer& dst, uint64_t dst_offset,
                       uint64_t size_bytes) {
  return ConsumePluginError(
      device_->plugin().api().copy_h2d(handle_, src, dst.handle(), dst_offset, size_bytes),
      device_->id() + ": copy_h2d");
}

Status Stream::CopyD2H(const Buffer& src, uint64_t src_offset, void* dst, uint64_t size_bytes) {
  return ConsumePluginError(
      device_->plugin().api().copy_d2h(handle_, src.handle(), src_offset, dst, size_bytes),
      device_->id() + ": copy_d2h");
}

Status Stream::CopyD2D(const Buffer& src, uint64_t src_offset, const Buffer& dst,
                       uint64_t dst_offset, uint64_t size_bytes) {
  return ConsumePluginError(device_->plugin().api().copy_d2d(handle_, src.handle(), src_offset,
                                                             dst.handle(), dst_offset, size_bytes),
                            device_->id() + ": copy_d2d");
}

Status Stream::Wait(const Event& event) {
  if (device_->plugin().api().stream_wait_event == nullptr) {
    return MissingSlot(*device_, "stream_wait_event");
  }
  return ConsumePluginError(device_->plugin().api().stream_wait_event(handle_, event.handle()),
                            device_->id() + ": stream_wait_event");
}

Status Stream::Synchronize() {
  return ConsumePluginError(device_->plugin().api().stream_synchronize(handle_),
                            device_->id() + ": stream_synchronize");
}

Status Stream::Launch(const hwinfer_kernel_desc& desc) {
  const hwinfer_kernel_table& table = device_->plugin().kernels();
  const char* kernel = KernelKindName(desc.kind);
  if (KernelSlot(table, desc.kind) == nullptr) {
    return Unsupported(device_->id() + ": plugin '" + device_->plugin().name() + "' provides no " +
                       kernel + " kernel");
  }
  hwinfer_error* error = nullptr;
  switch (desc.kind) {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor)               \
  case HWINFER_KERNEL_##KIND:                                                \
    error = table.slot(handle_, reinterpret_cast<const descriptor*>(&desc)); \
    break;
#include "hwinfer/kernel_kinds.def"
    default:
      return Unsupported(device_->id() + ": unknown kernel kind " + std::to_string(desc.kind));
  }
  return ConsumePluginError(error, device_->id() + ": " + kernel);
}

Status Stream::BeginCapture() {
  if (!device_->SupportsGraphs()) return MissingSlot(*device_, "stream_begin_capture");
  return ConsumePluginError(device_->plugin().api().stream_begin_capture(handle_),
                            device_->id() + ": stream_begin_capture");
}

StatusOr<Graph> Stream::EndCapture() {
  if (!device_->SupportsGraphs()) return MissingSlot(*device_, "stream_end_capture");
  hwinfer_graph* graph = nullptr;
  HWINFER_RETURN_IF_ERROR(
      ConsumePluginError(device_->plugin().api().stream_end_capture(handle_, &graph),
                         device_->id() + ": stream_end_capture"));
  if (graph == nullptr) {
    return Internal(device_->id() + ": stream_end_capture succeeded but returned no graph");
  }
  return Graph(device_, graph);
}

// ---- Graph ----------------------------------------------------------------------------------

bool Device::SupportsGraphs() const {
  const hwinfer_plugin_api& api = plugin_->api();
  return api.stream_begin_capture != nullptr && api.stream_end_capture != nullptr &&
         api.graph_launch != nullptr && api.graph_destroy != nullptr;
}

Graph::Graph(std::shared_ptr<Device> device, hwinfer_graph* handle)
    : device_(std::move(device)), handle_(handle) {}

Graph::Graph(Graph&& other) noexcept
    : device_(std::move(other.device_)), handle_(std::exchange(other.handle_, nullptr)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = std::move(other.device_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Graph::~Graph() { Reset(); }

void Graph::Reset() {
  if (handle_ != nullptr) device_->plugin().api().graph_destroy(handle_);
  handle_ = nullptr;
  device_.reset();
}

Status Graph::Launch(const Stream& stream) const {
  return ConsumePluginError(device_->plugin().api().graph_launch(handle_, stream.handle()),
                            device_->id() + ": graph_launch");
}

// ---- Event ----------------------------------------------------------------------------------

Event::Event(std::shared_ptr<Device> device, hwinfer_event* handle)
    : device_(std::move(device)), handle_(handle) {}

Event::Event(Event&& other) noexcept
    : device_(std::move(other.device_)), handle_(std::exchange(other.handle_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Reset();
    device_ = std::move(other.device_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Event::~Event() { Reset(); }

void Event::Reset() {
  if (handle_ != nullptr && device_->plugin().api().event_destroy != nullptr) {
    device_->plugin().api().event_destroy(handle_);
  }
  handle_ = nullptr;
  device_.reset();
}

Status Event::Record(const Stream& stream) {
  if (device_->plugin().api().event_record == nullptr) {
    return MissingSlot(*device_, "event_record");
  }
  return ConsumePluginError(device_->plugin().api().event_record(handle_, stream.handle()),
                            device_->id() + ": event_record");
}

Status Event::Synchronize() const {
  if (device_->plugin().api().event_synchronize == nullptr) {
    return MissingSlot(*device_, "event_synchronize");
  }
  return ConsumePluginError(device_->plugin().api().event_synchronize(handle_),
                            device_->id() + ": event_synchronize");
}

StatusOr<bool> Event::IsComplete() const {
  if (device_->plugin().api().event_query == nullptr) return MissingSlot(*device_, "event_query");
  uint32_t complete = 0;
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(
      device_->plugin().api().event_query(handle_, &complete), device_->id() + ": event_query"));
  return complete != 0;
}

StatusOr<uint64_t> Event::ElapsedNs(const Event& start, const Event& end) {
  const Device& device = *start.device_;
  if (device.plugin().api().event_elapsed_ns == nullptr) {
    return MissingSlot(device, "event_elapsed_ns");
  }
  uint64_t elapsed = 0;
  HWINFER_RETURN_IF_ERROR(ConsumePluginError(
      device.plugin().api().event_elapsed_ns(start.handle_, end.handle_, &elapsed),
      device.id() + ": event_elapsed_ns"));
  return elapsed;
}

const Device* RepeatedDevice(const std::vector<std::shared_ptr<Device>>& devices) {
  for (size_t i = 0; i < devices.size(); ++i) {
    for (size_t j = 0; j < i && devices[i] != nullptr; ++j) {
      if (devices[j] != nullptr && devices[j]->id() == devices[i]->id()) return devices[i].get();
    }
  }
  return nullptr;
}

}  // namespace hwinfer
