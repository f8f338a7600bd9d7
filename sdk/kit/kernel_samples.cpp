// kernel_samples.cpp — all_kernel_samples: every kind's samples (sdk/kit/kinds/<kind>.cpp) in
// hwinfer/kernel_kinds.def order.
#include "hwinfer/kit/kernel_samples.h"

namespace hwinfer::kit {

std::vector<KernelSample> all_kernel_samples() {
  std::vector<KernelSample> all;
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor)                  \
  for (KernelSample & one : samples(static_cast<const descriptor*>(nullptr))) { \
    all.push_back(std::move(one));                                              \
  }
#include "hwinfer/kernel_kinds.def"
  return all;
}

}  // namespace hwinfer::kit
