// kernel_cost.cpp — CountKernelCost, the core's name for the plugin kit's count (each kind's
// count_cost lives in its file, sdk/kit/kinds/<kind>.cpp), and the totals of a step.
#include "hwinfer/kernel_cost.h"

#include <cstdint>

#include "hwinfer/plugin.h"

namespace hwinfer {

KernelCost CountKernelCost(const hwinfer_kernel_desc& desc, const IntArrayReader& read_ints) {
  return kit::count_kernel_cost(desc, read_ints);
}

namespace {

// Index into CostTotals::flops_by_dtype: f32, f16, bf16, int8.
int DtypeSlot(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F16:
      return 1;
    case HWINFER_DTYPE_BF16:
      return 2;
    case HWINFER_DTYPE_I8:
      return 3;
    default:
      return 0;
  }
}

}  // namespace

void CostTotals::Add(const KernelCost& cost) {
  bytes += cost.bytes();
  flops += cost.flops;
  flops_by_dtype[DtypeSlot(cost.compute_dtype)] += cost.flops;
}

void CostTotals::Add(const CostTotals& other) {
  bytes += other.bytes;
  flops += other.flops;
  for (int i = 0; i < 4; ++i) flops_by_dtype[i] += other.flops_by_dtype[i];
}

uint32_t CostTotals::compute_dtype() const {
  constexpr uint32_t kDtypes[4] = {HWINFER_DTYPE_F32, HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16,
                                   HWINFER_DTYPE_I8};
  int best = 0;
  for (int i = 1; i < 4; ++i) {
    if (flops_by_dtype[i] > flops_by_dtype[best]) best = i;
  }
  return kDtypes[best];
}

}  // namespace hwinfer
