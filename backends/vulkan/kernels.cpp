// kernels.cpp — the Vulkan backend's kernel table and kernel_query. Implemented in this step: the
// bandwidth probe (READ by a shader, COPY by vkCmdCopyBuffer, WRITE by vkCmdFillBuffer plus
// byte-exact edge copies), rms_norm (F32/F16, optional fused residual) and silu_mul (F32/F16);
// embedding and rope are in kernels_token.cpp, gemm in kernels_gemm.cpp, kv_append in
// kernels_kv.cpp, matmul_quantized in kernels_quant.cpp, attention_decode_paged in
// kernels_attention_decode.cpp, attention_prefill in kernels_attention_prefill.cpp.
//
// Descriptors are validated by the checks every backend shares
// (sdk/include/hwinfer/kit/kernel_checks.h), from kernel_query (views may lack buffers) and from
// the enqueue slots (buffers required), so this backend rejects exactly what the CPU backend
// rejects; VulkanBackend::limits (one overload per kind, here and in each family's file) adds
// what this backend cannot run yet (dtypes not done, negative
// strides, unaligned offsets, unimplemented kinds) as UNSUPPORTED with the reason. Shaders follow
// dispatch.h's convention. Must not read buffer contents on the host.
#include <algorithm>
#include <cinttypes>
#include <cmath>

#include "dispatch.h"
#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "hwinfer/kit/kernel_limits.h"
#include "hwinfer/kit/view_checks.h"
#include "hwinfer/kit/view_extent.h"
#include "kernel_util.h"
#include "vk_internal.h"

namespace hwinfer::vulkan {

namespace {

// ---- checks ------------------------------------------------------------------------------------

// What the shared checks let through but this backend does not run yet, for the kernels it has:
// dtypes outside |allowed| (F32 and, for the row kernels, F16), offsets not a multiple of the
// element size (the shaders address elements of 32-bit words), negative strides.
hwinfer_error* require_runnable(const hwinfer_tensor_view& view, const char* kernel,
                                const char* operand, bool allow_f16 = false) {
  if (view.buffer == nullptr && view.rank == 0) return nullptr;  // an absent optional operand
  if (view.dtype != HWINFER_DTYPE_F32 && !(allow_f16 && view.dtype == HWINFER_DTYPE_F16)) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan %s: operand %s is %s; only %s implemented in the Vulkan "
                              "backend yet",
                              kernel, operand, backend::dtype_name(view.dtype).c_str(),
                              allow_f16 ? "F32 and F16 are" : "F32 is");
  }
  const uint64_t element_bytes = backend::dtype_element_bytes(view.dtype);
  if (element_bytes == 0 || view.offset_bytes % element_bytes != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan %s: operand %s starts at byte offset %" PRIu64
                              ", not a multiple of its element size",
                              kernel, operand, view.offset_bytes);
  }
  return require_non_negative_strides(view, kernel, operand);
}

uint32_t element_row_stride(const hwinfer_tensor_view& view) { return element_stride(view, 0); }

uint32_t is_f16(const hwinfer_tensor_view& view) {
  return view.dtype == HWINFER_DTYPE_F16 ? 1u : 0u;
}

// ---- RMSNorm -----------------------------------------------------------------------------------
//   x, out, residual: [n_tokens, dim] F32 | F16 each;  weight: [dim] F32

struct RmsNormPush {
  uint32_t n_tokens, dim;
  uint32_t x_offset, x_row_stride;
  uint32_t residual_offset, residual_row_stride;
  uint32_t weight_offset;
  uint32_t out_offset, out_row_stride;
  uint32_t has_residual;
  float eps;
  uint32_t x_f16, residual_f16, out_f16;
};

}  // namespace

// What the shared checks admit but the row shaders do not run (F32 and F16 only, whole-element
// offsets, non-negative strides).
hwinfer_error* VulkanBackend::limits(const backend::CheckContext& /*context*/,
                                     const hwinfer_rms_norm_desc& d) {
  HWINFER_KIT_RETURN_IF_ERROR(require_runnable(d.x, "rms_norm", "x", true));
  HWINFER_KIT_RETURN_IF_ERROR(require_runnable(d.weight, "rms_norm", "weight"));
  HWINFER_KIT_RETURN_IF_ERROR(require_runnable(d.out, "rms_norm", "out", true));
  return require_runnable(d.residual, "rms_norm", "residual", true);
}

