// check_context.h — what the shared descriptor checks (view_checks.h, kernel_checks.h) need to
// know about the plugin that calls them: its name for messages, how to read its buffers, the device
// the views must live on, whether buffers are required, and an optional hook for what this
// backend cannot run.
//
// Each plugin defines struct hwinfer_buffer itself, so the checks never dereference a buffer:
// they call the plugin's BufferInfoFn. Must stay a plain aggregate: no ownership, no allocation.
#ifndef HWINFER_SDK_KIT_CHECK_CONTEXT_H_
#define HWINFER_SDK_KIT_CHECK_CONTEXT_H_

#include <cstdint>

#include "hwinfer/plugin.h"

namespace hwinfer::backend {

// How the checks read a plugin's hwinfer_buffer. All three are required and are only called with
// a non-NULL |buffer|.
struct BufferInfoFn {
  // The buffer's size: every byte a view addresses must lie in [0, size_bytes).
  uint64_t (*size_bytes)(const hwinfer_buffer* buffer);
  // The device the buffer was allocated on (or imported into).
  const hwinfer_device* (*device)(const hwinfer_buffer* buffer);
  // The host address of the buffer's byte 0, or 0 when it has none (device memory, a simulated
  // buffer without backing). Used for element alignment (address + offset_bytes must be a
  // multiple of the element size; 0 counts as aligned to everything) and to find two buffers
  // that alias the same host memory.
  uintptr_t (*host_address)(const hwinfer_buffer* buffer);
};

struct CheckContext;

constexpr uint64_t weight_dtype_bit(uint32_t dtype) { return dtype < 64 ? 1ull << dtype : 0; }
// Q8_0 and Q4_0 (ABI 1.0's two).
inline constexpr uint64_t kWeightDtypesQ8Q4 =
    weight_dtype_bit(HWINFER_DTYPE_Q8_0) | weight_dtype_bit(HWINFER_DTYPE_Q4_0);
// Every block-quantized dtype of plugin.h (ABI 1.2).
inline constexpr uint64_t kWeightDtypesAll =
    kWeightDtypesQ8Q4 | weight_dtype_bit(HWINFER_DTYPE_Q4_1) |
    weight_dtype_bit(HWINFER_DTYPE_Q5_0) | weight_dtype_bit(HWINFER_DTYPE_Q5_1) |
    weight_dtype_bit(HWINFER_DTYPE_IQ4_NL) | weight_dtype_bit(HWINFER_DTYPE_Q2_K) |
    weight_dtype_bit(HWINFER_DTYPE_Q3_K) | weight_dtype_bit(HWINFER_DTYPE_Q4_K) |
    weight_dtype_bit(HWINFER_DTYPE_Q5_K) | weight_dtype_bit(HWINFER_DTYPE_Q6_K);

// A plugin's own limits, for a descriptor the shared checks found well-formed: |kind| is the
// HWINFER_KERNEL_* the check was for (not read from |desc|, which enqueue callers need not set),
// |desc| points at that kind's descriptor (hwinfer_gemm_desc, ...). Returns NULL when the plugin
// can run it, else UNSUPPORTED with a reason ("<plugin> gemm: BF16 is not supported here").
using KernelLimitsFn = hwinfer_error* (*)(const CheckContext& context, uint32_t kind,
                                          const void* desc);

// One check's context. Plugins build it per call: the name, buffer functions and limits are
// constants; |device| and |require_buffers| depend on the caller.
struct CheckContext {
  const char* plugin_name = "";            // "cpu": every message starts "cpu <kernel>: ..."
  const BufferInfoFn* buffers = nullptr;   // required; outlives the call
  const hwinfer_device* device = nullptr;  // every buffer a view names must belong to it
  // false for kernel_query (the core asks before it allocates: a NULL buffer passes, and the
  // views are checked without their buffer), true for an enqueue slot (NULL buffer is an error).
  bool require_buffers = false;
  KernelLimitsFn kernel_limits = nullptr;  // optional; NULL: the plugin runs every valid desc
  // The block-quantized weight dtypes this plugin's matmul_quantized and embedding take, as a mask
  // of bits (1 << HWINFER_DTYPE_*); any other block dtype is UNSUPPORTED, named.
  uint64_t weight_dtypes = kWeightDtypesQ8Q4;
};

// context.kernel_limits(context, kind, desc), or NULL when the plugin has no limits hook. The
// shared kernel checks call it last, once |desc| is known to be well-formed.
inline hwinfer_error* apply_kernel_limits(const CheckContext& context, uint32_t kind,
                                          const void* desc) {
  return context.kernel_limits != nullptr ? context.kernel_limits(context, kind, desc) : nullptr;
}

}  // namespace hwinfer::backend

#endif  // HWINFER_SDK_KIT_CHECK_CONTEXT_H_
