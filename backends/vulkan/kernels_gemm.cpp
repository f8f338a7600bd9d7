// kernels_gemm.cpp — the Vulkan backend's gemm, c [m, n] = alpha * a [m, k] @ B + beta * c, B = b
// [k, n] or (b_transposed) b [n, k]: F32 / F16 / BF16 operands in any combination, padded rows,
// fp32 accumulation. Two shaders, chosen here from the descriptor's shapes and strides (and the
// device type, for gemv.comp's lane count), never from buffer contents:
//   * shaders/gemv.comp for decode: b_transposed = 1 (b is [n, k], a weight matrix) and
//     1 <= m <= kGemvMaxM. One group of |lanes| invocations per output column striding along k,
//     every row of a against the same loaded weights, a shared-memory tree reduction. Wide mode
//     (uvec4 loads of b) when b's start, row stride and row length are whole 16-byte units from
//     its binding; scalar loads otherwise.
//   * shaders/gemm.comp for everything else: 16x16 shared-memory tiles (correctness first, not
//     tuned).
// Descriptors are validated by the shared checks (kernels.cpp's check_context); gemm_limits adds
// what the shader cannot run (negative or non-element strides, a non-contiguous innermost
// dimension) as UNSUPPORTED with the reason. Must not read buffer contents on the host.
#include <cinttypes>

#include "hwinfer/kit/dtype_info.h"
#include "hwinfer/kit/kernel_checks.h"
#include "kernel_util.h"

