// plugin_api.h — a plugin's whole C API table made from one backend struct (plugin kit, issue 19),
// and its exported hwinfer_plugin_query: HWINFER_KIT_PLUGIN(MyBackend) in one source file is the
// plugin's entire entry point. object_slots.h writes the device, memory, stream and event slots,
// kernel_slots.h the kernel table; both check every argument before the backend sees it.
//
// The backend struct (static members only; handle structs on the bases of handles.h):
//   static constexpr const char* kName, kVersion;       // "cpu", "1.2.0"
//   static hwinfer_error* init(const hwinfer_host_api&, const hwinfer_option*, size_t,
//                              std::unique_ptr<hwinfer_plugin>* out);     // sets device_count
//   static hwinfer_error* device_info(const hwinfer_plugin&, uint32_t ordinal,
//                                     hwinfer_device_info& info);         // zeroed, sized
//   static hwinfer_error* open_device(hwinfer_plugin&, uint32_t ordinal, const hwinfer_option*,
//                                     size_t, std::unique_ptr<hwinfer_device>* out);
//   static hwinfer_error* allocate(hwinfer_device&, hwinfer_buffer&);   // size and kind set
//   static hwinfer_error* map(hwinfer_buffer&, void** out_host_ptr);
//   static hwinfer_error* synchronize(hwinfer_stream&);  synchronize(hwinfer_event&);
//   static hwinfer_error* copy_h2d(hwinfer_stream&, const void* src, hwinfer_buffer& dst,
//                                  uint64_t dst_offset, uint64_t size);   // and d2h, d2d
//   static hwinfer_error* record(hwinfer_event&, hwinfer_stream&);
//   static hwinfer_error* wait(hwinfer_stream&, hwinfer_event&);
//   static hwinfer_error* is_complete(hwinfer_event&, bool* complete);
//   static hwinfer_error* elapsed_ns(hwinfer_event& start, hwinfer_event& end, uint64_t* out);
//   static backend::CheckContext check_context(const hwinfer_device&, bool require_buffers);
//   static hwinfer_error* enqueue(hwinfer_stream&, const hwinfer_gemm_desc&);  // per kernel kind
// Optional: release(hwinfer_buffer&), import_host(hwinfer_device&, hwinfer_buffer&, void*) (the
// slot stays NULL without it), init_stream(hwinfer_device&, hwinfer_stream&),
// destroy_stream(hwinfer_stream&) (finish its work; before the struct is deleted),
// init_event(hwinfer_device&, hwinfer_event&), destroy_event(hwinfer_event&),
// close_device(hwinfer_device&), kDeviceCountOption (the plugin option an out-of-range ordinal's
// message names), after_enqueue(hwinfer_stream*, hwinfer_error*) (kernel_slots.h), the four graph
// members (graph_slots.h), the six device-collective members (comm_slots.h). host_memory.h
// provides the memory half for host-memory devices.
// The copies and events get valid, same-device handles, in-range offsets and size > 0.
#ifndef HWINFER_SDK_KIT_PLUGIN_API_H_
#define HWINFER_SDK_KIT_PLUGIN_API_H_

#include <type_traits>

#include "hwinfer/kit/comm_slots.h"
#include "hwinfer/kit/graph_slots.h"
#include "hwinfer/kit/kernel_query.h"
#include "hwinfer/kit/kernel_slots.h"
#include "hwinfer/kit/object_slots.h"
#include "hwinfer/kit/plugin_query.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::kit {

// True when |Backend| has an enqueue for the kernel kind |kind|.
template <typename Backend>
bool runs_kind(uint32_t kind) {
  switch (kind) {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  case HWINFER_KERNEL_##KIND:                                  \
    return HasEnqueue<Backend, descriptor>::value;
#include "hwinfer/kernel_kinds.def"
    default:
      return false;
  }
}

namespace slots {

// kernel_query: the kind's shared check without buffers; a valid descriptor of a kind the backend
// has no enqueue for is supported = 0, "<kind> is not implemented in the <name> backend".
template <typename B>
hwinfer_error* kernel_query(DeviceOf<B>* device, const hwinfer_kernel_desc* desc,
                            hwinfer_kernel_support* out) noexcept {
  return backend::guarded(B::kName, "kernel_query", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(require(B::kName, device, "kernel_query: device"));
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::answer_kernel_query(B::check_context(*device, false), desc, out));
    if (out->supported == HWINFER_KERNEL_SUPPORTED && !runs_kind<B>(desc->kind)) {
      const char* kind = hwinfer_kernel_kind_name(desc->kind);  // a listed kind has a name
      hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED,
                          "%s is not implemented in the %s backend", kind ? kind : "?", B::kName);
    }
    return nullptr;
  });
}

}  // namespace slots

