// cpu_kernels.h — the kernels the CPU plugin runs, as the plugin kit wants them
// (sdk/include/hwinfer/kit/kernel_slots.h): one CpuKernels::enqueue overload per kind, defined in
// the file named beside it. The kit's slot has already checked NULLs and run the kind's shared
// check (sdk/include/hwinfer/kit/kernel_checks.h, the one kernel_query answers with) when an
// overload runs; CpuBackend (cpu_backend.h) inherits them, and the kit makes the kernel table from
// it.
//
// Must not run kernels on the enqueueing thread: each overload queues its work on the stream's
// worker; errors found while running (an embedding id, a KV slot or block id out of range) come
// back from the next stream_synchronize. Outputs must not overlap inputs, except rms_norm's
// residual (in/out) and rope's q and k (in place, not overlapping each other).
//
//   rms_norm:  x, out, residual: [n_tokens, dim] F32 | F16 (innermost contiguous);  weight: [dim]
//              F32.  residual (optional) is updated in place.
//   silu_mul:  gate, up, out: [n_tokens, dim] F32 | F16 (innermost contiguous)
//   rope:      q: [n_tokens, n_heads, head_dim], k (optional): [n_tokens, n_kv_heads, head_dim]
//              F32 | F16 (innermost contiguous, outer strides free);  positions: [n_tokens] I32.
//              NORMAL and NEOX pairing; rotary_dim even and <= head_dim (even).
//   embedding: table: [vocab, dim] F32 | F16 | BF16 (innermost contiguous) | a GGUF block type
//              (blocks packed along dim, innermost stride 0);  ids: [n_tokens] I32;  out:
//              [n_tokens, dim] F32 (innermost contiguous).
//   rope_kv_append: rope then kv_append of the rotated k, as one work item of the stream, bit for
//              bit the two kernels one after the other.
//   argmax:    x: [n_rows, n_cols] F32 | F16 (innermost contiguous);  ids: [n_rows] I32.
#ifndef HWINFER_BACKENDS_CPU_CPU_KERNELS_H_
#define HWINFER_BACKENDS_CPU_CPU_KERNELS_H_

#include "cpu_internal.h"

namespace hwinfer::cpu {

struct CpuKernels {
  // kernels.cpp
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_gemm_desc& d);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_matmul_quantized_desc& d);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_bandwidth_probe_desc& d);
  // rowwise_ops.cpp
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_rms_norm_desc& d);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_silu_mul_desc& d);
  // token_ops.cpp
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_rope_desc& d);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_embedding_desc& d);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_argmax_desc& d);
  // paged_kv_slots.cpp
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_kv_append_desc& d);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_rope_kv_append_desc& d);
  static hwinfer_error* enqueue(hwinfer_stream& stream,
                                const hwinfer_attention_decode_paged_desc& d);
  static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_attention_prefill_desc& d);
};

}  // namespace hwinfer::cpu

#endif  // HWINFER_BACKENDS_CPU_CPU_KERNELS_H_
