// kernel_query.cpp — see kernel_query.h.
#include "hwinfer/kit/kernel_query.h"

#include <cinttypes>

#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/plugin_errors.h"
#include "hwinfer/plugin_support.h"

namespace hwinfer::backend {

namespace {

// Turns a check result into a kernel_query answer: UNSUPPORTED becomes supported = 0 with the
// error's message as the reason; other errors are returned as they are.
hwinfer_error* answer(hwinfer_error* check, hwinfer_kernel_support* out) {
  if (check == nullptr) {
    hwinfer_set_support(out, HWINFER_KERNEL_SUPPORTED, "%s", "");
    return nullptr;
  }
  if (check->code != HWINFER_STATUS_UNSUPPORTED) return check;
  hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED, "%s", check->message);
  check->destroy(check);
  return nullptr;
}

// |desc| as the descriptor of its kind |Desc| once its struct_size covers one (else that error),
// answered by the kind's check_kernel.
template <typename Desc>
hwinfer_error* query(const CheckContext& context, const hwinfer_kernel_desc& desc, const char* name,
                     hwinfer_kernel_support* out) {
  if (hwinfer_error* error =
          check_desc_size(context.plugin_name, desc.struct_size, sizeof(Desc), name)) {
    return error;
  }
  return answer(check_kernel(context, reinterpret_cast<const Desc&>(desc)), out);
}

}  // namespace

hwinfer_error* answer_kernel_query(const CheckContext& context,
                                   const hwinfer_kernel_desc* desc_pointer,
                                   hwinfer_kernel_support* out) {
  const char* plugin = context.plugin_name;
  if (hwinfer_error* error = require_non_null(plugin, context.device, "kernel_query: device")) {
    return error;
  }
  if (hwinfer_error* error = require_non_null(plugin, desc_pointer, "kernel_query: desc")) {
    return error;
  }
  if (hwinfer_error* error = require_non_null(plugin, out, "kernel_query: out")) return error;
  const hwinfer_kernel_desc& desc = *desc_pointer;
  if (hwinfer_error* error = check_desc_size(context.plugin_name, desc.struct_size,
                                             sizeof(hwinfer_kernel_desc), "kernel_query")) {
    return error;
  }
  switch (desc.kind) {
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  case HWINFER_KERNEL_##KIND:                                  \
    return query<descriptor>(context, desc, #slot, out);
#include "hwinfer/kernel_kinds.def"
    default:
      break;
  }
  if (const char* name = hwinfer_kernel_kind_name(desc.kind)) {
    hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED,
                        "%s is not implemented in the %s backend yet", name, context.plugin_name);
  } else {
    hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED,
                        "unknown kernel kind %" PRIu32 " (newer than this %s plugin)", desc.kind,
                        context.plugin_name);
  }
  return nullptr;
}

}  // namespace hwinfer::backend
