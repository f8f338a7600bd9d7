// template_backend.h — the template backend: its handle structs and the backend struct the
// plugin kit (hwinfer/kit/plugin_api.h) turns into the C table of plugin.h.
//
// TEMPLATE: this folder is a skeleton to copy. Replace `template` with your backend's name
// everywhere (file names, identifiers, the CMake target, "Template device"), keeping the case of
// each occurrence, then fill in the places marked "DRIVER:" with calls into your driver. (The code
// avoids the C++ keyword that shares the skeleton's name, so a blind replace cannot break it.)
//
// What the kit does for you, in every slot: no exception crosses the ABI (bad_alloc becomes
// OUT_OF_MEMORY, anything else INTERNAL), NULL arguments are named, ordinals, open-once, option
// arrays, sizes, memory kinds, same-device handles, byte ranges and overlapping copies are
// checked, each kernel descriptor gets its kind's shared check (the one kernel_query answers
// with), live objects are counted and a device closed with some alive is reported. The functions
// below only run on valid arguments. The template's "device memory" is host memory
// (kit::HostMemory) and its stream runs everything at once on the calling thread; a real backend
// records work into a driver queue and returns.
#ifndef HWINFER_TEMPLATE_BACKEND_H_
#define HWINFER_TEMPLATE_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "hwinfer/kit/handles.h"
#include "hwinfer/kit/host_memory.h"
#include "hwinfer/kit/inline_events.h"
#include "hwinfer/plugin.h"

// plugin.h only declares the handle structs; their contents are ours. DRIVER: your context,
// device, queue and memory handles go in these.
struct hwinfer_plugin : hwinfer::kit::PluginBase {};
struct hwinfer_device : hwinfer::kit::DeviceBase {};
struct hwinfer_buffer : hwinfer::kit::HostBuffer {};  // DRIVER: kit::BufferBase + a device pointer
struct hwinfer_stream : hwinfer::kit::StreamBase {};
struct hwinfer_event : hwinfer::kit::InlineEvent {};  // DRIVER: kit::EventBase + a driver event

namespace hwinfer_template {

struct TemplateBackend : hwinfer::kit::HostMemory<TemplateBackend>,
                         hwinfer::kit::InlineEvents<TemplateBackend> {
  static constexpr const char* kName = "template";
  static constexpr const char* kVersion = "0.1.0";

  // template_plugin.cpp: the driver, the devices
  static hwinfer_error* init(const hwinfer_host_api& host, const hwinfer_option* options,
                             size_t n_options, std::unique_ptr<hwinfer_plugin>* out);
  static hwinfer_error* device_info(const hwinfer_plugin& plugin, uint32_t ordinal,
                                    hwinfer_device_info& info);
  static hwinfer_error* open_device(hwinfer_plugin& plugin, uint32_t ordinal,
                                    const hwinfer_option* options, size_t n_options,
                                    std::unique_ptr<hwinfer_device>* out);
  // How the kit's descriptor checks read buffers (here: host memory) and which block-quantized
  // weight dtypes kernels take.
  static hwinfer::backend::CheckContext check_context(const hwinfer_device& device,
                                                      bool require_buffers) {
    return hwinfer::kit::host_check_context(kName, device, require_buffers);
  }

  // template_stream.cpp: copies (HostMemory calls submit_copy); events are kit::InlineEvents
  // stamped with now_ns. DRIVER: record, wait, synchronize, is_complete and elapsed_ns of your own.
  static hwinfer_error* synchronize(hwinfer_stream& stream);
  using hwinfer::kit::InlineEvents<TemplateBackend>::synchronize;
  static hwinfer_error* submit_copy(hwinfer_stream& stream, uint8_t* dst, const uint8_t* src,
                                    size_t size);
  static double now_ns(const hwinfer_stream& stream);

  // template_kernels.cpp: one enqueue per kernel kind the backend runs; a kind without one is
  // reported unsupported and never called.
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_bandwidth_probe_desc& desc);
};

}  // namespace hwinfer_template

#endif  // HWINFER_TEMPLATE_BACKEND_H_
