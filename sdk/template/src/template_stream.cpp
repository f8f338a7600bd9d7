// template_stream.cpp — the stream and its clock. The template's stream runs each copy and kernel
// at once, inside the enqueue call, which trivially keeps the ABI's promise that a stream runs in
// order; so an event is complete when it is recorded (kit::InlineEvents), stamped with now_ns.
//
// TEMPLATE: DRIVER: a real backend queues the work (cuMemcpyAsync, vkCmdCopyBuffer), records
// driver events (cuEventRecord, timestamp queries) and waits in synchronize. Errors found while
// work runs are returned by the next synchronize.
#include <chrono>
#include <cstring>

#include "template_backend.h"

namespace hwinfer_template {

hwinfer_error* TemplateBackend::synchronize(hwinfer_stream&) {
  return nullptr;  // everything already ran
}

hwinfer_error* TemplateBackend::submit_copy(hwinfer_stream&, uint8_t* dst, const uint8_t* src,
                                            size_t size) {
  std::memmove(dst, src, size);  // memmove: an imported host pointer may alias a buffer
  return nullptr;
}

// When a record runs: the work before it has run already.
double TemplateBackend::now_ns(const hwinfer_stream&) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

}  // namespace hwinfer_template
