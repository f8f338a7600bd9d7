// paged_kv_slots.h — the ABI side of the paged-KV kernels (kv_append, attention_decode_paged,
// attention_prefill): one check_* per kernel, shared by kernel_query (views without buffers) and
// the enqueue slot (buffers required), so the two never disagree. kernels.cpp puts the enqueue_*
// functions in the kernel table and routes kernel_query here.
//
// Must not run kernels on the enqueueing thread: enqueue_* validate, then queue the work on the
// stream's worker; errors found while running (a slot or block id out of range) come back from
// the next stream_synchronize.
#ifndef HWINFER_BACKENDS_CPU_PAGED_KV_SLOTS_H_
#define HWINFER_BACKENDS_CPU_PAGED_KV_SLOTS_H_

#include "cpu_internal.h"

namespace hwinfer::cpu {

// NULL when |d| is well-formed and runnable; INVALID_ARGUMENT when malformed; UNSUPPORTED with a
// reason when well-formed but not runnable here. Buffers are required only when |require_buffers|.
hwinfer_error* check_kv_append(const hwinfer_device* device, const hwinfer_kv_append_desc& d,
                               bool require_buffers);
hwinfer_error* enqueue_kv_append(hwinfer_stream* stream, const hwinfer_kv_append_desc* desc);

hwinfer_error* check_attention_decode_paged(const hwinfer_device* device,
                                            const hwinfer_attention_decode_paged_desc& d,
                                            bool require_buffers);
hwinfer_error* enqueue_attention_decode_paged(hwinfer_stream* stream,
                                              const hwinfer_attention_decode_paged_desc* desc);

// The cached prefix is present when k_cache.buffer != NULL; at query time (no buffers) when
// k_cache describes a view (rank != 0).
hwinfer_error* check_attention_prefill(const hwinfer_device* device,
                                       const hwinfer_attention_prefill_desc& d,
                                       bool require_buffers);
hwinfer_error* enqueue_attention_prefill(hwinfer_stream* stream,
                                         const hwinfer_attention_prefill_desc* desc);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_PAGED_KV_SLOTS_H_
