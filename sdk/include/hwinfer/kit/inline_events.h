// inline_events.h — the events of a backend whose streams run each copy and kernel when it is
// enqueued (the simulator, the template): an event is complete once recorded, and its time is the
// stream's clock at the record. A backend struct derives from InlineEvents<Backend> (its events
// from kit::InlineEvent) and adds
//   static double now_ns(const hwinfer_stream&);             // a steady clock or a virtual one
// and, optionally, static void wait_until(hwinfer_stream&, double time_ns) for a stream that
// waits on an event later than its own clock (the simulator moves its virtual clock there).
#ifndef HWINFER_SDK_KIT_INLINE_EVENTS_H_
#define HWINFER_SDK_KIT_INLINE_EVENTS_H_

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "hwinfer/kit/detect.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::kit {

// An event of an inline stream: recorded or not, and when.
struct InlineEvent : EventBase {
  bool recorded = false;
  double time_ns = 0;
};

HWINFER_KIT_DETECT(HasWaitUntil,
                   B::wait_until(std::declval<hwinfer_stream&>(), std::declval<double>()))

template <typename Backend>
struct InlineEvents {
  static hwinfer_error* record(EventOf<Backend>& event, StreamOf<Backend>& stream) {
    event.recorded = true;
    event.time_ns = Backend::now_ns(stream);
    return nullptr;
  }

  // What the event marks has run; a stream behind it catches up (wait_until), if it can be.
  static hwinfer_error* wait(StreamOf<Backend>& stream, EventOf<Backend>& event) {
    if constexpr (HasWaitUntil<Backend>::value) {
      if (event.recorded) Backend::wait_until(stream, event.time_ns);
    }
    return nullptr;
  }

  static hwinfer_error* synchronize(EventOf<Backend>&) { return nullptr; }

  // Complete, recorded or not (a never-recorded event is complete: plugin.h).
  static hwinfer_error* is_complete(EventOf<Backend>&, bool* complete) {
    *complete = true;
    return nullptr;
  }

  static hwinfer_error* elapsed_ns(EventOf<Backend>& start, EventOf<Backend>& end, uint64_t* out) {
    if (!start.recorded || !end.recorded) {
      return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                "%s event_elapsed_ns: the %s event was never recorded",
                                Backend::kName, start.recorded ? "end" : "start");
    }
    if (end.time_ns < start.time_ns) {
      return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                                "%s event_elapsed_ns: the end event (%.0f ns) was recorded before "
                                "the start event (%.0f ns)",
                                Backend::kName, end.time_ns, start.time_ns);
    }
    *out = static_cast<uint64_t>(std::llround(end.time_ns - start.time_ns));
    return nullptr;
  }
};

}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_INLINE_EVENTS_H_
