// kernels_quant.cpp — the Vulkan backend's matmul_quantized, y [m, n] F32 = x [m, k] F32 @ w^T,
// w [n, k] GGUF blocks of any type of plugin.h (rows at any byte offset and stride), on the same
// two paths (the CPU backend, backends/cpu/matmul_quantized.h, takes the first for Q8_0 / Q4_0 at
// every m and for the other types up to m = 64, as llama.cpp's CPU backend quantizes x; here, as
// in llama.cpp's GPU backends, m > 8 dequantizes the weights instead):
//   m <= kGemvMaxM (decode): x is quantized to 8-bit blocks as llama.cpp quantizes it for the
//     weight type (Q8_0, Q8_1 or Q8_K; f32 scales):
//     Q8_0 / Q4_0 weights: shaders/quantize_q8.comp (bit for bit the CPU backend's rule: d = amax
//       / 127, q = lround(x / d)) into a scratch buffer, then the integer dot product of each
//       block, summing d_w * d_x * dot in block order as the CPU backend's portable decode kernels
//       do: shaders/matmul_q_gemv.comp with 32 invocations per row of w (parallel weight reads and
//       integer dots, the float sum kept sequential in block order, so y is bit for bit what
//       matmul_q.comp writes), or shaders/matmul_q.comp with one invocation per y element (a CPU
//       implementation keeps it for n >= 64).
//     the other types: shaders/quantize_x.comp writes x quantized and dequantized again (f32),
//       then shaders/matmul_qf_gemv.comp (one variant per type; 32 invocations per row of w) sums
//       it against the dequantized weights in f32: llama.cpp's integer-dot result up to f32
//       rounding; on a CPU device from 64 rows shaders/matmul_qf_rows.comp (one invocation per
//       row, no barriers) instead.
//   larger m (prefill): x stays exact; shaders/matmul_q_dequant.comp (one variant per type)
//     dequantizes the weights as it loads them into the tiles of an F32 GEMM.
// Correctness first; only the Q8_0 / Q4_0 decode GEMV is shaped for GPUs.
#include <cinttypes>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"

namespace hwinfer::vulkan {

namespace {

constexpr uint64_t kXqBlockWords = 9;  // d + 32 int8 (quantize_q8.comp)
// The largest m that quantizes x: MAX_M of shaders/matmul_q_gemv.comp.
constexpr uint64_t kGemvMaxM = 8;
constexpr uint64_t kGemvRowsPerGroup = 8;   // SEGMENTS of shaders/matmul_q{,f}_gemv.comp
constexpr uint64_t kCpuDeviceMinRows = 64;  // see prefers_barrier_free_rows

struct QuantizePush {
  uint32_t m, blocks;
  uint32_t x_offset, x_row_stride;
};

constexpr uint64_t kDequantTile = 16;  // TILE of shaders/matmul_q_dequant.comp

struct DequantPush {
  uint32_t m, n, k;
  uint32_t x_offset, x_row_stride;
  uint32_t w_offset, w_row_stride;
  uint32_t y_offset, y_row_stride;
};

struct QuantizeXPush {
  uint32_t m, k, super_blocks;
  uint32_t x_offset, x_row_stride;
};

struct MatmulQfPush {
  uint32_t m, n, k;
  uint32_t w_offset, w_row_stride;
  uint32_t y_offset, y_row_stride;
};

struct MatmulQPush {
  uint32_t m, n, blocks, q4;
  uint32_t w_offset, w_row_stride;
  uint32_t y_offset, y_row_stride;
};

hwinfer_error* require_f32_words(const hwinfer_tensor_view& view, const char* operand) {
  HWINFER_KIT_RETURN_IF_ERROR(require_non_negative_strides(view, "matmul_quantized", operand));
  if (view.offset_bytes % 4 != 0 || view.strides_bytes[0] % 4 != 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan matmul_quantized: operand %s has an offset or row stride "
                              "that is not a whole number of F32 elements",
                              operand);
  }
  return nullptr;
}

}  // namespace

hwinfer_error* VulkanBackend::limits(const backend::CheckContext& /*context*/,
                                     const hwinfer_matmul_quantized_desc& d) {
  HWINFER_KIT_RETURN_IF_ERROR(require_f32_words(d.x, "x"));
  HWINFER_KIT_RETURN_IF_ERROR(require_f32_words(d.y, "y"));
  if (d.w.strides_bytes[0] < 0) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan matmul_quantized: w has a negative row stride (the shader "
                              "indexes with unsigned offsets)");
  }
  return nullptr;
}

