// hwinfer/kernel_cost.h — bytes moved and FLOPs done by one kernel, counted by the core from its
// plain C descriptor (DESIGN section 2: the core, not the plugin, counts), so MBU and MFU mean the
// same thing on every backend. The simulated backend prices kernels with the same counts.
//
// Bytes are the minimum traffic: every operand read once, every output written once, at its
// dtype's size (quantized types by block bytes). FLOPs count a multiply-add as 2.
//   gemm / matmul_quantized [M,K] x [K,N]: flops 2*M*N*K; bytes a + b + c (+ c read when beta != 0)
//   attention_prefill: flops 4 * head_dim * n_heads * sum over sequences of the causal
//     (query, key) pairs incl. any cached prefix; bytes q + k + v + out (+ the paged prefix read)
//   attention_decode_paged: flops 4 * head_dim * n_heads * sum(context_len);
//     bytes q + out + K and V rows read (context_len x n_kv_heads x head_dim x elem, + I8 scales)
//   kv_append: bytes k + v read + the same written into the pools
//   rope_kv_append: rope + kv_append, less the second read of k the fusion saves
//   rms_norm, rope, silu_mul, embedding: bytes in + out (+ weights), a few flops per element
//   bandwidth_probe: bytes as the descriptor's size says, no flops
// Attention needs the per-sequence context lengths (and prefill query starts) that live in device
// int32 arrays; |read_ints| supplies them (from the host copy the caller uploaded). When it cannot,
// the count uses the upper bound the shapes allow (every sequence at max_blocks * block_size) and
// sets |upper_bound|.
#pragma once

#include <cstdint>

#include "hwinfer/kit/kernel_cost.h"
#include "hwinfer/plugin.h"

namespace hwinfer {

// The plugin kit's (hwinfer/kit/kernel_cost.h): one count per kind, in the kind's own file.
using KernelCost = kit::KernelCost;
using IntArrayReader = kit::IntArrayReader;

// Counts one kernel. Unknown kinds count zero. Never fails: a malformed descriptor (which the
// plugin will reject) counts what its shapes say.
KernelCost CountKernelCost(const hwinfer_kernel_desc& desc, const IntArrayReader& read_ints);

// Sums costs (compute_dtype of the sum: the dtype with the most FLOPs).
struct CostTotals {
  double bytes = 0;
  double flops = 0;
  double flops_by_dtype[4] = {0, 0, 0, 0};  // f32, f16, bf16, int8
  void Add(const KernelCost& cost);
  void Add(const CostTotals& other);
  // The dtype with the most FLOPs (F32 when there are none).
  uint32_t compute_dtype() const;
};

}  // namespace hwinfer
