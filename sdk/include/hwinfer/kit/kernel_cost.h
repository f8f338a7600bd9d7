// kernel_cost.h — the bytes moved and FLOPs done by one kernel, counted from its plain C descriptor
// (DESIGN section 2: the core counts, not the plugin, so MBU and MFU mean the same on every
// backend; the simulated backend prices kernels with the same counts). One count_cost overload per
// kernel kind, each in that kind's file (sdk/kit/kinds/<kind>.cpp) beside its check and samples, so
// a kind listed in hwinfer/kernel_kinds.def without a count does not link. The core's
// hwinfer/kernel_cost.h is the public face of these (CountKernelCost, CostTotals).
//
// Bytes are the minimum traffic: every operand read once, every output written once, at its
// dtype's size (quantized types by block bytes). FLOPs count a multiply-add as 2. Attention needs
// the per-sequence context lengths (and prefill query starts) that live in device int32 arrays;
// |read_ints| supplies them. When it cannot, the count uses the upper bound the shapes allow and
// sets |upper_bound|. A count never fails: a malformed descriptor counts what its shapes say.
#ifndef HWINFER_SDK_KIT_KERNEL_COST_H_
#define HWINFER_SDK_KIT_KERNEL_COST_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "hwinfer/plugin.h"

namespace hwinfer::kit {

struct KernelCost {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
  // The dtype the FLOPs run in, for picking the peak: HWINFER_DTYPE_F32, F16, BF16, or I8 for
  // integer dot products (Q8_0/Q4_0 matmul).
  uint32_t compute_dtype = HWINFER_DTYPE_F32;
  bool upper_bound = false;
  double bytes() const { return bytes_read + bytes_written; }
};

// Fills |out| with the int32 values of |view| (a rank-1 or rank-2 view, row-major); false when
// the values are not available to the caller.
using IntArrayReader =
    std::function<bool(const hwinfer_tensor_view& view, std::vector<int32_t>* out)>;

#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  KernelCost count_cost(const descriptor& d, const IntArrayReader& read_ints);
#include "hwinfer/kernel_kinds.def"

// Counts |desc| as its kind's descriptor. Unknown kinds, and descriptors too short for their kind,
// count zero.
KernelCost count_kernel_cost(const hwinfer_kernel_desc& desc, const IntArrayReader& read_ints);

}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_KERNEL_COST_H_
