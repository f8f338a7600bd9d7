// kernel_cost.cpp — count_kernel_cost: a descriptor counted as its kind's, by that kind's
// count_cost (sdk/kit/kinds/<kind>.cpp), routed through hwinfer/kernel_kinds.def.
#include "hwinfer/kit/kernel_cost.h"

namespace hwinfer::kit {

namespace {

// |desc| counted as its kind's descriptor |Desc|; zero when |desc| is too short to be one.
template <typename Desc>
KernelCost count_as(const hwinfer_kernel_desc& desc, const IntArrayReader& read_ints) {
  if (desc.struct_size < sizeof(Desc)) return KernelCost{};
  return count_cost(reinterpret_cast<const Desc&>(desc), read_ints);
}

}  // namespace

KernelCost count_kernel_cost(const hwinfer_kernel_desc& desc, const IntArrayReader& read_ints) {
  switch (desc.kind) {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  case HWINFER_KERNEL_##KIND:                                  \
    return count_as<descriptor>(desc, read_ints);
#include "hwinfer/kernel_kinds.def"
    default:
      return KernelCost{};
  }
}

}  // namespace hwinfer::kit