hwinfer_error* VulkanBackend::limits(const backend::CheckContext& /*context*/,
                                     const hwinfer_silu_mul_desc& d) {
  HWINFER_KIT_RETURN_IF_ERROR(require_runnable(d.gate, "silu_mul", "gate", true));
  HWINFER_KIT_RETURN_IF_ERROR(require_runnable(d.up, "silu_mul", "up", true));
  return require_runnable(d.out, "silu_mul", "out", true);
}

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream, const hwinfer_rms_norm_desc& desc) {
  const hwinfer_device* device = stream.device;
  const bool has_residual = desc.residual.buffer != nullptr;
  // Without a residual, binding 1 aliases x (never touched: has_residual = 0).
  const hwinfer_tensor_view& residual = has_residual ? desc.residual : desc.x;
  RmsNormPush push{};
  push.n_tokens = static_cast<uint32_t>(desc.n_tokens);
  push.dim = static_cast<uint32_t>(desc.dim);
  push.x_offset = element_remainder(device, desc.x);
  push.x_row_stride = element_row_stride(desc.x);
  push.residual_offset = element_remainder(device, residual);
  push.residual_row_stride = element_row_stride(residual);
  push.weight_offset = element_remainder(device, desc.weight);
  push.out_offset = element_remainder(device, desc.out);
  push.out_row_stride = element_row_stride(desc.out);
  push.has_residual = has_residual ? 1u : 0u;
  push.eps = desc.eps;
  push.x_f16 = is_f16(desc.x);
  push.residual_f16 = is_f16(residual);
  push.out_f16 = is_f16(desc.out);
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("rms_norm"));
  HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(
      ShaderId::kRmsNorm,
      {operand_of(desc.x), operand_of(residual), operand_of(desc.weight), operand_of(desc.out)},
      &push, sizeof(push), static_cast<uint64_t>(desc.n_tokens)));
  return recording.submit();
}

namespace {

// ---- SiLU-mul ----------------------------------------------------------------------------------
//   gate, up, out: [n_tokens, dim] F32 | F16 each

struct SiluMulPush {
  uint32_t n_tokens, dim;
  uint32_t gate_offset, gate_row_stride;
  uint32_t up_offset, up_row_stride;
  uint32_t out_offset, out_row_stride;
  uint32_t gate_f16, up_f16, out_f16;
};

}  // namespace

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream, const hwinfer_silu_mul_desc& desc) {
  const hwinfer_device* device = stream.device;
  SiluMulPush push{};
  push.n_tokens = static_cast<uint32_t>(desc.n_tokens);
  push.dim = static_cast<uint32_t>(desc.dim);
  push.gate_offset = element_remainder(device, desc.gate);
  push.gate_row_stride = element_row_stride(desc.gate);
  push.up_offset = element_remainder(device, desc.up);
  push.up_row_stride = element_row_stride(desc.up);
  push.out_offset = element_remainder(device, desc.out);
  push.out_row_stride = element_row_stride(desc.out);
  push.gate_f16 = is_f16(desc.gate);
  push.up_f16 = is_f16(desc.up);
  push.out_f16 = is_f16(desc.out);
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("silu_mul"));
  HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(
      ShaderId::kSiluMul, {operand_of(desc.gate), operand_of(desc.up), operand_of(desc.out)}, &push,
      sizeof(push), div_up(static_cast<uint64_t>(desc.dim), kWorkgroupSize),
      static_cast<uint64_t>(desc.n_tokens)));
  return recording.submit();
}

