// paged_kv_slots.h — the enqueue slots of the paged-KV kernels (kv_append, rope_kv_append,
// attention_decode_paged, attention_prefill). Each validates its descriptor with the shared check
// of sdk/kit/kernel_checks.h (the one kernel_query answers with); kernels.cpp puts them in
// the kernel table.
//
// Must not run kernels on the enqueueing thread: enqueue_* validate, then queue the work on the
// stream's worker; errors found while running (a slot or block id out of range) come back from
// the next stream_synchronize.
#ifndef HWINFER_BACKENDS_CPU_PAGED_KV_SLOTS_H_
#define HWINFER_BACKENDS_CPU_PAGED_KV_SLOTS_H_

#include "cpu_internal.h"

namespace hwinfer::cpu {

hwinfer_error* enqueue_kv_append(hwinfer_stream* stream, const hwinfer_kv_append_desc* desc);

// RoPE fused with the KV append (ABI 1.1): rope then kv_append of the rotated k, as one work item
// of the stream, bit for bit the two kernels one after the other.
hwinfer_error* enqueue_rope_kv_append(hwinfer_stream* stream,
                                      const hwinfer_rope_kv_append_desc* desc);

hwinfer_error* enqueue_attention_decode_paged(hwinfer_stream* stream,
                                              const hwinfer_attention_decode_paged_desc* desc);

hwinfer_error* enqueue_attention_prefill(hwinfer_stream* stream,
                                         const hwinfer_attention_prefill_desc* desc);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_PAGED_KV_SLOTS_H_