namespace {

// The bytes of w the shaders may touch, from its view's offset.
Operand weight_operand(const hwinfer_matmul_quantized_desc& d) {
  const uint64_t row_bytes = static_cast<uint64_t>(d.k) / hwinfer_dtype_block_values(d.w.dtype) *
                             hwinfer_dtype_block_bytes(d.w.dtype);
  return {d.w.buffer, d.w.offset_bytes,
          static_cast<uint64_t>(d.n - 1) * static_cast<uint64_t>(d.w.strides_bytes[0]) + row_bytes};
}

// Whether a decode GEMV over |n| rows of w should run one row per invocation without barriers:
// a CPU implementation (lavapipe) runs a shader with barriers as coroutines and the GEMVs there
// about 20x slower than a barrier-free loop (docs/PERFORMANCE.md), so from kCpuDeviceMinRows rows
// on it takes the loop; the results are the same bits either way, and small n still runs the
// GEMV there (tests).
bool prefers_barrier_free_rows(const hwinfer_device* device, uint64_t n) {
  return device->physical->info.device_type == HWINFER_DEVICE_TYPE_CPU && n >= kCpuDeviceMinRows;
}

// Prefill: x exact, the weights dequantized into the tiles of an F32 GEMM.
hwinfer_error* record_dequant_gemm(Recording& recording, const hwinfer_device* device,
                                   const hwinfer_matmul_quantized_desc& d) {
  const Operand w = weight_operand(d);
  DequantPush push{};
  push.m = static_cast<uint32_t>(d.m);
  push.n = static_cast<uint32_t>(d.n);
  push.k = static_cast<uint32_t>(d.k);
  push.x_offset = element_remainder(device, d.x);
  push.x_row_stride = element_stride(d.x, 0);
  push.w_offset = static_cast<uint32_t>(binding_remainder(device, w));
  push.w_row_stride = static_cast<uint32_t>(d.w.strides_bytes[0]);
  push.y_offset = element_remainder(device, d.y);
  push.y_row_stride = element_stride(d.y, 0);
  return recording.dispatch(weight_shader(WeightShaderFamily::kMatmulQDequant, d.w.dtype),
                            {operand_of(d.x), w, operand_of(d.y)}, &push, sizeof(push),
                            div_up(static_cast<uint64_t>(d.n), kDequantTile),
                            div_up(static_cast<uint64_t>(d.m), kDequantTile));
}

// Decode for Q8_0 / Q4_0: x into quantize_q8.comp's blocks, then integer dots per block.
hwinfer_error* record_q8_q4_decode(Recording& recording, const hwinfer_device* device,
                                   const hwinfer_matmul_quantized_desc& d) {
  const auto m = static_cast<uint64_t>(d.m);
  const auto n = static_cast<uint64_t>(d.n);
  const uint64_t blocks = static_cast<uint64_t>(d.k) / 32;
  const uint64_t xq_bytes = m * blocks * kXqBlockWords * 4;
  const Operand w = weight_operand(d);
  hwinfer_buffer* xq = nullptr;
  HWINFER_KIT_RETURN_IF_ERROR(recording.transient(xq_bytes, HWINFER_MEMORY_DEVICE, &xq));
  const Operand xq_operand{xq, 0, xq_bytes};
  QuantizePush quantize{};
  quantize.m = static_cast<uint32_t>(m);
  quantize.blocks = static_cast<uint32_t>(blocks);
  quantize.x_offset = element_remainder(device, d.x);
  quantize.x_row_stride = element_stride(d.x, 0);
  HWINFER_KIT_RETURN_IF_ERROR(
      recording.dispatch(ShaderId::kQuantizeQ8, {operand_of(d.x), xq_operand}, &quantize,
                         sizeof(quantize), div_up(blocks, kWorkgroupSize), m));
  recording.barrier();
  MatmulQPush push{};
  push.m = static_cast<uint32_t>(m);
  push.n = static_cast<uint32_t>(n);
  push.blocks = static_cast<uint32_t>(blocks);
  push.q4 = d.w.dtype == HWINFER_DTYPE_Q4_0 ? 1u : 0u;
  push.w_offset = static_cast<uint32_t>(binding_remainder(device, w));
  push.w_row_stride = static_cast<uint32_t>(d.w.strides_bytes[0]);
  push.y_offset = element_remainder(device, d.y);
  push.y_row_stride = element_stride(d.y, 0);
  if (!prefers_barrier_free_rows(device, n)) {
    // Same push constants; one workgroup per kGemvRowsPerGroup rows of w.
    return recording.dispatch(ShaderId::kMatmulQGemv, {xq_operand, w, operand_of(d.y)}, &push,
                              sizeof(push), div_up(n, kGemvRowsPerGroup));
  }
  return recording.dispatch(ShaderId::kMatmulQ, {xq_operand, w, operand_of(d.y)}, &push,
                            sizeof(push), div_up(n, kWorkgroupSize), m);
}

// Decode for the other types: x quantized and dequantized again (f32), then an f32 GEMV against
// the dequantized weights.
hwinfer_error* record_qf_decode(Recording& recording, const hwinfer_device* device,
                                const hwinfer_matmul_quantized_desc& d) {
  const auto m = static_cast<uint64_t>(d.m);
  const auto k = static_cast<uint64_t>(d.k);
  const bool super_blocks = hwinfer_dtype_block_values(d.w.dtype) == 256;
  const uint64_t xq_bytes = m * k * 4;
  const Operand w = weight_operand(d);
  hwinfer_buffer* xq = nullptr;
  HWINFER_KIT_RETURN_IF_ERROR(recording.transient(xq_bytes, HWINFER_MEMORY_DEVICE, &xq));
  const Operand xq_operand{xq, 0, xq_bytes};
  QuantizeXPush quantize{};
  quantize.m = static_cast<uint32_t>(m);
  quantize.k = static_cast<uint32_t>(k);
  quantize.super_blocks = super_blocks ? 1u : 0u;
  quantize.x_offset = element_remainder(device, d.x);
  quantize.x_row_stride = element_stride(d.x, 0);
  HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(
      ShaderId::kQuantizeX, {operand_of(d.x), xq_operand}, &quantize, sizeof(quantize),
      div_up(k / (super_blocks ? 256 : 32), kWorkgroupSize), m));
  recording.barrier();
  MatmulQfPush push{};
  push.m = static_cast<uint32_t>(m);
  push.n = static_cast<uint32_t>(d.n);
  push.k = static_cast<uint32_t>(k);
  push.w_offset = static_cast<uint32_t>(binding_remainder(device, w));
  push.w_row_stride = static_cast<uint32_t>(d.w.strides_bytes[0]);
  push.y_offset = element_remainder(device, d.y);
  push.y_row_stride = element_stride(d.y, 0);
  const auto n = static_cast<uint64_t>(d.n);
  if (prefers_barrier_free_rows(device, n)) {
    return recording.dispatch(weight_shader(WeightShaderFamily::kMatmulQfRows, d.w.dtype),
                              {xq_operand, w, operand_of(d.y)}, &push, sizeof(push),
                              div_up(n, kWorkgroupSize));
  }
  return recording.dispatch(weight_shader(WeightShaderFamily::kMatmulQfGemv, d.w.dtype),
                            {xq_operand, w, operand_of(d.y)}, &push, sizeof(push),
                            div_up(n, kGemvRowsPerGroup));
}

}  // namespace

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream,
                                      const hwinfer_matmul_quantized_desc& desc) {
  const hwinfer_device* device = stream.device;
  if (desc.m == 0 || desc.n == 0) return nullptr;
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("matmul_quantized"));
  const uint32_t dtype = desc.w.dtype;
  if (static_cast<uint64_t>(desc.m) > kGemvMaxM) {
    HWINFER_KIT_RETURN_IF_ERROR(record_dequant_gemm(recording, device, desc));
  } else if (dtype == HWINFER_DTYPE_Q8_0 || dtype == HWINFER_DTYPE_Q4_0) {
    HWINFER_KIT_RETURN_IF_ERROR(record_q8_q4_decode(recording, device, desc));
  } else {
    HWINFER_KIT_RETURN_IF_ERROR(record_qf_decode(recording, device, desc));
  }
  return recording.submit();
}

}  // namespace hwinfer::vulkan
