// kernel_limits.h — a backend's own limits (what the shared checks accept but its kernels do not
// run: a dtype, a layout) as overloads of one static function, made into the CheckContext hook
// (check_context.h) with one switch written here from hwinfer/kernel_kinds.def (plugin kit,
// issue 19):
//   static hwinfer_error* limits(const backend::CheckContext& context, const hwinfer_gemm_desc& d);
//   ...                                  // UNSUPPORTED with the reason, or NULL; one per kind
//   context.kernel_limits = &kit::limits_hook<MyBackend>;
// A kind without an overload has no limits of the backend's (one it has no enqueue for is
// reported unsupported by the kit's kernel_query anyway).
#ifndef HWINFER_SDK_KIT_KERNEL_LIMITS_H_
#define HWINFER_SDK_KIT_KERNEL_LIMITS_H_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/detect.h"
#include "hwinfer/plugin.h"

namespace hwinfer::kit {

// True when Backend::limits(const backend::CheckContext&, const Desc&) exists.
HWINFER_KIT_DETECT_KIND(HasLimits, B::limits(std::declval<const backend::CheckContext&>(),
                                             std::declval<const Desc&>()))

// The KernelLimitsFn of |Backend|: its limits overload for |kind|'s descriptor, or none.
template <typename Backend>
hwinfer_error* limits_hook(const backend::CheckContext& context, uint32_t kind, const void* desc) {
  switch (kind) {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor)                \
  case HWINFER_KERNEL_##KIND:                                                 \
    if constexpr (HasLimits<Backend, descriptor>::value) {                    \
      return Backend::limits(context, *static_cast<const descriptor*>(desc)); \
    } else {                                                                  \
      return nullptr;                                                         \
    }
#include "hwinfer/kernel_kinds.def"
    default:
      return nullptr;
  }
}

}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_KERNEL_LIMITS_H_
