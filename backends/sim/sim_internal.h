// sim_internal.h — the simulated backend's handle types and its backend struct for the plugin kit
// (see README.md for the model: roofline cost, virtual clock, virtual buffers, fingerprints).
//
// plugin.h only declares the opaque handle structs; this header defines them on the kit's bases.
// Nothing here crosses the ABI or is exported: the kit makes the C table and the one visible
// symbol, hwinfer_plugin_query (plugin_entry.cpp), and guards every slot.
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
#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/kit/inline_events.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

#ifndef HWINFER_SIM_PLUGIN_VERSION
#define HWINFER_SIM_PLUGIN_VERSION "0.0.0-unknown"
#endif

// One initialised plugin instance: the hardware each device pretends to be, and per-ordinal
// state.
struct hwinfer_plugin : hwinfer::kit::PluginBase {
  std::vector<hwinfer::HardwareSpec> specs;  // [device_count] from the `hardware` file(s)
  std::vector<uint64_t> memory_total_bytes;  // [device_count] memory_gib of its file, or 80 GiB
  uint64_t backed_limit_bytes = 0;           // buffers up to this size get host memory
  mutable std::mutex mutex;                  // guards |allocated|
  std::vector<uint64_t> allocated;           // [device_count] bytes of live buffers (info's free)
  const hwinfer::HardwareSpec& spec(uint32_t ordinal) const { return specs[ordinal]; }
};

// One opened simulated device.
struct hwinfer_device : hwinfer::kit::DeviceBase {
  std::mutex mutex;     // guards clock_ns
  double clock_ns = 0;  // device-wide virtual clock: max over its streams' cursors
  // Device option fail_after_kernels: every kernel after this many fails as a lost device would
  // (0 = never), for testing what a runtime does when a device fails mid-run.
  uint64_t fail_after_kernels = 0;
  std::atomic<uint64_t> kernels_enqueued{0};
};

// One allocation. |data| is zero-initialised host memory [size_bytes] for a backed buffer, NULL
// for a VIRTUAL one (bigger than backed_limit_bytes: only its size exists).
struct hwinfer_buffer : hwinfer::kit::HostBuffer {
  // Byte offsets of the 1e30 "one-hot" logits gemm/matmul_quantized wrote (fingerprint.h), so a
  // later write of the same row can clear them.
  std::mutex one_hot_mutex;
  std::set<uint64_t> one_hot_offsets;
  bool backed() const { return data != nullptr; }
};

// An in-order queue with a virtual time cursor (ns since the device opened).
struct hwinfer_stream : hwinfer::kit::StreamBase {
  double now_ns = 0;
  hwinfer_error* pending_error = nullptr;  // first error found "while running"; sync returns it
  hwinfer_stream() = default;
  hwinfer_stream(const hwinfer_stream&) = delete;
  hwinfer_stream& operator=(const hwinfer_stream&) = delete;
  ~hwinfer_stream() {
    if (pending_error != nullptr) pending_error->destroy(pending_error);
  }
};

// A point on a stream's virtual timeline (kit::InlineEvents: work is synchronous, so a recorded
// event is complete; its time is the stream's virtual cursor).
struct hwinfer_event : hwinfer::kit::InlineEvent {};

namespace hwinfer::sim {

inline constexpr const char* kPluginName = "sim";

// Advances |stream|'s cursor by |duration_ns| and the device clock to at least the new cursor.
void advance_clock(hwinfer_stream* stream, double duration_ns);

// The sim plugin for the plugin kit (sdk/include/hwinfer/kit/plugin_api.h says what each member is
// for): the kit checks every argument, then these run on valid handles. Each is defined in the file
// named.
struct SimBackend : kit::InlineEvents<SimBackend> {
  static constexpr const char* kName = kPluginName;
  static constexpr const char* kVersion = HWINFER_SIM_PLUGIN_VERSION;
  static constexpr const char* kDeviceCountOption = "devices";

  // plugin_entry.cpp: options and the hardware file
  static hwinfer_error* init(const hwinfer_host_api& host, const hwinfer_option* options,
                             size_t n_options, std::unique_ptr<hwinfer_plugin>* out);
  // device.cpp
  static hwinfer_error* device_info(const hwinfer_plugin& plugin, uint32_t ordinal,
                                    hwinfer_device_info& info);
  static hwinfer_error* open_device(hwinfer_plugin& plugin, uint32_t ordinal,
                                    const hwinfer_option* options, size_t n_options,
                                    std::unique_ptr<hwinfer_device>* out);
  // memory.cpp: backed and virtual buffers, the descriptor checks' view of them
  static hwinfer_error* allocate(hwinfer_device& device, hwinfer_buffer& buffer);
  static void release(hwinfer_buffer& buffer);
  static hwinfer_error* map(hwinfer_buffer& buffer, void** out_host_ptr);
  static backend::CheckContext check_context(const hwinfer_device& device, bool require_buffers);
  // stream.cpp: the virtual clock and the copies
  static hwinfer_error* init_stream(hwinfer_device& device, hwinfer_stream& stream);
  static hwinfer_error* synchronize(hwinfer_stream& stream);
  static hwinfer_error* copy_h2d(hwinfer_stream& stream, const void* src, hwinfer_buffer& dst,
                                 uint64_t dst_offset, uint64_t size_bytes);
  static hwinfer_error* copy_d2h(hwinfer_stream& stream, hwinfer_buffer& src, uint64_t src_offset,
                                 void* dst, uint64_t size_bytes);
  static hwinfer_error* copy_d2d(hwinfer_stream& stream, hwinfer_buffer& src, uint64_t src_offset,
                                 hwinfer_buffer& dst, uint64_t dst_offset, uint64_t size_bytes);
  // events (kit::InlineEvents) on the virtual clock: an event's time is the stream's cursor; a
  // stream that waits on a later event moves its cursor up to it
  using kit::InlineEvents<SimBackend>::synchronize;
  static double now_ns(const hwinfer_stream& stream) { return stream.now_ns; }
  static void wait_until(hwinfer_stream& stream, double time_ns) {
    if (time_ns > stream.now_ns) advance_clock(&stream, time_ns - stream.now_ns);
  }
  // kernels.cpp: every kind of hwinfer/kernel_kinds.def (instantiated there)
  template <typename Desc>
  static hwinfer_error* enqueue(hwinfer_stream& stream, const Desc& desc);
};

// The modelled duration of moving |bytes| at the spec bandwidth, plus the launch overhead.
double transfer_ns(const hwinfer_device& device, double bytes);

}  // namespace hwinfer::sim

#endif  // HWINFER_BACKENDS_SIM_SIM_INTERNAL_H_
