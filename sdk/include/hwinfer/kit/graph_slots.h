// graph_slots.h — the four graph slots of ABI 1.1 (stream_begin_capture, stream_end_capture,
// graph_launch, graph_destroy) for a backend that captures streams into graphs (plugin kit, issue
// 19). Present only when the backend struct has all four members:
//   static hwinfer_error* begin_capture(hwinfer_stream&);
//   static hwinfer_error* end_capture(hwinfer_stream&, hwinfer_graph** out);
//   static hwinfer_error* launch(hwinfer_graph&, hwinfer_stream&);
//   static void destroy_graph(hwinfer_graph*);    // frees the handle too
// Each slot is guarded and names NULL arguments as plugin.h does; what a capturing stream refuses
// and which failures spoil a capture stay the backend's (after_enqueue, kernel_slots.h).
#ifndef HWINFER_SDK_KIT_GRAPH_SLOTS_H_
#define HWINFER_SDK_KIT_GRAPH_SLOTS_H_

#include <type_traits>
#include <utility>

#include "hwinfer/kit/detect.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/plugin.h"

namespace hwinfer::kit {

// All four graph members (a backend with some only gets none of the slots).
HWINFER_KIT_DETECT(HasGraphs,
                   (B::begin_capture(std::declval<hwinfer_stream&>()),
                    B::end_capture(std::declval<hwinfer_stream&>(),
                                   std::declval<hwinfer_graph**>()),
                    B::launch(std::declval<hwinfer_graph&>(), std::declval<hwinfer_stream&>()),
                    B::destroy_graph(std::declval<hwinfer_graph*>())))

namespace slots {

template <typename B>
hwinfer_error* stream_begin_capture(StreamOf<B>* stream) noexcept {
  return backend::guarded(B::kName, "stream_begin_capture", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::require_non_null(B::kName, stream, "stream_begin_capture: stream"));
    return B::begin_capture(*stream);
  });
}

template <typename B>
hwinfer_error* stream_end_capture(StreamOf<B>* stream, GraphOf<B>** out) noexcept {
  return backend::guarded(B::kName, "stream_end_capture", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::require_non_null(B::kName, stream, "stream_end_capture: stream"));
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::require_non_null(B::kName, out, "stream_end_capture: out"));
    return B::end_capture(*stream, out);
  });
}

template <typename B>
hwinfer_error* graph_launch(GraphOf<B>* graph, StreamOf<B>* stream) noexcept {
  return backend::guarded(B::kName, "graph_launch", [&]() -> hwinfer_error* {
    HWINFER_KIT_RETURN_IF_ERROR(backend::require_non_null(B::kName, graph, "graph_launch: graph"));
    HWINFER_KIT_RETURN_IF_ERROR(
        backend::require_non_null(B::kName, stream, "graph_launch: stream"));
    return B::launch(*graph, *stream);
  });
}

template <typename B>
void graph_destroy(GraphOf<B>* graph) noexcept {
  if (graph == nullptr) return;
  try {
    B::destroy_graph(graph);
  } catch (...) {
    // Nothing may escape across the ABI.
  }
}

}  // namespace slots
}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_GRAPH_SLOTS_H_
