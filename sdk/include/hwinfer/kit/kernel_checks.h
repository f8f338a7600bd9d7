// kernel_checks.h — the descriptor validation of every kernel kind of plugin.h, one check_kernel
// overload per kind (per descriptor type, declared from hwinfer/kernel_kinds.def: a listed kind
// without its check does not link), written once for every backend
// (cpu, sim, and the device backends to come). A backend calls the same check from kernel_query
// (CheckContext::require_buffers false: views may come without buffers, the core asks before it
// allocates) and from its enqueue slot (require_buffers true), so "can you run this?" and
// enqueue-time validation never disagree.
//
// Using it from a new backend:
//   static const BufferInfoFn kBuffers = {&size_of, &device_of, &host_address_of};
//   CheckContext context;
//   context.plugin_name = "vulkan";            // messages: "vulkan gemm: ..."
//   context.buffers = &kBuffers;               // reads the plugin's own struct hwinfer_buffer
//   context.device = stream->device;           // views must live on this device
//   context.require_buffers = true;            // false from kernel_query
//   context.kernel_limits = &vulkan_limits;    // optional: what this backend cannot run
//   if (hwinfer_error* error = check_kernel(context, *desc)) return error;
// kernel_query.h turns the same checks into a kernel_query answer.
//
// Each check returns NULL when |d| is well-formed and runnable; INVALID_ARGUMENT when malformed;
// UNSUPPORTED with a reason when well-formed but not runnable (an unknown enum value, an unknown
// dtype value, a view layout the kernels do not take, or what context.kernel_limits refuses; it
// runs last, only for well-formed descriptors). Descriptor struct_size is checked first.
// The shapes each kernel takes are in the comments of its file, sdk/kit/kinds/<kind>.cpp, and in
// plugin.h.
//
// Must not read buffer contents (an embedding id or a KV slot out of range is the kernel's error,
// reported from the stream) and must not decide anything per backend except through
// context.kernel_limits.
#ifndef HWINFER_SDK_KIT_KERNEL_CHECKS_H_
#define HWINFER_SDK_KIT_KERNEL_CHECKS_H_

#include "hwinfer/kit/check_context.h"
#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// NULL when |dtype| is a block-quantized dtype in context.weight_dtypes; else UNSUPPORTED (a block
// dtype this plugin lacks, or an unknown one) or INVALID_ARGUMENT (a non-block dtype), named.
hwinfer_error* check_weight_dtype(const CheckContext& context, const char* kernel,
                                  const char* operand, uint32_t dtype);
// One check per kind, each in its file sdk/kit/kinds/<kind>.cpp (rope_kv_append checks its two
// halves as the rope and kv_append checks do).
#define HWINFER_KERNEL_KIND(KIND, slot, descriptor, abi_minor) \
  hwinfer_error* check_kernel(const CheckContext& context, const descriptor& d);
#include "hwinfer/kernel_kinds.def"

// True when an attention_prefill descriptor has a cached prefix: k_cache has a buffer, or, when
// buffers are not required (kernel_query), k_cache describes a view (rank != 0).
bool attention_prefill_has_prefix(const hwinfer_attention_prefill_desc& d, bool require_buffers);

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_KERNEL_CHECKS_H_
