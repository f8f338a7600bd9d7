// token_ops.h — the CPU backend's per-token position and lookup kernels: RoPE (in place on q and
// the optional k) and the embedding lookup. Each enqueue slot validates its descriptor with the
// shared check of sdk/kit/kernel_checks.h (the one kernel_query answers with); kernels.cpp
// puts them in the kernel table.
//
//   rope:       q: [n_tokens, n_heads, head_dim], k (optional): [n_tokens, n_kv_heads, head_dim]
//               F32 | F16 (innermost contiguous, outer strides free);  positions: [n_tokens] I32.
//               NORMAL and NEOX pairing; rotary_dim even and <= head_dim (even).
//   embedding:  table: [vocab, dim] F32 | F16 | BF16 (innermost contiguous) | Q8_0 | Q4_0 (GGUF
//               blocks packed along dim, dim % 32 == 0, innermost stride 0);  ids: [n_tokens] I32;
//               out: [n_tokens, dim] F32 (innermost contiguous).  An id outside [0, vocab) is
//               INVALID_ARGUMENT from the stream's next sync, and nothing is written.
//
// Must not run kernels on the enqueueing thread, and must not accept outputs that overlap inputs
// (rope's q and k are in/out and must not overlap each other).
#ifndef HWINFER_BACKENDS_CPU_TOKEN_OPS_H_
#define HWINFER_BACKENDS_CPU_TOKEN_OPS_H_

#include <functional>

#include "cpu_internal.h"

namespace hwinfer::cpu {

hwinfer_error* enqueue_rope(hwinfer_stream* stream, const hwinfer_rope_desc* desc);

// The work of rope for a descriptor that passed backend::check_rope (buffers required): rotates q
// and k in place on |pool| when called. enqueue_rope and rope_kv_append (paged_kv_slots.cpp) run
// it, so the fused kernel's rotation is this one bit for bit.
std::function<void(ThreadPool&)> rope_work(const hwinfer_rope_desc& checked);

hwinfer_error* enqueue_embedding(hwinfer_stream* stream, const hwinfer_embedding_desc* desc);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_TOKEN_OPS_H_
