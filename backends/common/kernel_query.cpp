// kernel_query.cpp — see kernel_query.h.
#include "common/kernel_query.h"

#include <cinttypes>

#include "common/kernel_checks.h"
#include "common/plugin_errors.h"
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
// answered by |check|.
template <typename Desc>
hwinfer_error* query(const CheckContext& context, const hwinfer_kernel_desc& desc, const char* name,
                     hwinfer_error* (*check)(const CheckContext&, const Desc&),
                     hwinfer_kernel_support* out) {
  if (hwinfer_error* error =
          check_desc_size(context.plugin_name, desc.struct_size, sizeof(Desc), name)) {
    return error;
  }
  return answer(check(context, reinterpret_cast<const Desc&>(desc)), out);
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
    case HWINFER_KERNEL_GEMM:
      return query<hwinfer_gemm_desc>(context, desc, "gemm", check_gemm, out);
    case HWINFER_KERNEL_MATMUL_QUANTIZED:
      return query<hwinfer_matmul_quantized_desc>(context, desc, "matmul_quantized",
                                                  check_matmul_quantized, out);
    case HWINFER_KERNEL_KV_APPEND:
      return query<hwinfer_kv_append_desc>(context, desc, "kv_append", check_kv_append, out);
    case HWINFER_KERNEL_RMS_NORM:
      return query<hwinfer_rms_norm_desc>(context, desc, "rms_norm", check_rms_norm, out);
    case HWINFER_KERNEL_SILU_MUL:
      return query<hwinfer_silu_mul_desc>(context, desc, "silu_mul", check_silu_mul, out);
    case HWINFER_KERNEL_ROPE:
      return query<hwinfer_rope_desc>(context, desc, "rope", check_rope, out);
    case HWINFER_KERNEL_EMBEDDING:
      return query<hwinfer_embedding_desc>(context, desc, "embedding", check_embedding, out);
    case HWINFER_KERNEL_ATTENTION_DECODE_PAGED:
      return query<hwinfer_attention_decode_paged_desc>(context, desc, "attention_decode_paged",
                                                        check_attention_decode_paged, out);
    case HWINFER_KERNEL_ATTENTION_PREFILL:
      return query<hwinfer_attention_prefill_desc>(context, desc, "attention_prefill",
                                                   check_attention_prefill, out);
    case HWINFER_KERNEL_BANDWIDTH_PROBE:
      return query<hwinfer_bandwidth_probe_desc>(context, desc, "bandwidth_probe",
                                                 check_bandwidth_probe, out);
    case HWINFER_KERNEL_ROPE_KV_APPEND:
      return query<hwinfer_rope_kv_append_desc>(context, desc, "rope_kv_append",
                                                check_rope_kv_append, out);
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
