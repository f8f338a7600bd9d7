// event.cpp — events of the CPU device: generation counters plus a steady_clock timestamp taken by
// the stream's worker when it reaches the record (see hwinfer_event in cpu_internal.h).
//
// event_query never waits for work (it only takes the event's lock); event_synchronize and waits
// queued by stream_wait_event block until the generation they saw at call time completes, so a
// later re-record cannot make them wait longer. Must not touch a stream after event_record returns.
#include <chrono>
#include <cinttypes>
#include <utility>

#include "cpu_backend.h"

namespace hwinfer::cpu {

namespace {

uint64_t steady_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Run by the stream worker when it reaches a record of |generation|.
void complete_event(hwinfer_event* event, uint64_t generation) {
  const uint64_t now_ns = steady_now_ns();
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    // Records on two streams may complete out of order; the newest generation wins.
    if (generation > event->completed_generation) {
      event->completed_generation = generation;
      event->timestamp_ns = now_ns;
    }
  }
  event->completed.notify_all();
}

// Blocks until |event| has completed |generation|.
void wait_for_generation(hwinfer_event* event, uint64_t generation) {
  std::unique_lock<std::mutex> lock(event->mutex);
  event->completed.wait(lock, [&] { return event->completed_generation >= generation; });
}

// The timestamp of a completed, recorded event, or FAILED_PRECONDITION naming |which|.
hwinfer_error* completed_timestamp(hwinfer_event* event, const char* which, uint64_t* out_ns) {
  std::lock_guard<std::mutex> lock(event->mutex);
  if (event->recorded_generation == 0) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "cpu event_elapsed_ns: the %s event was never recorded", which);
  }
  if (event->completed_generation < event->recorded_generation) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "cpu event_elapsed_ns: the %s event has not completed yet", which);
  }
  *out_ns = event->timestamp_ns;
  return nullptr;
}

}  // namespace

hwinfer_error* CpuBackend::record(hwinfer_event& event, hwinfer_stream& stream) {
  // Hold the event's lock across the enqueue so the generation is published only if the record
  // was queued; the worker takes this lock only after the queue's, never while holding it.
  std::lock_guard<std::mutex> lock(event.mutex);
  const uint64_t generation = event.recorded_generation + 1;
  StreamWorker::Task task = [event = &event, generation]() -> hwinfer_error* {
    complete_event(event, generation);
    return nullptr;
  };
  if (hwinfer_error* error = stream.worker.enqueue(std::move(task))) return error;
  event.recorded_generation = generation;
  return nullptr;
}

hwinfer_error* CpuBackend::wait(hwinfer_stream& stream, hwinfer_event& event) {
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(event.mutex);
    // Never recorded, or already reached: nothing to wait for.
    if (event.completed_generation >= event.recorded_generation) return nullptr;
    generation = event.recorded_generation;
  }
  return stream.worker.enqueue([event = &event, generation]() -> hwinfer_error* {
    wait_for_generation(event, generation);
    return nullptr;
  });
}

hwinfer_error* CpuBackend::synchronize(hwinfer_event& event) {
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(event.mutex);
    generation = event.recorded_generation;
  }
  wait_for_generation(&event, generation);
  return nullptr;
}

hwinfer_error* CpuBackend::is_complete(hwinfer_event& event, bool* complete) {
  std::lock_guard<std::mutex> lock(event.mutex);
  *complete = event.completed_generation >= event.recorded_generation;
  return nullptr;
}

hwinfer_error* CpuBackend::elapsed_ns(hwinfer_event& start, hwinfer_event& end, uint64_t* out) {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  if (hwinfer_error* error = completed_timestamp(&start, "start", &start_ns)) return error;
  if (hwinfer_error* error = completed_timestamp(&end, "end", &end_ns)) return error;
  if (end_ns < start_ns) {
    return hwinfer_make_error(HWINFER_STATUS_FAILED_PRECONDITION,
                              "cpu event_elapsed_ns: the end event completed %" PRIu64
                              " ns before the start event",
                              start_ns - end_ns);
  }
  *out = end_ns - start_ns;
  return nullptr;
}

}  // namespace hwinfer::cpu
