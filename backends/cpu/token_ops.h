// token_ops.h — the rotation of the CPU backend's RoPE as a piece of work, shared by the rope and
// rope_kv_append kernels (cpu_kernels.h has their shapes).
#ifndef HWINFER_BACKENDS_CPU_TOKEN_OPS_H_
#define HWINFER_BACKENDS_CPU_TOKEN_OPS_H_

#include <functional>

#include "cpu_internal.h"

namespace hwinfer::cpu {

// The work of rope for a descriptor that passed backend::check_rope (buffers required): rotates q
// and k in place on |pool| when called. The rope and rope_kv_append kernels run
// it, so the fused kernel's rotation is this one bit for bit.
std::function<void(ThreadPool&)> rope_work(const hwinfer_rope_desc& checked);

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_TOKEN_OPS_H_
