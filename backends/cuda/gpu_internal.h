// gpu_internal.h — the handle types (on the plugin kit's bases) and the backend struct of the GPU
// plugins (cuda, hip), written once over gpu_runtime.h's shim and compiled once per vendor.
//
// plugin.h only declares the opaque handle structs; this header defines them. Nothing here crosses
// the ABI or is exported: the kit makes the C table and the one visible symbol,
// hwinfer_plugin_query (plugin_entry.cpp), and guards every slot.
//
// Object model:
//   hwinfer_plugin  the devices the runtime reports (identity read once at plugin_init), or none
//                   with the reason (no driver, no device: never an error).
//   hwinfer_device  one runtime device ordinal; every call that touches it first makes it the
//                   calling thread's current device (GPU(SetDevice)).
//   hwinfer_buffer  one GPU(Malloc) allocation (DEVICE) or one mapped pinned host allocation
//                   (HOST_VISIBLE, device-reachable through its mapped pointer).
//   hwinfer_stream  one non-blocking runtime stream, its error word (device memory that kernels set
//                   when they find bad data, read back by stream_synchronize) and a scratch area
//                   the kernels of this stream share (in-order: one kernel at a time uses it);
//                   while capturing, the capture in progress (graph.cpp).
//   hwinfer_event   one runtime event with timing, and whether it was recorded.
//   hwinfer_graph   one captured runtime graph and its instantiation, the id of the stream it was
//                   captured on, and the scratch areas its kernels were given (graph.cpp).
//   hwinfer_comm    one rank's end of a vendor communicator (NCCL; vendor_comm.h), where the
//                   build has one (HWINFER_GPU_HAS_COMM).
#ifndef HWINFER_BACKENDS_CUDA_GPU_INTERNAL_H_
#define HWINFER_BACKENDS_CUDA_GPU_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu_runtime.h"
#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

#ifndef HWINFER_GPU_PLUGIN_VERSION
#define HWINFER_GPU_PLUGIN_VERSION "0.0.0-unknown"
#endif

// 1 where the plugin's build has a collective library (set by its CMakeLists.txt).
#ifndef HWINFER_GPU_HAS_COMM
#define HWINFER_GPU_HAS_COMM 0
#endif

#define GPU_RETURN_IF_ERROR(expr) HWINFER_KIT_RETURN_IF_ERROR(expr)

