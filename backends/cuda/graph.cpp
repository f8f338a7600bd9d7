// graph.cpp — stream capture into graphs for the GPU plugins (plugin.h ABI 1.1, "graphs"): the four
// graph members of GpuBackend (the kit's graph slots call them) over the vendor runtime's capture
// (CUDA graphs, HIP graphs; the emulator's closures), the refusals a capturing stream gives, the
// spoiling of a capture by a failed enqueue, and the scratch a captured kernel is given.
//
// A capture is a StreamCapture on the stream (gpu_internal.h) plus the runtime's own capture mode:
//   - kernels and copy_d2d are recorded by the runtime; one that fails at enqueue, its checks
//     included, spoils the capture (the kit passes every result to after_enqueue;
//     stream_end_capture: FAILED_PRECONDITION, no graph);
//   - host copies, events, synchronize and a second begin are refused here before the runtime sees
//     them (refuse_while_capturing), so the runtime's capture stays valid;
//   - scratch (stream_scratch) comes from memory the graph owns: the stream's own area is freed
//     and re-grown by a later, larger direct launch, which a replay would then read freed memory
//     through; and growing it synchronizes the stream, which a capture cannot;
//   - the error word is the stream's: replays (only on that stream) report at its next
//     stream_synchronize as direct launches do.
// A graph remembers its stream by id (never reused), not by pointer, so it outlives the stream.
#include <memory>
#include <utility>

#include "gpu_internal.h"

namespace hwinfer::gpu {

namespace {

// Frees the runtime objects and the scratch of |graph| (the device is current).
void release_graph(hwinfer_graph* graph) {
  if (graph->exec != nullptr) (void)GPU(GraphExecDestroy)(graph->exec);
  if (graph->graph != nullptr) (void)GPU(GraphDestroy)(graph->graph);
  for (uint8_t* area : graph->scratch) (void)GPU(Free)(area);
  graph->exec = nullptr;
  graph->graph = nullptr;
  graph->scratch.clear();
}

struct GraphDeleter {
  void operator()(hwinfer_graph* graph) const {
    release_graph(graph);
    delete graph;
  }
};
using OwnedGraph = std::unique_ptr<hwinfer_graph, GraphDeleter>;

}  // namespace

hwinfer_error* refuse_while_capturing(const hwinfer_stream* stream, const char* what) {
  if (stream->capture == nullptr) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                            "%s %s: the stream is capturing (stream_begin_capture); a capture "
                            "records only kernels and copy_d2d: call stream_end_capture first "
                            "(the capture goes on)",
                            kPluginName, what);
}

hwinfer_error* GpuBackend::after_enqueue(hwinfer_stream* stream, hwinfer_error* error) noexcept {
  return spoil_capture_on_error(stream, error);
}

hwinfer_error* spoil_capture_on_error(hwinfer_stream* stream, hwinfer_error* error) {
  if (error == nullptr || stream == nullptr || stream->capture == nullptr) return error;
  StreamCapture& capture = *stream->capture;
  if (capture.spoiled) return error;
  capture.spoiled = true;
  try {
    capture.spoiled_by = error->message != nullptr ? error->message : "(no message)";
  } catch (...) {
    // The capture is spoiled either way; only the reason is lost.
  }
  return error;
}

hwinfer_error* capture_scratch(hwinfer_stream* stream, uint64_t bytes, uint8_t** out) {
  StreamCapture& capture = *stream->capture;
  if (capture.scratch.empty() || bytes > capture.last_scratch_bytes) {
    const uint64_t size = bytes < 256 ? 256 : bytes;
    capture.scratch.reserve(capture.scratch.size() + 1);  // push_back below cannot throw
    void* pointer = nullptr;
    GPU_CHECK("stream scratch (capturing)", GPU(Malloc)(&pointer, size));
    capture.scratch.push_back(static_cast<uint8_t*>(pointer));
    capture.last_scratch_bytes = size;
  }
  *out = capture.scratch.back();
  return nullptr;
}

