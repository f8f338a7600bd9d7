// kernel_slots.h — the kernel half of a plugin's C tables, written once (plugin kit, issue 19): a
// backend states which kernels it runs as overloads of one static function, and the kit makes the
// guarded C slot of each and the hwinfer_kernel_table that lists them, from
// hwinfer/kernel_kinds.def. A kind the backend has no overload for stays a NULL slot (the host
// reports it unsupported and never calls it).
//
// The backend is a struct of static members (C++17; no object, no virtual calls):
//   struct MyBackend {
//     static constexpr const char* kName = "mine";  // message prefix: "mine gemm: ..."
//     static backend::CheckContext check_context(const hwinfer_device&, bool require_buffers);
//     static hwinfer_error* enqueue(hwinfer_stream& stream, const hwinfer_gemm_desc& desc);
//     ...                                           // one enqueue per kind it runs
//   };
//   const hwinfer_kernel_table kTable = kit::make_kernel_table<MyBackend>();
//
// Every slot runs, in this order and inside guarded() (no exception crosses the ABI: bad_alloc is
// OUT_OF_MEMORY, any other INTERNAL): stream and desc not NULL (INVALID_ARGUMENT "<kind>: stream"
// / "<kind>: desc"), the kind's shared check (check_kernel: struct_size, shapes, dtypes, views on
// the stream's device, the backend's limits hook), then enqueue with a valid descriptor.
#ifndef HWINFER_SDK_KIT_KERNEL_SLOTS_H_
#define HWINFER_SDK_KIT_KERNEL_SLOTS_H_

#include <cstdint>
#include <type_traits>
#include <utility>

#include "hwinfer/kit/check_context.h"
#include "hwinfer/kit/detect.h"
#include "hwinfer/kit/handles.h"
#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/plugin.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::kit {

// The kind of a descriptor type, its name and the names its NULL checks give.
template <typename Desc>
struct KindOf;
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor)       \
  template <>                                                        \
  struct KindOf<descriptor> {                                        \
    static constexpr uint32_t kKind = HWINFER_KERNEL_##KIND;         \
    static constexpr const char* kName = #slot;                      \
    static constexpr const char* kStreamArgument = #slot ": stream"; \
    static constexpr const char* kDescArgument = #slot ": desc";     \
  };
#include "hwinfer/kernel_kinds.def"

// How many kernel kinds hwinfer/kernel_kinds.def lists.
inline constexpr int kKernelKindCount = 0
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) +1
#include "hwinfer/kernel_kinds.def"
    ;

// True when Backend::enqueue(hwinfer_stream&, const Desc&) exists.
HWINFER_KIT_DETECT_KIND(HasEnqueue,
                        B::enqueue(std::declval<hwinfer_stream&>(), std::declval<const Desc&>()))

// The guarded, checked enqueue of kind |Desc| (kernel_slot adds after_enqueue).
template <typename Backend, typename Desc>
hwinfer_error* kernel_slot_checked(StreamOf<Backend>* stream, const Desc* desc) noexcept {
  using Kind = KindOf<Desc>;
  return backend::guarded(Backend::kName, Kind::kName, [&]() -> hwinfer_error* {
    if (hwinfer_error* error =
            backend::require_non_null(Backend::kName, stream, Kind::kStreamArgument)) {
      return error;
    }
    if (hwinfer_error* error =
            backend::require_non_null(Backend::kName, desc, Kind::kDescArgument)) {
      return error;
    }
    if (hwinfer_error* error =
            backend::check_kernel(Backend::check_context(*stream->device, true), *desc)) {
      return error;
    }
    return Backend::enqueue(*stream, *desc);
  });
}

// True when Backend::after_enqueue(hwinfer_stream*, hwinfer_error*) exists: it sees the result
// of every kernel slot and of copy_d2d (the work a capture records), checks included, and returns
// it (a GPU backend spoils the stream's capture with a failure). The stream may be NULL.
HWINFER_KIT_DETECT(HasAfterEnqueue, B::after_enqueue(std::declval<hwinfer_stream*>(),
                                                     std::declval<hwinfer_error*>()))

// |error|, after Backend::after_enqueue when it has one.
template <typename Backend>
hwinfer_error* after_enqueue(StreamOf<Backend>* stream, hwinfer_error* error) noexcept {
  if constexpr (HasAfterEnqueue<Backend>::value) {
    return Backend::after_enqueue(stream, error);
  } else {
    return error;
  }
}

// The C slot of kind |Desc| for |Backend|.
template <typename Backend, typename Desc>
hwinfer_error* kernel_slot(StreamOf<Backend>* stream, const Desc* desc) noexcept {
  return after_enqueue<Backend>(stream, kernel_slot_checked<Backend>(stream, desc));
}

// The number of kinds |Backend| has an enqueue for.
template <typename Backend>
constexpr int kernel_count() {
  int count = 0;
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  count += HasEnqueue<Backend, descriptor>::value ? 1 : 0;
#include "hwinfer/kernel_kinds.def"
  return count;
}

// The kernel table of |Backend|: a guarded slot for each kind it has an enqueue for, NULL for the
// others.
template <typename Backend>
hwinfer_kernel_table make_kernel_table() {
  hwinfer_kernel_table table{};
  table.struct_size = sizeof(hwinfer_kernel_table);
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  if constexpr (HasEnqueue<Backend, descriptor>::value) {      \
    table.slot = &kernel_slot<Backend, descriptor>;            \
  }
#include "hwinfer/kernel_kinds.def"
  return table;
}

}  // namespace hwinfer::kit

#endif  // HWINFER_SDK_KIT_KERNEL_SLOTS_H_