namespace {

// ---- bandwidth probe ---------------------------------------------------------------------------
//   src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8
//   (READ). Operands a mode does not use are ignored. All used views must be contiguous.

constexpr int64_t kSinkMinBytes = 64;

struct ProbeReadPush {
  uint32_t first_word;
  uint32_t n_words;
  uint32_t pass;
};

hwinfer_error* record_probe_read(Recording& recording, const hwinfer_device* device,
                                 const hwinfer_bandwidth_probe_desc& d) {
  const DeviceFunctions& fn = recording.fn();
  hwinfer_buffer* scratch = nullptr;
  HWINFER_KIT_RETURN_IF_ERROR(recording.transient(kSinkMinBytes, HWINFER_MEMORY_DEVICE, &scratch));
  fn.vkCmdFillBuffer(recording.command_buffer(), scratch->buffer, 0, kSinkMinBytes, 0);
  recording.barrier();
  Operand src{d.src.buffer, d.src.offset_bytes, 0};
  const uint64_t remainder = binding_remainder(device, src);
  const uint64_t head = remainder % 4;  // bytes of the first word before the view
  const uint64_t n_words = div_up(head + d.size_bytes, 4);
  src.extent_bytes = n_words * 4 - head;
  ProbeReadPush push{};
  push.first_word = static_cast<uint32_t>(remainder / 4);
  push.n_words = static_cast<uint32_t>(n_words);
  const uint64_t groups = std::min<uint64_t>(div_up(n_words, kWorkgroupSize), 4096);
  for (uint32_t pass = 0; pass < d.iterations; ++pass) {
    push.pass = pass;
    HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(ShaderId::kProbeRead,
                                                   {src, Operand{scratch, 0, kSinkMinBytes}}, &push,
                                                   sizeof(push), groups));
    recording.barrier();
  }
  VkBufferCopy region{0, d.sink.offset_bytes, kSinkMinBytes};
  fn.vkCmdCopyBuffer(recording.command_buffer(), scratch->buffer, d.sink.buffer->buffer, 1,
                     &region);
  return nullptr;
}

void record_probe_copy(Recording& recording, const hwinfer_bandwidth_probe_desc& d) {
  VkBufferCopy region{d.src.offset_bytes, d.dst.offset_bytes, d.size_bytes};
  for (uint32_t pass = 0; pass < d.iterations; ++pass) {
    if (pass > 0) recording.barrier();
    recording.fn().vkCmdCopyBuffer(recording.command_buffer(), d.src.buffer->buffer,
                                   d.dst.buffer->buffer, 1, &region);
  }
}

// vkCmdFillBuffer needs 4-byte offsets and sizes: the aligned middle is filled, the (< 4 byte)
// edges are copied from a zeroed scratch buffer, so no byte outside the view is written.
hwinfer_error* record_probe_write(Recording& recording, const hwinfer_bandwidth_probe_desc& d) {
  const DeviceFunctions& fn = recording.fn();
  VkCommandBuffer cb = recording.command_buffer();
  hwinfer_buffer* zeros = nullptr;
  HWINFER_KIT_RETURN_IF_ERROR(recording.transient(8, HWINFER_MEMORY_DEVICE, &zeros));
  fn.vkCmdFillBuffer(cb, zeros->buffer, 0, 8, 0);
  recording.barrier();
  const uint64_t begin = d.dst.offset_bytes;
  const uint64_t end = begin + d.size_bytes;
  const uint64_t middle_begin = std::min(end, (begin + 3) / 4 * 4);
  const uint64_t middle_end = std::max(middle_begin, end / 4 * 4);
  VkBuffer dst = d.dst.buffer->buffer;
  for (uint32_t pass = 0; pass < d.iterations; ++pass) {
    if (pass > 0) recording.barrier();
    if (middle_end > middle_begin) {
      fn.vkCmdFillBuffer(cb, dst, middle_begin, middle_end - middle_begin, 0x9E3779B9u * pass);
    }
    if (middle_begin > begin) {
      VkBufferCopy head{0, begin, middle_begin - begin};
      fn.vkCmdCopyBuffer(cb, zeros->buffer, dst, 1, &head);
    }
    if (end > middle_end) {
      VkBufferCopy tail{0, middle_end, end - middle_end};
      fn.vkCmdCopyBuffer(cb, zeros->buffer, dst, 1, &tail);
    }
  }
  return nullptr;
}

}  // namespace

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream,
                                      const hwinfer_bandwidth_probe_desc& desc) {
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("bandwidth_probe"));
  switch (desc.mode) {
    case HWINFER_PROBE_READ:
      HWINFER_KIT_RETURN_IF_ERROR(record_probe_read(recording, stream.device, desc));
      break;
    case HWINFER_PROBE_COPY:
      record_probe_copy(recording, desc);
      break;
    default:
      HWINFER_KIT_RETURN_IF_ERROR(record_probe_write(recording, desc));
      break;
  }
  return recording.submit();
}

