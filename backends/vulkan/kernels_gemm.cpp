// kernels_gemm.cpp — the Vulkan backend's gemm (shaders/gemm.comp): F32 / F16 / BF16 operands in
// any combination, b plain or transposed, padded rows, alpha/beta; a straightforward 16x16 tiled
// shader with shared-memory tiles and fp32 accumulation (correctness first; no tuned GEMV yet).
// Descriptors are validated by the shared checks (kernels.cpp's check_context); gemm_limits adds
// what the shader cannot run (negative or non-element strides, a non-contiguous innermost
// dimension) as UNSUPPORTED with the reason. Must not read buffer contents on the host.
#include <cinttypes>

#include "common/dtype_info.h"
#include "common/kernel_checks.h"
#include "kernel_util.h"

namespace hwinfer::vulkan {

namespace {

constexpr uint64_t kTile = 16;  // TILE of shaders/gemm.comp

struct GemmPush {
  uint32_t m, n, k, b_transposed;
  float alpha, beta;
  uint32_t a_offset, a_row_stride, a_dtype;
  uint32_t b_offset, b_row_stride, b_dtype;
  uint32_t c_offset, c_row_stride, c_dtype;
};

// The shader's DTYPE_* code.
uint32_t dtype_code(uint32_t dtype) {
  return dtype == HWINFER_DTYPE_F16 ? 1u : dtype == HWINFER_DTYPE_BF16 ? 2u : 0u;
}

hwinfer_error* require_gemm_operand(const hwinfer_tensor_view& view, const char* operand) {
  VK_RETURN_IF_ERROR(require_non_negative_strides(view, "gemm", operand));
  const auto element_bytes = static_cast<int64_t>(backend::dtype_element_bytes(view.dtype));
  if (element_bytes == 0) return nullptr;  // the shared checks report the dtype
  if (view.offset_bytes % static_cast<uint64_t>(element_bytes) != 0 ||
      view.strides_bytes[0] % element_bytes != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan gemm: operand %s has an offset or row stride that is not a "
                              "whole number of elements",
                              operand);
  }
  if (view.rank >= 2 && view.shape[1] > 1 && view.strides_bytes[1] != element_bytes) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan gemm: operand %s is not contiguous in its innermost "
                              "dimension (the shader reads rows)",
                              operand);
  }
  return nullptr;
}

}  // namespace

hwinfer_error* gemm_limits(const hwinfer_gemm_desc& d) {
  VK_RETURN_IF_ERROR(require_gemm_operand(d.a, "a"));
  VK_RETURN_IF_ERROR(require_gemm_operand(d.b, "b"));
  return require_gemm_operand(d.c, "c");
}

hwinfer_error* enqueue_gemm(hwinfer_stream* stream, const hwinfer_gemm_desc* desc) {
  return guarded("gemm", [&]() -> hwinfer_error* {
    VK_RETURN_IF_ERROR(require_non_null(stream, "gemm: stream"));
    VK_RETURN_IF_ERROR(require_non_null(desc, "gemm: desc"));
    const hwinfer_device* device = stream->device;
    VK_RETURN_IF_ERROR(backend::check_gemm(check_context(device, true), *desc));
    GemmPush push{};
    push.m = static_cast<uint32_t>(desc->m);
    push.n = static_cast<uint32_t>(desc->n);
    push.k = static_cast<uint32_t>(desc->k);
    push.b_transposed = desc->b_transposed != 0 ? 1u : 0u;
    push.alpha = desc->alpha;
    push.beta = desc->beta;
    push.a_offset = element_remainder(device, desc->a);
    push.a_row_stride = element_stride(desc->a, 0);
    push.a_dtype = dtype_code(desc->a.dtype);
    push.b_offset = element_remainder(device, desc->b);
    push.b_row_stride = element_stride(desc->b, 0);
    push.b_dtype = dtype_code(desc->b.dtype);
    push.c_offset = element_remainder(device, desc->c);
    push.c_row_stride = element_stride(desc->c, 0);
    push.c_dtype = dtype_code(desc->c.dtype);
    Recording recording(stream);
    VK_RETURN_IF_ERROR(recording.begin("gemm"));
    VK_RETURN_IF_ERROR(recording.dispatch(
        ShaderId::kGemm, {operand_of(desc->a), operand_of(desc->b), operand_of(desc->c)}, &push,
        sizeof(push), div_up(static_cast<uint64_t>(desc->n), kTile),
        div_up(static_cast<uint64_t>(desc->m), kTile)));
    return recording.submit();
  });
}

}  // namespace hwinfer::vulkan