namespace hwinfer::gpu {

// An error from a runtime call: "<plugin> <what>: <call> failed: <runtime's error string>";
// OUT_OF_MEMORY for the runtime's allocation failure, INTERNAL otherwise.
hwinfer_error* runtime_error(gpuError_t result, const char* what, const char* call);
// runtime_error unless |result| is gpuSuccess.
inline hwinfer_error* check_runtime(gpuError_t result, const char* what, const char* call) {
  return result == gpuSuccess ? nullptr : runtime_error(result, what, call);
}
#define GPU_CHECK(what, call) \
  GPU_RETURN_IF_ERROR(::hwinfer::gpu::check_runtime((call), what, #call))

void log_message(const hwinfer_host_api* host, uint32_t level, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

struct VendorBlas;  // vendor_blas.cpp: the prefill gemm's run-time loaded BLAS
struct CommState;   // vendor_comm.cpp: a communicator, shared with the streams that ran it

}  // namespace hwinfer::gpu

struct hwinfer_plugin : hwinfer::kit::PluginBase {  // device_count = devices.size()
  std::string unavailable_reason;                   // why there are no devices ("" when there are)
  std::vector<hwinfer_device_info> devices;  // identity read at plugin_init; free memory per call
  std::shared_ptr<hwinfer::gpu::VendorBlas> blas;  // option gemm (vendor_blas.h); null: built-in
};

// ordinal: the runtime's device ordinal.
struct hwinfer_device : hwinfer::kit::DeviceBase {
  hwinfer_device_info info{};
};

struct hwinfer_buffer : hwinfer::kit::BufferBase {
  uint8_t* device_ptr = nullptr;  // what kernels and copies address
  uint8_t* host_ptr = nullptr;    // HOST_VISIBLE: the mapped host address; DEVICE: NULL
};

namespace hwinfer::gpu {
// A capture in progress on a stream (stream_begin_capture .. stream_end_capture, graph.cpp).
struct StreamCapture {
  StreamCapture() = default;
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;
  ~StreamCapture() {  // a capture that never became a graph (the caller made the device current)
    for (uint8_t* area : scratch) (void)GPU(Free)(area);
  }

  // Set by the first enqueue that failed while capturing (|spoiled_by|: its message): then
  // stream_end_capture returns FAILED_PRECONDITION and no graph.
  bool spoiled = false;
  std::string spoiled_by;
  // Scratch the captured kernels were given instead of the stream's (which a direct launch may
  // free and re-grow under the graph): handed to the graph, freed by graph_destroy. Only the last
  // area is reused (by a request that fits it): the graph's kernels run in stream order.
  std::vector<uint8_t*> scratch;
  uint64_t last_scratch_bytes = 0;
};
}  // namespace hwinfer::gpu

struct hwinfer_stream : hwinfer::kit::StreamBase {
  uint64_t id = 0;  // unique in the process (never reused): what a graph remembers of its stream
  gpuStream_t stream = nullptr;
  int32_t* error_word = nullptr;       // device memory; 0 = no error (device_errors.h codes)
  int32_t* error_word_host = nullptr;  // pinned; the copy stream_synchronize reads
  uint8_t* scratch = nullptr;          // device memory shared by this stream's direct launches
  uint64_t scratch_bytes = 0;
  std::unique_ptr<hwinfer::gpu::StreamCapture> capture;  // non-null while capturing
  // The communicators whose all-reduces were enqueued here since the last stream_synchronize,
  // which reports an abort of one of them (vendor_comm.h).
  std::vector<std::shared_ptr<hwinfer::gpu::CommState>> all_reduced_by;
};

struct hwinfer_event : hwinfer::kit::EventBase {
  gpuEvent_t event = nullptr;
  bool recorded = false;
};

struct hwinfer_graph {
  hwinfer_device* device = nullptr;
  uint64_t stream_id = 0;  // the stream it was captured on (hwinfer_stream::id)
  gpuGraph_t graph = nullptr;
  gpuGraphExec_t exec = nullptr;
  std::vector<uint8_t*> scratch;  // device memory its kernels use (StreamCapture::scratch)
};

struct hwinfer_comm : hwinfer::kit::CommBase {
  std::shared_ptr<hwinfer::gpu::CommState> state;
};

namespace hwinfer::gpu {

// Makes |device| the calling thread's current device (every slot that touches it calls this)
// and clears the thread's last runtime error, so the slot's launch checks see their own only.
hwinfer_error* use_device(const hwinfer_device* device, const char* what);
// use_device for the destroy paths, which cannot report: true when |device| is current; a failure
// is dropped (nothing can be freed without the device; the handle still goes).
bool use_device_quietly(const hwinfer_device* device, const char* what);

// The stream's scratch area, at least |bytes| long, for kernels enqueued on |stream| (stream order
// makes one area enough). Growing it waits for the stream's queued work first. While the stream
// is capturing, an area owned by the graph being captured instead (capture_scratch). stream.cpp.
hwinfer_error* stream_scratch(hwinfer_stream* stream, uint64_t bytes, uint8_t** out);

// graph.cpp
// FAILED_PRECONDITION naming |what| when |stream| is capturing (what plugin.h refuses during a
// capture: host copies, events, synchronize); the capture goes on.
hwinfer_error* refuse_while_capturing(const hwinfer_stream* stream, const char* what);
// Returns |error| after spoiling |stream|'s capture with it when the stream is capturing (an
// enqueue failed: plugin.h). |stream| may be NULL.
hwinfer_error* spoil_capture_on_error(hwinfer_stream* stream, hwinfer_error* error);
// Scratch for a kernel being captured: at least |bytes| of device memory the graph owns.
hwinfer_error* capture_scratch(hwinfer_stream* stream, uint64_t bytes, uint8_t** out);
// Ends the vendor capture of a stream being destroyed and frees what it recorded.
void abandon_capture(hwinfer_stream* stream);

// device.cpp
// Reads every device's identity into plugin->devices, or sets plugin->unavailable_reason.
void enumerate_devices(hwinfer_plugin* plugin);

// kernels.cpp: the shared checks' context for |device|, with GpuBackend::limits as the hook
// (kit::limits_hook).
backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers);

// The GPU plugin for the plugin kit (hwinfer/kit/plugin_api.h says what each member is for): the
// kit checks every argument, counts live objects and guards every slot; these run on valid handles
// and make the device current themselves (use_device). Each is defined in the file named.
struct GpuBackend {
  static constexpr const char* kName = kPluginName;
  static constexpr const char* kVersion = HWINFER_GPU_PLUGIN_VERSION;

  // plugin_entry.cpp: the runtime, option gemm
  static hwinfer_error* init(const hwinfer_host_api& host, const hwinfer_option* options,
                             size_t n_options, std::unique_ptr<hwinfer_plugin>* out);
  // device.cpp
  static hwinfer_error* device_info(const hwinfer_plugin& plugin, uint32_t ordinal,
                                    hwinfer_device_info& info);
  static hwinfer_error* open_device(hwinfer_plugin& plugin, uint32_t ordinal,
                                    const hwinfer_option* options, size_t n_options,
                                    std::unique_ptr<hwinfer_device>* out);
  // memory.cpp
  static hwinfer_error* allocate(hwinfer_device& device, hwinfer_buffer& buffer);
  static void release(hwinfer_buffer& buffer);
  static hwinfer_error* map(hwinfer_buffer& buffer, void** out_host_ptr);
  static backend::CheckContext check_context(const hwinfer_device& device, bool require_buffers) {
    return gpu::check_context(&device, require_buffers);
  }
  // stream.cpp
  static hwinfer_error* init_stream(hwinfer_device& device, hwinfer_stream& stream);
  static void destroy_stream(hwinfer_stream& stream);
  static hwinfer_error* synchronize(hwinfer_stream& stream);
  static hwinfer_error* copy_h2d(hwinfer_stream& stream, const void* src, hwinfer_buffer& dst,
                                 uint64_t dst_offset, uint64_t size_bytes);
  static hwinfer_error* copy_d2h(hwinfer_stream& stream, hwinfer_buffer& src, uint64_t src_offset,
                                 void* dst, uint64_t size_bytes);
  static hwinfer_error* copy_d2d(hwinfer_stream& stream, hwinfer_buffer& src, uint64_t src_offset,
                                 hwinfer_buffer& dst, uint64_t dst_offset, uint64_t size_bytes);
  // event.cpp
  static hwinfer_error* init_event(hwinfer_device& device, hwinfer_event& event);
  static void destroy_event(hwinfer_event& event);
  static hwinfer_error* record(hwinfer_event& event, hwinfer_stream& stream);
  static hwinfer_error* wait(hwinfer_stream& stream, hwinfer_event& event);
  static hwinfer_error* synchronize(hwinfer_event& event);
  static hwinfer_error* is_complete(hwinfer_event& event, bool* complete);
  static hwinfer_error* elapsed_ns(hwinfer_event& start, hwinfer_event& end, uint64_t* out);
  // graph.cpp: captures, and a failed kernel or copy_d2d spoils the capture of its stream
  static hwinfer_error* begin_capture(hwinfer_stream& stream);
  static hwinfer_error* end_capture(hwinfer_stream& stream, hwinfer_graph** out);
  static hwinfer_error* launch(hwinfer_graph& graph, hwinfer_stream& stream);
  static void destroy_graph(hwinfer_graph* graph);
  static hwinfer_error* after_enqueue(hwinfer_stream* stream, hwinfer_error* error) noexcept;
#if HWINFER_GPU_HAS_COMM
  // vendor_comm.cpp: device collectives through the vendor's library (NCCL)
  static hwinfer_error* create_comm_id(hwinfer_plugin& plugin, hwinfer_comm_id* out);
  static hwinfer_error* init_comm(hwinfer_device& device, const hwinfer_comm_id& id,
                                  uint32_t nranks, uint32_t rank, uint64_t timeout_ns,
                                  hwinfer_comm** out);
  static hwinfer_error* all_reduce_sum_f32(hwinfer_comm& comm, hwinfer_stream& stream,
                                           hwinfer_buffer& buffer, uint64_t offset, uint64_t count);
  static hwinfer_error* comm_error(hwinfer_comm& comm);
  static void abort_comm(hwinfer_comm& comm);
  static void destroy_comm(hwinfer_comm* comm);
#endif
  // kernels*.cpp: what this backend cannot run of what the shared checks accept (kernel_limits.h)
  static hwinfer_error* limits(const backend::CheckContext& context, const hwinfer_gemm_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_matmul_quantized_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_attention_prefill_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_attention_decode_paged_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_kv_append_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_rms_norm_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context, const hwinfer_rope_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_silu_mul_desc& d);
  static hwinfer_error* limits(const backend::CheckContext& context,
                               const hwinfer_embedding_desc& d);
  // kernels_*.cpp: every kind
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_gemm_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_matmul_quantized_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_attention_prefill_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream,
                                const hwinfer_attention_decode_paged_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_kv_append_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_rms_norm_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_rope_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_silu_mul_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_embedding_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_bandwidth_probe_desc& desc);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_rope_kv_append_desc& desc);
};

}  // namespace hwinfer::gpu

#endif  // HWINFER_BACKENDS_CUDA_GPU_INTERNAL_H_