backend::CheckContext check_context(const hwinfer_device* device, bool require_buffers) {
  static const backend::BufferInfoFn kBuffers = {
      [](const hwinfer_buffer* buffer) -> uint64_t { return buffer->size_bytes; },
      [](const hwinfer_buffer* buffer) -> const hwinfer_device* { return buffer->device; },
      // Device memory has no host address the checks may use (alignment is VulkanBackend::limits').
      [](const hwinfer_buffer*) -> uintptr_t { return 0; }};
  backend::CheckContext context{kPluginName, &kBuffers, device, require_buffers,
                                &kit::limits_hook<VulkanBackend>};
  context.weight_dtypes = backend::kWeightDtypesAll;  // shaders/weight_blocks.glsl
  return context;
}

uint64_t view_extent_bytes(const hwinfer_tensor_view& view) {
  int64_t lowest = 0;
  int64_t end = 0;
  const uint64_t element_bytes = std::max<uint64_t>(1, backend::dtype_element_bytes(view.dtype));
  if (!backend::view_byte_extent(view, element_bytes, &lowest, &end)) return UINT64_MAX;
  return end > 0 ? static_cast<uint64_t>(end) : 0;
}

Operand operand_of(const hwinfer_tensor_view& view) {
  return {view.buffer, view.offset_bytes, view_extent_bytes(view)};
}

uint32_t element_remainder(const hwinfer_device* device, const hwinfer_tensor_view& view) {
  const uint64_t element_bytes = std::max<uint64_t>(1, backend::dtype_element_bytes(view.dtype));
  return static_cast<uint32_t>(binding_remainder(device, operand_of(view)) / element_bytes);
}

uint32_t element_stride(const hwinfer_tensor_view& view, uint32_t dim) {
  const auto element_bytes =
      static_cast<int64_t>(std::max<uint64_t>(1, backend::dtype_element_bytes(view.dtype)));
  return static_cast<uint32_t>(view.strides_bytes[dim] / element_bytes);
}

hwinfer_error* require_non_negative_strides(const hwinfer_tensor_view& view, const char* kernel,
                                            const char* operand) {
  for (uint32_t i = 0; i < view.rank && i < HWINFER_MAX_RANK; ++i) {
    if (view.strides_bytes[i] < 0) {
      return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                                "vulkan %s: operand %s has a negative stride (the shaders index "
                                "with unsigned offsets)",
                                kernel, operand);
    }
  }
  return nullptr;
}

hwinfer_error* require_whole_elements(const hwinfer_tensor_view& view, const char* kernel,
                                      const char* operand) {
  HWINFER_KIT_RETURN_IF_ERROR(require_non_negative_strides(view, kernel, operand));
  const auto element_bytes = static_cast<int64_t>(backend::dtype_element_bytes(view.dtype));
  bool whole = element_bytes > 0 && view.offset_bytes % static_cast<uint64_t>(element_bytes) == 0;
  for (uint32_t i = 0; whole && i < view.rank && i < HWINFER_MAX_RANK; ++i) {
    whole = view.strides_bytes[i] % element_bytes == 0;
  }
  if (!whole) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan %s: operand %s has an offset or stride that is not a "
                              "whole number of elements",
                              kernel, operand);
  }
  return nullptr;
}

hwinfer_error* require_whole_pool_elements(const char* kernel, const hwinfer_tensor_view& k_cache,
                                           const hwinfer_tensor_view& v_cache,
                                           const hwinfer_tensor_view& k_scales,
                                           const hwinfer_tensor_view& v_scales) {
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(k_cache, kernel, "k_cache"));
  HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(v_cache, kernel, "v_cache"));
  if (k_cache.dtype == HWINFER_DTYPE_I8) {
    HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(k_scales, kernel, "k_scales"));
  }
  if (v_cache.dtype == HWINFER_DTYPE_I8) {
    HWINFER_KIT_RETURN_IF_ERROR(require_whole_elements(v_scales, kernel, "v_scales"));
  }
  return nullptr;
}

}  // namespace hwinfer::vulkan
