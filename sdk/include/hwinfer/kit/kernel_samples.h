// kernel_samples.h — representative descriptors of every kernel kind (one per variant worth asking
// about: kind x dtype, mode), small shapes, no buffers: what `hwinfer plugin check` asks a device
// with kernel_query, and what the cost tests count. One samples overload per kind, in that kind's
// file (sdk/kit/kinds/<kind>.cpp), so a kind listed in hwinfer/kernel_kinds.def without samples
// does not link. Capability questions only: nothing here is ever launched.
#ifndef HWINFER_SDK_KIT_KERNEL_SAMPLES_H_
#define HWINFER_SDK_KIT_KERNEL_SAMPLES_H_

#include <memory>
#include <string>
#include <vector>

#include "hwinfer/plugin.h"

namespace hwinfer::kit {

struct KernelSample {
  std::string name;                           // "gemm f16", "attention_decode_paged i8-kv"
  std::shared_ptr<hwinfer_kernel_desc> desc;  // points at the full descriptor struct
};

// The samples of one kind; the pointer only selects the overload (pass a null one).
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  std::vector<KernelSample> samples(const descriptor* kind);
#include "hwinfer/kernel_kinds.def"

// Every kind's samples, in kernel_kinds.def order.
std::vector<KernelSample> all_kernel_samples();

}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_KERNEL_SAMPLES_H_
