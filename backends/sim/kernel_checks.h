// kernel_checks.h — one check per kernel descriptor of the sim backend, shared by kernel_query
// (views may come without buffers: the core asks before it allocates) and the enqueue slots
// (buffers required), so the two never disagree.
//
// They accept what the CPU backend accepts (dtypes, shapes), so a placement that works on the CPU
// works on the simulator. Must not read buffer contents.
#ifndef HWINFER_BACKENDS_SIM_KERNEL_CHECKS_H_
#define HWINFER_BACKENDS_SIM_KERNEL_CHECKS_H_

#include "sim_internal.h"

namespace hwinfer::sim {

// NULL when well-formed; INVALID_ARGUMENT when malformed; UNSUPPORTED for unknown enum values.
hwinfer_error* check_gemm(const hwinfer_device* device, const hwinfer_gemm_desc& d, bool require);
hwinfer_error* check_matmul_quantized(const hwinfer_device* device,
                                      const hwinfer_matmul_quantized_desc& d, bool require);
hwinfer_error* check_attention_prefill(const hwinfer_device* device,
                                       const hwinfer_attention_prefill_desc& d, bool require);
hwinfer_error* check_attention_decode_paged(const hwinfer_device* device,
                                            const hwinfer_attention_decode_paged_desc& d,
                                            bool require);
hwinfer_error* check_kv_append(const hwinfer_device* device, const hwinfer_kv_append_desc& d,
                               bool require);
hwinfer_error* check_rms_norm(const hwinfer_device* device, const hwinfer_rms_norm_desc& d,
                              bool require);
hwinfer_error* check_rope(const hwinfer_device* device, const hwinfer_rope_desc& d, bool require);
hwinfer_error* check_silu_mul(const hwinfer_device* device, const hwinfer_silu_mul_desc& d,
                              bool require);
hwinfer_error* check_embedding(const hwinfer_device* device, const hwinfer_embedding_desc& d,
                               bool require);
hwinfer_error* check_bandwidth_probe(const hwinfer_device* device,
                                     const hwinfer_bandwidth_probe_desc& d, bool require);

}  // namespace hwinfer::sim

#endif  // HWINFER_BACKENDS_SIM_KERNEL_CHECKS_H_
