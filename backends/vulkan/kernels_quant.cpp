// kernels_quant.cpp — the Vulkan backend's matmul_quantized, y [m, n] F32 = x [m, k] F32 @ w^T,
// w [n, k] Q8_0 or Q4_0 GGUF blocks (rows at any byte offset and stride), on the same two paths
// as the CPU backend (backends/cpu/matmul_quantized.h), so both backends round alike:
//   m <= kGemvMaxM (decode): x is first quantized to 8-bit blocks of 32 (shaders/quantize_q8.comp,
//     bit for bit the CPU backend's rule: d = amax / 127, q = lround(x / d)) into a scratch
//     buffer, then the integer dot product of each block, summing d_w * d_x * dot in block order
//     as the CPU backend's portable decode kernels do: shaders/matmul_q_gemv.comp with 32
//     invocations per row of w (parallel weight reads and integer dots, the float sum kept
//     sequential in block order, so y is bit for bit what matmul_q.comp writes), or
//     shaders/matmul_q.comp with one invocation per y element (a CPU implementation keeps it for
//     n >= 64).
//   larger m (prefill): x stays exact; shaders/matmul_q_dequant.comp dequantizes the weights as it
//     loads them into the tiles of an F32 GEMM.
// Correctness first; only the decode GEMV is shaped for GPUs.
#include <cinttypes>

#include "common/dtype_info.h"
#include "common/kernel_checks.h"
#include "kernel_util.h"

namespace hwinfer::vulkan {

namespace {

constexpr uint64_t kXqBlockWords = 9;  // d + 32 int8 (quantize_q8.comp)
// The largest m that quantizes x: MAX_M of shaders/matmul_q_gemv.comp, and the CPU backend's
// kMatmulQuantizedGemvMaxM (both backends switch paths at the same m).
constexpr uint64_t kGemvMaxM = 8;
constexpr uint64_t kGemvRowsPerGroup = 8;   // SEGMENTS of shaders/matmul_q_gemv.comp
constexpr uint64_t kCpuDeviceMinRows = 64;  // see enqueue_matmul_quantized

struct QuantizePush {
  uint32_t m, blocks;
  uint32_t x_offset, x_row_stride;
};

constexpr uint64_t kDequantTile = 16;  // TILE of shaders/matmul_q_dequant.comp

struct DequantPush {
  uint32_t m, n, k, q4;
  uint32_t x_offset, x_row_stride;
  uint32_t w_offset, w_row_stride;
  uint32_t y_offset, y_row_stride;
};

struct MatmulQPush {
  uint32_t m, n, blocks, q4;
  uint32_t w_offset, w_row_stride;
  uint32_t y_offset, y_row_stride;
};

uint64_t block_bytes(uint32_t dtype) {
  return dtype == HWINFER_DTYPE_Q8_0 ? HWINFER_Q8_0_BLOCK_BYTES : HWINFER_Q4_0_BLOCK_BYTES;
}

hwinfer_error* require_f32_words(const hwinfer_tensor_view& view, const char* operand) {
  VK_RETURN_IF_ERROR(require_non_negative_strides(view, "matmul_quantized", operand));
  if (view.offset_bytes % 4 != 0 || view.strides_bytes[0] % 4 != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan matmul_quantized: operand %s has an offset or row stride "
                              "that is not a whole number of F32 elements",
                              operand);
  }
  return nullptr;
}

}  // namespace

hwinfer_error* matmul_quantized_limits(const hwinfer_matmul_quantized_desc& d) {
  VK_RETURN_IF_ERROR(require_f32_words(d.x, "x"));
  VK_RETURN_IF_ERROR(require_f32_words(d.y, "y"));
  if (d.w.strides_bytes[0] < 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan matmul_quantized: w has a negative row stride (the shader "
                              "indexes with unsigned offsets)");
  }
  return nullptr;
}