void abandon_capture(hwinfer_stream* stream) {
  gpuGraph_t partial = nullptr;
  (void)GPU(StreamEndCapture)(stream->stream, &partial);
  if (partial != nullptr) (void)GPU(GraphDestroy)(partial);
  stream->capture.reset();  // frees its scratch
}

hwinfer_error* GpuBackend::begin_capture(hwinfer_stream& stream) {
  if (stream.capture != nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s stream_begin_capture: the stream is already capturing; call "
                              "stream_end_capture first (the capture goes on)",
                              kPluginName);
  }
  GPU_RETURN_IF_ERROR(use_device(stream.device, "stream_begin_capture"));
  auto capture = std::make_unique<StreamCapture>();
  // Relaxed, not ThreadLocal (or Global): a captured kernel's scratch is allocated with
  // GPU(Malloc) while capturing (capture_scratch), which the stricter modes forbid on the
  // capturing thread, and the host may end the capture on another thread than it began it on,
  // which only a Relaxed capture allows. What a capture must not see (synchronize, events, host
  // copies) this plugin refuses itself; the streams are non-blocking, so the legacy stream's
  // implicit synchronisation the stricter modes guard against does not reach them.
  GPU_CHECK("stream_begin_capture", GPU(StreamBeginCapture)(stream.stream, kCaptureModeRelaxed));
  stream.capture = std::move(capture);
  return nullptr;
}

hwinfer_error* GpuBackend::end_capture(hwinfer_stream& stream, hwinfer_graph** out) {
  if (stream.capture == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s stream_end_capture: the stream is not capturing (no "
                              "stream_begin_capture since the last end)",
                              kPluginName);
  }
  GPU_RETURN_IF_ERROR(use_device(stream.device, "stream_end_capture"));
  // From here the stream is back to normal, whatever the outcome.
  const std::unique_ptr<StreamCapture> capture = std::move(stream.capture);
  OwnedGraph graph(new hwinfer_graph);
  graph->device = stream.device;
  graph->stream_id = stream.id;
  const gpuError_t ended = GPU(StreamEndCapture)(stream.stream, &graph->graph);
  graph->scratch.swap(capture->scratch);  // the graph frees them now
  if (capture->spoiled) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s stream_end_capture: the capture is spoiled: an enqueue "
                              "failed while capturing (%s); no graph, the stream is back to "
                              "normal",
                              kPluginName, capture->spoiled_by.c_str());
  }
  if (ended != gpuSuccess) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s stream_end_capture: the %s ended the capture with '%s' (an "
                              "enqueue failed while capturing); no graph, the stream is back "
                              "to normal",
                              kPluginName, HWINFER_GPU_VENDOR_RUNTIME, GPU(GetErrorString)(ended));
  }
  if (graph->graph == nullptr) {
    return hwinfer_make_error(HWINFER_STATUS_INTERNAL,
                              "%s stream_end_capture: the %s returned no graph", kPluginName,
                              HWINFER_GPU_VENDOR_RUNTIME);
  }
  GPU_CHECK("stream_end_capture", graph_instantiate(&graph->exec, graph->graph));
  *out = graph.release();
  return nullptr;
}

hwinfer_error* GpuBackend::launch(hwinfer_graph& graph, hwinfer_stream& stream) {
  if (graph.stream_id != stream.id) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "%s graph_launch: the graph was captured on another stream; a "
                              "graph replays only on the stream it was captured from (its "
                              "scratch and error word are that stream's)",
                              kPluginName);
  }
  GPU_RETURN_IF_ERROR(refuse_while_capturing(&stream, "graph_launch"));
  GPU_RETURN_IF_ERROR(use_device(stream.device, "graph_launch"));
  GPU_CHECK("graph_launch", GPU(GraphLaunch)(graph.exec, stream.stream));
  return nullptr;
}

void GpuBackend::destroy_graph(hwinfer_graph* graph) {
  if (!use_device_quietly(graph->device, "graph_destroy")) {  // the handle still goes
    graph->exec = nullptr;
    graph->graph = nullptr;
    graph->scratch.clear();
  }
  GraphDeleter()(graph);
}

}  // namespace hwinfer::gpu