namespace hwinfer::vulkan {

namespace {

constexpr uint64_t kTile = 16;       // TILE of shaders/gemm.comp
constexpr int64_t kGemvMaxM = 8;     // MAX_M of shaders/gemv.comp
constexpr uint64_t kWideBytes = 16;  // gemv.comp's wide loads: one uvec4
// From this n on, a CPU device (lavapipe) runs gemv.comp with 32 lanes (see record_gemv).
constexpr int64_t kCpuDeviceMinColumns = 64;

struct GemmPush {
  uint32_t m, n, k, b_transposed;
  float alpha, beta;
  uint32_t a_offset, a_row_stride, a_dtype;
  uint32_t b_offset, b_row_stride, b_dtype;
  uint32_t c_offset, c_row_stride, c_dtype;
};

// shaders/gemv.comp's push constants (64 bytes).
struct GemvPush {
  uint32_t m, n, k;
  float alpha, beta;
  uint32_t a_offset, a_row_stride, a_dtype;
  uint32_t b_offset, b_row_stride, b_dtype;
  uint32_t c_offset, c_row_stride, c_dtype;
  uint32_t lanes, wide;
};

// The shader's DTYPE_* code.
uint32_t dtype_code(uint32_t dtype) {
  return dtype == HWINFER_DTYPE_F16 ? 1u : dtype == HWINFER_DTYPE_BF16 ? 2u : 0u;
}

hwinfer_error* require_gemm_operand(const hwinfer_tensor_view& view, const char* operand) {
  HWINFER_KIT_RETURN_IF_ERROR(require_non_negative_strides(view, "gemm", operand));
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

// Launches shaders/gemv.comp for |d| (b_transposed, 1 <= m <= kGemvMaxM) on |recording|.
hwinfer_error* record_gemv(Recording& recording, const hwinfer_device* device,
                           const hwinfer_gemm_desc& d) {
  GemvPush push{};
  push.m = static_cast<uint32_t>(d.m);
  push.n = static_cast<uint32_t>(d.n);
  push.k = static_cast<uint32_t>(d.k);
  push.alpha = d.alpha;
  push.beta = d.beta;
  push.a_offset = element_remainder(device, d.a);
  push.a_row_stride = element_stride(d.a, 0);
  push.a_dtype = dtype_code(d.a.dtype);
  push.b_offset = element_remainder(device, d.b);
  push.b_row_stride = element_stride(d.b, 0);
  push.b_dtype = dtype_code(d.b.dtype);
  push.c_offset = element_remainder(device, d.c);
  push.c_row_stride = element_stride(d.c, 0);
  push.c_dtype = dtype_code(d.c.dtype);
  // Wide loads need every row of b to start and end on a 16-byte unit from the binding (a single
  // row's stride does not matter, it is never added).
  const uint64_t b_bytes = backend::dtype_element_bytes(d.b.dtype);
  const uint64_t row_start = binding_remainder(device, operand_of(d.b));
  const auto row_stride = static_cast<uint64_t>(d.b.strides_bytes[0]);
  const bool wide = row_start % kWideBytes == 0 && (d.n == 1 || row_stride % kWideBytes == 0) &&
                    (static_cast<uint64_t>(d.k) * b_bytes) % kWideBytes == 0;
  push.wide = wide ? 1u : 0u;
  // Lanes per column: on a GPU a power of two in [32, 256] leaving each lane at least two loads
  // of the row (more invocations in flight for short rows; untuned until measured on a GPU). A
  // CPU implementation (lavapipe) runs each barrier as a switch through every SIMD slice of the
  // workgroup, so there 32 lanes (8 columns per workgroup, 7 barriers per 8 columns) once n gives
  // its threads enough workgroups: 3-4x faster than 256 lanes on lavapipe (docs/PERFORMANCE.md).
  // Small n keeps the GPU rule, so the conformance suite runs every lane count on lavapipe too.
  const uint64_t loads =
      wide ? static_cast<uint64_t>(d.k) * b_bytes / kWideBytes : static_cast<uint64_t>(d.k);
  const bool cpu_device = device->physical->info.device_type == HWINFER_DEVICE_TYPE_CPU;
  uint32_t lanes = 32;
  if (!cpu_device || d.n < kCpuDeviceMinColumns) {
    while (lanes < kWorkgroupSize && 4 * static_cast<uint64_t>(lanes) <= loads) lanes *= 2;
  }
  push.lanes = lanes;
  const uint64_t columns_per_group = kWorkgroupSize / lanes;
  return recording.dispatch(ShaderId::kGemv, {operand_of(d.a), operand_of(d.b), operand_of(d.c)},
                            &push, sizeof(push),
                            div_up(static_cast<uint64_t>(d.n), columns_per_group));
}

}  // namespace

hwinfer_error* VulkanBackend::limits(const backend::CheckContext& /*context*/,
                                     const hwinfer_gemm_desc& d) {
  HWINFER_KIT_RETURN_IF_ERROR(require_gemm_operand(d.a, "a"));
  HWINFER_KIT_RETURN_IF_ERROR(require_gemm_operand(d.b, "b"));
  return require_gemm_operand(d.c, "c");
}

hwinfer_error* VulkanBackend::enqueue(hwinfer_stream& stream, const hwinfer_gemm_desc& desc) {
  const hwinfer_device* device = stream.device;
  if (desc.b_transposed != 0 && desc.m >= 1 && desc.m <= kGemvMaxM) {
    Recording recording(&stream);
    HWINFER_KIT_RETURN_IF_ERROR(recording.begin("gemm"));
    HWINFER_KIT_RETURN_IF_ERROR(record_gemv(recording, device, desc));
    return recording.submit();
  }
  GemmPush push{};
  push.m = static_cast<uint32_t>(desc.m);
  push.n = static_cast<uint32_t>(desc.n);
  push.k = static_cast<uint32_t>(desc.k);
  push.b_transposed = desc.b_transposed != 0 ? 1u : 0u;
  push.alpha = desc.alpha;
  push.beta = desc.beta;
  push.a_offset = element_remainder(device, desc.a);
  push.a_row_stride = element_stride(desc.a, 0);
  push.a_dtype = dtype_code(desc.a.dtype);
  push.b_offset = element_remainder(device, desc.b);
  push.b_row_stride = element_stride(desc.b, 0);
  push.b_dtype = dtype_code(desc.b.dtype);
  push.c_offset = element_remainder(device, desc.c);
  push.c_row_stride = element_stride(desc.c, 0);
  push.c_dtype = dtype_code(desc.c.dtype);
  Recording recording(&stream);
  HWINFER_KIT_RETURN_IF_ERROR(recording.begin("gemm"));
  HWINFER_KIT_RETURN_IF_ERROR(recording.dispatch(
      ShaderId::kGemm, {operand_of(desc.a), operand_of(desc.b), operand_of(desc.c)}, &push,
      sizeof(push), div_up(static_cast<uint64_t>(desc.n), kTile),
      div_up(static_cast<uint64_t>(desc.m), kTile)));
  return recording.submit();
}

}  // namespace hwinfer::vulkan