hwinfer_error* enqueue_matmul_quantized(hwinfer_stream* stream,
                                        const hwinfer_matmul_quantized_desc* desc) {
  return guarded("matmul_quantized", [&]() -> hwinfer_error* {
    VK_RETURN_IF_ERROR(require_non_null(stream, "matmul_quantized: stream"));
    VK_RETURN_IF_ERROR(require_non_null(desc, "matmul_quantized: desc"));
    const hwinfer_device* device = stream->device;
    VK_RETURN_IF_ERROR(backend::check_matmul_quantized(check_context(device, true), *desc));
    if (desc->m == 0 || desc->n == 0) return nullptr;
    const auto m = static_cast<uint64_t>(desc->m);
    const auto n = static_cast<uint64_t>(desc->n);
    const uint64_t blocks = static_cast<uint64_t>(desc->k) / 32;
    const uint64_t xq_bytes = m * blocks * kXqBlockWords * 4;
    const Operand w{desc->w.buffer, desc->w.offset_bytes,
                    (n - 1) * static_cast<uint64_t>(desc->w.strides_bytes[0]) +
                        blocks * block_bytes(desc->w.dtype)};
    Recording recording(stream);
    VK_RETURN_IF_ERROR(recording.begin("matmul_quantized"));
    if (m > kGemvMaxM) {
      DequantPush push{};
      push.m = static_cast<uint32_t>(m);
      push.n = static_cast<uint32_t>(n);
      push.k = static_cast<uint32_t>(desc->k);
      push.q4 = desc->w.dtype == HWINFER_DTYPE_Q4_0 ? 1u : 0u;
      push.x_offset = element_remainder(device, desc->x);
      push.x_row_stride = element_stride(desc->x, 0);
      push.w_offset = static_cast<uint32_t>(binding_remainder(device, w));
      push.w_row_stride = static_cast<uint32_t>(desc->w.strides_bytes[0]);
      push.y_offset = element_remainder(device, desc->y);
      push.y_row_stride = element_stride(desc->y, 0);
      VK_RETURN_IF_ERROR(recording.dispatch(
          ShaderId::kMatmulQDequant, {operand_of(desc->x), w, operand_of(desc->y)}, &push,
          sizeof(push), div_up(n, kDequantTile), div_up(m, kDequantTile)));
      return recording.submit();
    }
    hwinfer_buffer* xq = nullptr;
    VK_RETURN_IF_ERROR(recording.transient(xq_bytes, HWINFER_MEMORY_DEVICE, &xq));
    const Operand xq_operand{xq, 0, xq_bytes};
    QuantizePush quantize{};
    quantize.m = static_cast<uint32_t>(m);
    quantize.blocks = static_cast<uint32_t>(blocks);
    quantize.x_offset = element_remainder(device, desc->x);
    quantize.x_row_stride = element_stride(desc->x, 0);
    VK_RETURN_IF_ERROR(recording.dispatch(ShaderId::kQuantizeQ8, {operand_of(desc->x), xq_operand},
                                          &quantize, sizeof(quantize),
                                          div_up(blocks, kWorkgroupSize), m));
    recording.barrier();
    MatmulQPush push{};
    push.m = static_cast<uint32_t>(m);
    push.n = static_cast<uint32_t>(n);
    push.blocks = static_cast<uint32_t>(blocks);
    push.q4 = desc->w.dtype == HWINFER_DTYPE_Q4_0 ? 1u : 0u;
    push.w_offset = static_cast<uint32_t>(binding_remainder(device, w));
    push.w_row_stride = static_cast<uint32_t>(desc->w.strides_bytes[0]);
    push.y_offset = element_remainder(device, desc->y);
    push.y_row_stride = element_stride(desc->y, 0);
    // A CPU implementation (lavapipe) runs a shader with barriers as coroutines and the GEMV's
    // integer dots there about 20x slower than matmul_q.comp's barrier-free loop
    // (docs/PERFORMANCE.md), so from kCpuDeviceMinRows rows of w on it keeps matmul_q.comp; the
    // results are the same bits either way, and small n still runs the GEMV there (tests).
    const bool cpu_device = device->physical->info.device_type == HWINFER_DEVICE_TYPE_CPU;
    if (!cpu_device || n < kCpuDeviceMinRows) {
      // Same push constants; one workgroup per kGemvRowsPerGroup rows of w.
      VK_RETURN_IF_ERROR(recording.dispatch(ShaderId::kMatmulQGemv,
                                            {xq_operand, w, operand_of(desc->y)}, &push,
                                            sizeof(push), div_up(n, kGemvRowsPerGroup)));
    } else {
      VK_RETURN_IF_ERROR(recording.dispatch(ShaderId::kMatmulQ,
                                            {xq_operand, w, operand_of(desc->y)}, &push,
                                            sizeof(push), div_up(n, kWorkgroupSize), m));
    }
    return recording.submit();
  });
}

}  // namespace hwinfer::vulkan
