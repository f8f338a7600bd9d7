// kernel_query.h — the body of a backend's kernel_query slot: route a hwinfer_kernel_desc to its
// kind's check (kernel_checks.h) and turn the result into the hwinfer_kernel_support answer, so
// every backend answers "can you run this?" with exactly the checks its enqueue slots make.
//
// Must not allocate anything but the error it may return, and must not look at buffers beyond
// what the checks do (views at query time usually have none).
#ifndef HWINFER_SDK_KIT_KERNEL_QUERY_H_
#define HWINFER_SDK_KIT_KERNEL_QUERY_H_

#include "hwinfer/kit/check_context.h"
#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// Answers kernel_query for |desc| with |context| (require_buffers is normally false here; its
// device is the slot's |device| argument). INVALID_ARGUMENT when context.device, |desc| or |out| is
// NULL, or when the descriptor is malformed; otherwise an UNSUPPORTED check result becomes
// supported = 0 with the error's message as the reason, and a valid one supported = 1. A kind this
// file does not route is supported = 0 with "<kind> is not implemented in the <plugin> backend
// yet", or for a kind plugin.h does not name, "unknown kernel kind N (newer than this <plugin>
// plugin)". The slot wraps the call in guarded() (plugin_errors.h).
hwinfer_error* answer_kernel_query(const CheckContext& context, const hwinfer_kernel_desc* desc,
                                   hwinfer_kernel_support* out);

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_KERNEL_QUERY_H_