// The API table of |B| around |kernels| (graph slots when B captures: graph_slots.h; collective
// slots when B has them: comm_slots.h).
template <typename B>
hwinfer_plugin_api make_plugin_api(const hwinfer_kernel_table* kernels) {
  hwinfer_plugin_api api{};
  api.struct_size = sizeof(hwinfer_plugin_api);
  api.abi_major = HWINFER_ABI_MAJOR;
  api.abi_minor = HWINFER_ABI_MINOR;
  api.name = B::kName;
  api.version = B::kVersion;
  api.plugin_init = &slots::plugin_init<B>;
  api.plugin_destroy = &slots::plugin_destroy<B>;
  api.device_count = &slots::device_count<B>;
  api.device_get_info = &slots::device_get_info<B>;
  api.device_open = &slots::device_open<B>;
  api.device_close = &slots::device_close<B>;
  api.buffer_alloc = &slots::buffer_alloc<B>;
  api.buffer_free = &slots::buffer_free<B>;
  api.buffer_map = &slots::buffer_map<B>;
  if constexpr (HasImportHost<B>::value) api.buffer_import_host = &slots::buffer_import_host<B>;
  api.stream_create = &slots::stream_create<B>;
  api.stream_destroy = &slots::stream_destroy<B>;
  api.stream_synchronize = &slots::stream_synchronize<B>;
  api.copy_h2d = &slots::copy_h2d<B>;
  api.copy_d2h = &slots::copy_d2h<B>;
  api.copy_d2d = &slots::copy_d2d<B>;
  api.event_create = &slots::event_create<B>;
  api.event_destroy = &slots::event_destroy<B>;
  api.event_record = &slots::event_record<B>;
  api.stream_wait_event = &slots::stream_wait_event<B>;
  api.event_synchronize = &slots::event_synchronize<B>;
  api.event_query = &slots::event_query<B>;
  api.event_elapsed_ns = &slots::event_elapsed_ns<B>;
  api.kernel_query = &slots::kernel_query<B>;
  api.kernels = kernels;
  if constexpr (HasGraphs<B>::value) {
    api.stream_begin_capture = &slots::stream_begin_capture<B>;
    api.stream_end_capture = &slots::stream_end_capture<B>;
    api.graph_launch = &slots::graph_launch<B>;
    api.graph_destroy = &slots::graph_destroy<B>;
  }
  if constexpr (HasComms<B>::value) {
    api.comm_create_id = &slots::comm_create_id<B>;
    api.comm_init = &slots::comm_init<B>;
    api.comm_all_reduce_sum_f32 = &slots::comm_all_reduce_sum_f32<B>;
    api.comm_get_error = &slots::comm_get_error<B>;
    api.comm_abort = &slots::comm_abort<B>;
    api.comm_destroy = &slots::comm_destroy<B>;
  }
  return api;
}

// The body of |B|'s hwinfer_plugin_query: the argument checks, then its tables (made once).
template <typename B>
hwinfer_error* plugin_query(uint32_t abi_major, const hwinfer_plugin_api** out_api) noexcept {
  HWINFER_KIT_RETURN_IF_ERROR(backend::check_plugin_query(B::kName, abi_major, out_api));
  static const hwinfer_kernel_table kernels = make_kernel_table<B>();
  static const hwinfer_plugin_api api = make_plugin_api<B>(&kernels);
  *out_api = &api;
  return nullptr;
}

}  // namespace hwinfer::kit

// The plugin's one exported symbol, for the backend struct |Backend|.
#define HWINFER_KIT_PLUGIN(Backend)                                                       \
  extern "C" HWINFER_PLUGIN_EXPORT hwinfer_error* hwinfer_plugin_query(                   \
      uint32_t abi_major, uint32_t host_max_minor, const hwinfer_host_api* host,          \
      const hwinfer_plugin_api** out_api) {                                               \
    (void)host_max_minor; /* minor 0 is the oldest there is */                            \
    (void)host;           /* plugin_init receives it again */                             \
    return ::hwinfer::kit::plugin_query<Backend>(abi_major, out_api);                     \
  }                                                                                       \
  static_assert(std::is_same_v<decltype(&hwinfer_plugin_query), hwinfer_plugin_query_fn>, \
                "hwinfer_plugin_query must match plugin.h's hwinfer_plugin_query_fn")

#endif  // HWINFER_SDK_KIT_PLUGIN_API_H_
