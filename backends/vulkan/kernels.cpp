// kernels.cpp — the Vulkan backend's kernel table and kernel_query. Implemented in this step: the
// bandwidth probe (READ by a shader, COPY by vkCmdCopyBuffer, WRITE by vkCmdFillBuffer plus
// byte-exact edge copies), rms_norm (F32, optional fused residual) and silu_mul (F32). Every other
// kernel kind answers UNSUPPORTED "not implemented in the Vulkan backend yet" and its slot is NULL.
//
// Each kernel has one check_* shared by kernel_query (views may lack buffers) and the enqueue slot
// (buffers required), with the CPU backend's INVALID_ARGUMENT cases, so the two never disagree.
// Shaders follow dispatch.h's convention. Must not read buffer contents on the host.
#include <algorithm>
#include <cinttypes>
#include <cmath>

#include "dispatch.h"
#include "view_checks.h"
#include "vk_internal.h"

namespace hwinfer::vulkan {

namespace {

#define VK_RETURN_IF_ERROR(expr)                             \
  do {                                                       \
    if (hwinfer_error* vk_error_ = (expr)) return vk_error_; \
  } while (0)

constexpr uint64_t kWorkgroupSize = 256;  // HWINFER_WORKGROUP_SIZE of shaders/common.glsl

uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// ---- shared checks -----------------------------------------------------------------------------

ViewExpectation expect_matrix(const char* kernel, const char* operand, uint32_t dtype, int64_t rows,
                              int64_t cols, bool is_output) {
  ViewExpectation e;
  e.kernel = kernel;
  e.operand = operand;
  e.dtype = dtype;
  e.rank = 2;
  e.shape[0] = rows;
  e.shape[1] = cols;
  e.shape_names = "[n_tokens, dim]";
  e.contiguous = true;
  e.is_output = is_output;
  return e;
}

// F32 or F16 (as the CPU): a known other dtype is INVALID_ARGUMENT, an unknown one UNSUPPORTED.
hwinfer_error* check_float_dtype(const hwinfer_tensor_view& view, const char* kernel,
                                 const char* operand) {
  if (view.struct_size < sizeof(hwinfer_tensor_view)) return nullptr;  // check_view reports it
  if (view.dtype == HWINFER_DTYPE_F32 || view.dtype == HWINFER_DTYPE_F16) return nullptr;
  const uint32_t code =
      dtype_is_known(view.dtype) ? HWINFER_STATUS_INVALID_ARGUMENT : HWINFER_STATUS_UNSUPPORTED;
  return hwinfer_make_error(code, "vulkan %s: operand %s has dtype %s; expected F32 or F16", kernel,
                            operand, dtype_name(view.dtype).c_str());
}

// Well-formed F16 operands are valid ABI requests this step does not run yet.
hwinfer_error* require_f32(const hwinfer_tensor_view& view, const char* kernel,
                           const char* operand) {
  if (view.dtype == HWINFER_DTYPE_F32) return nullptr;
  return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                            "vulkan %s: operand %s is %s; only F32 is implemented in the Vulkan "
                            "backend yet",
                            kernel, operand, dtype_name(view.dtype).c_str());
}

hwinfer_error* overlap_error(const char* kernel, const char* a, const char* b) {
  return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                            "vulkan %s: operands %s and %s overlap in memory", kernel, a, b);
}

Operand operand_of(const hwinfer_tensor_view& view) {
  return {view.buffer, view.offset_bytes, view_extent_bytes(view)};
}

// The element offset (dispatch convention) of an F32 view.
uint32_t f32_remainder(const hwinfer_device* device, const hwinfer_tensor_view& view) {
  return static_cast<uint32_t>(binding_remainder(device, operand_of(view)) / sizeof(float));
}

uint32_t f32_row_stride(const hwinfer_tensor_view& view) {
  return static_cast<uint32_t>(view.strides_bytes[0] / static_cast<int64_t>(sizeof(float)));
}

// ---- RMSNorm -----------------------------------------------------------------------------------
//   x, out, residual: [n_tokens, dim] F32 | F16 (F32 only implemented);  weight: [dim] F32

hwinfer_error* check_rms_norm(const hwinfer_device* device, const hwinfer_rms_norm_desc& d,
                              bool require_buffers) {
  constexpr const char* kName = "rms_norm";
  VK_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  if (d.n_tokens <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "vulkan rms_norm: n_tokens and dim must be > 0; got n_tokens=%" PRId64
                              " dim=%" PRId64,
                              d.n_tokens, d.dim);
  }
  if (!(d.eps >= 0.0f) || !std::isfinite(d.eps)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "vulkan rms_norm: eps must be finite and >= 0; got %g",
                              static_cast<double>(d.eps));
  }
  const bool has_residual = d.residual.buffer != nullptr;
  VK_RETURN_IF_ERROR(check_float_dtype(d.x, kName, "x"));
  VK_RETURN_IF_ERROR(check_float_dtype(d.out, kName, "out"));
  if (has_residual) VK_RETURN_IF_ERROR(check_float_dtype(d.residual, kName, "residual"));
  VK_RETURN_IF_ERROR(check_view(d.x, expect_matrix(kName, "x", d.x.dtype, d.n_tokens, d.dim, false),
                                device, require_buffers));
  ViewExpectation weight;
  weight.kernel = kName;
  weight.operand = "weight";
  weight.dtype = HWINFER_DTYPE_F32;
  weight.rank = 1;
  weight.shape[0] = d.dim;
  weight.shape_names = "[dim]";
  weight.contiguous = true;
  VK_RETURN_IF_ERROR(check_view(d.weight, weight, device, require_buffers));
  VK_RETURN_IF_ERROR(check_view(d.out,
                                expect_matrix(kName, "out", d.out.dtype, d.n_tokens, d.dim, true),
                                device, require_buffers));
  if (has_residual) {
    VK_RETURN_IF_ERROR(check_view(
        d.residual, expect_matrix(kName, "residual", d.residual.dtype, d.n_tokens, d.dim, true),
        device, true));
  }
  if (views_overlap(d.out, d.x)) return overlap_error(kName, "out", "x");
  if (views_overlap(d.out, d.weight)) return overlap_error(kName, "out", "weight");
  if (has_residual) {
    if (views_overlap(d.out, d.residual)) return overlap_error(kName, "out", "residual");
    if (views_overlap(d.residual, d.x)) return overlap_error(kName, "residual", "x");
    if (views_overlap(d.residual, d.weight)) return overlap_error(kName, "residual", "weight");
  }
  // Well-formed; what this backend cannot run yet:
  VK_RETURN_IF_ERROR(require_f32(d.x, kName, "x"));
  VK_RETURN_IF_ERROR(require_f32(d.out, kName, "out"));
  if (has_residual) VK_RETURN_IF_ERROR(require_f32(d.residual, kName, "residual"));
  VK_RETURN_IF_ERROR(check_non_negative_strides(d.x, kName, "x"));
  VK_RETURN_IF_ERROR(check_non_negative_strides(d.out, kName, "out"));
  if (has_residual) VK_RETURN_IF_ERROR(check_non_negative_strides(d.residual, kName, "residual"));
  return nullptr;
}

struct RmsNormPush {
  uint32_t n_tokens, dim;
  uint32_t x_offset, x_row_stride;
  uint32_t residual_offset, residual_row_stride;
  uint32_t weight_offset;
  uint32_t out_offset, out_row_stride;
  uint32_t has_residual;
  float eps;
};

hwinfer_error* enqueue_rms_norm(hwinfer_stream* stream, const hwinfer_rms_norm_desc* desc) {
  return guarded("rms_norm", [&]() -> hwinfer_error* {
    VK_RETURN_IF_ERROR(require_non_null(stream, "rms_norm: stream"));
    VK_RETURN_IF_ERROR(require_non_null(desc, "rms_norm: desc"));
    const hwinfer_device* device = stream->device;
    VK_RETURN_IF_ERROR(check_rms_norm(device, *desc, true));
    const bool has_residual = desc->residual.buffer != nullptr;
    // Without a residual, binding 1 aliases x (never touched: has_residual = 0).
    const hwinfer_tensor_view& residual = has_residual ? desc->residual : desc->x;
    RmsNormPush push{};
    push.n_tokens = static_cast<uint32_t>(desc->n_tokens);
    push.dim = static_cast<uint32_t>(desc->dim);
    push.x_offset = f32_remainder(device, desc->x);
    push.x_row_stride = f32_row_stride(desc->x);
    push.residual_offset = f32_remainder(device, residual);
    push.residual_row_stride = f32_row_stride(residual);
    push.weight_offset = f32_remainder(device, desc->weight);
    push.out_offset = f32_remainder(device, desc->out);
    push.out_row_stride = f32_row_stride(desc->out);
    push.has_residual = has_residual ? 1u : 0u;
    push.eps = desc->eps;
    Recording recording(stream);
    VK_RETURN_IF_ERROR(recording.begin("rms_norm"));
    VK_RETURN_IF_ERROR(recording.dispatch(ShaderId::kRmsNormF32,
                                          {operand_of(desc->x), operand_of(residual),
                                           operand_of(desc->weight), operand_of(desc->out)},
                                          &push, sizeof(push),
                                          static_cast<uint64_t>(desc->n_tokens)));
    return recording.submit();
  });
}

// ---- SiLU-mul ----------------------------------------------------------------------------------
//   gate, up, out: [n_tokens, dim] F32 | F16 (F32 only implemented)

hwinfer_error* check_silu_mul(const hwinfer_device* device, const hwinfer_silu_mul_desc& d,
                              bool require_buffers) {
  constexpr const char* kName = "silu_mul";
  VK_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  if (d.n_tokens <= 0 || d.dim <= 0) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "vulkan silu_mul: n_tokens and dim must be > 0; got n_tokens=%" PRId64
                              " dim=%" PRId64,
                              d.n_tokens, d.dim);
  }
  VK_RETURN_IF_ERROR(check_float_dtype(d.gate, kName, "gate"));
  VK_RETURN_IF_ERROR(check_float_dtype(d.up, kName, "up"));
  VK_RETURN_IF_ERROR(check_float_dtype(d.out, kName, "out"));
  VK_RETURN_IF_ERROR(
      check_view(d.gate, expect_matrix(kName, "gate", d.gate.dtype, d.n_tokens, d.dim, false),
                 device, require_buffers));
  VK_RETURN_IF_ERROR(check_view(d.up,
                                expect_matrix(kName, "up", d.up.dtype, d.n_tokens, d.dim, false),
                                device, require_buffers));
  VK_RETURN_IF_ERROR(check_view(d.out,
                                expect_matrix(kName, "out", d.out.dtype, d.n_tokens, d.dim, true),
                                device, require_buffers));
  if (views_overlap(d.out, d.gate)) return overlap_error(kName, "out", "gate");
  if (views_overlap(d.out, d.up)) return overlap_error(kName, "out", "up");
  VK_RETURN_IF_ERROR(require_f32(d.gate, kName, "gate"));
  VK_RETURN_IF_ERROR(require_f32(d.up, kName, "up"));
  VK_RETURN_IF_ERROR(require_f32(d.out, kName, "out"));
  VK_RETURN_IF_ERROR(check_non_negative_strides(d.gate, kName, "gate"));
  VK_RETURN_IF_ERROR(check_non_negative_strides(d.up, kName, "up"));
  VK_RETURN_IF_ERROR(check_non_negative_strides(d.out, kName, "out"));
  return nullptr;
}

struct SiluMulPush {
  uint32_t n_tokens, dim;
  uint32_t gate_offset, gate_row_stride;
  uint32_t up_offset, up_row_stride;
  uint32_t out_offset, out_row_stride;
};

hwinfer_error* enqueue_silu_mul(hwinfer_stream* stream, const hwinfer_silu_mul_desc* desc) {
  return guarded("silu_mul", [&]() -> hwinfer_error* {
    VK_RETURN_IF_ERROR(require_non_null(stream, "silu_mul: stream"));
    VK_RETURN_IF_ERROR(require_non_null(desc, "silu_mul: desc"));
    const hwinfer_device* device = stream->device;
    VK_RETURN_IF_ERROR(check_silu_mul(device, *desc, true));
    SiluMulPush push{};
    push.n_tokens = static_cast<uint32_t>(desc->n_tokens);
    push.dim = static_cast<uint32_t>(desc->dim);
    push.gate_offset = f32_remainder(device, desc->gate);
    push.gate_row_stride = f32_row_stride(desc->gate);
    push.up_offset = f32_remainder(device, desc->up);
    push.up_row_stride = f32_row_stride(desc->up);
    push.out_offset = f32_remainder(device, desc->out);
    push.out_row_stride = f32_row_stride(desc->out);
    Recording recording(stream);
    VK_RETURN_IF_ERROR(recording.begin("silu_mul"));
    VK_RETURN_IF_ERROR(recording.dispatch(
        ShaderId::kSiluMulF32,
        {operand_of(desc->gate), operand_of(desc->up), operand_of(desc->out)}, &push, sizeof(push),
        div_up(static_cast<uint64_t>(desc->dim), kWorkgroupSize),
        static_cast<uint64_t>(desc->n_tokens)));
    return recording.submit();
  });
}

// ---- bandwidth probe ---------------------------------------------------------------------------
//   src: [size_bytes] I8 (READ, COPY);  dst: [size_bytes] I8 (COPY, WRITE);  sink: [>= 64] I8
//   (READ). Operands a mode does not use are ignored. All used views must be contiguous.

constexpr int64_t kSinkMinBytes = 64;

hwinfer_error* check_bandwidth_probe(const hwinfer_device* device,
                                     const hwinfer_bandwidth_probe_desc& d, bool require_buffers) {
  constexpr const char* kName = "bandwidth_probe";
  VK_RETURN_IF_ERROR(check_desc_size(d.struct_size, sizeof(d), kName));
  if (d.mode != HWINFER_PROBE_READ && d.mode != HWINFER_PROBE_COPY &&
      d.mode != HWINFER_PROBE_WRITE) {
    return hwinfer_make_error(HWINFER_STATUS_UNSUPPORTED,
                              "vulkan bandwidth_probe: unknown mode %" PRIu32
                              " (the vulkan backend has READ=0, COPY=1, WRITE=2)",
                              d.mode);
  }
  if (d.size_bytes == 0 || d.size_bytes > static_cast<uint64_t>(INT64_MAX)) {
    return hwinfer_make_error(
        HWINFER_STATUS_INVALID_ARGUMENT,
        "vulkan bandwidth_probe: size_bytes must be in [1, 2^63); got %" PRIu64, d.size_bytes);
  }
  const auto size = static_cast<int64_t>(d.size_bytes);
  auto expect_bytes = [&](const char* operand, const char* names, int64_t length, bool output) {
    ViewExpectation e;
    e.kernel = kName;
    e.operand = operand;
    e.dtype = HWINFER_DTYPE_I8;
    e.rank = 1;
    e.shape[0] = length;
    e.shape_names = names;
    e.contiguous = true;
    e.is_output = output;
    return e;
  };
  if (d.mode != HWINFER_PROBE_WRITE) {
    VK_RETURN_IF_ERROR(check_view(d.src, expect_bytes("src", "[size_bytes]", size, false), device,
                                  require_buffers));
  }
  if (d.mode != HWINFER_PROBE_READ) {
    VK_RETURN_IF_ERROR(check_view(d.dst, expect_bytes("dst", "[size_bytes]", size, true), device,
                                  require_buffers));
  }
  if (d.mode == HWINFER_PROBE_READ) {
    const int64_t sink_bytes =
        d.sink.struct_size >= sizeof(hwinfer_tensor_view) && d.sink.rank == 1 ? d.sink.shape[0] : 0;
    VK_RETURN_IF_ERROR(check_view(
        d.sink, expect_bytes("sink", "[>= 64]", std::max(sink_bytes, kSinkMinBytes), true), device,
        require_buffers));
  }
  if (d.mode == HWINFER_PROBE_COPY && views_overlap(d.src, d.dst)) {
    return hwinfer_make_error(HWINFER_STATUS_INVALID_ARGUMENT,
                              "vulkan bandwidth_probe: COPY src and dst overlap in memory");
  }
  return nullptr;
}

struct ProbeReadPush {
  uint32_t first_word;
  uint32_t n_words;
  uint32_t pass;
};

hwinfer_error* record_probe_read(Recording& recording, const hwinfer_device* device,
                                 const hwinfer_bandwidth_probe_desc& d) {
  const DeviceFunctions& fn = recording.fn();
  hwinfer_buffer* scratch = nullptr;
  VK_RETURN_IF_ERROR(recording.transient(kSinkMinBytes, HWINFER_MEMORY_DEVICE, &scratch));
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
    VK_RETURN_IF_ERROR(recording.dispatch(ShaderId::kProbeRead,
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
  VK_RETURN_IF_ERROR(recording.transient(8, HWINFER_MEMORY_DEVICE, &zeros));
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

hwinfer_error* enqueue_bandwidth_probe(hwinfer_stream* stream,
                                       const hwinfer_bandwidth_probe_desc* desc) {
  return guarded("bandwidth_probe", [&]() -> hwinfer_error* {
    VK_RETURN_IF_ERROR(require_non_null(stream, "bandwidth_probe: stream"));
    VK_RETURN_IF_ERROR(require_non_null(desc, "bandwidth_probe: desc"));
    VK_RETURN_IF_ERROR(check_bandwidth_probe(stream->device, *desc, true));
    Recording recording(stream);
    VK_RETURN_IF_ERROR(recording.begin("bandwidth_probe"));
    switch (desc->mode) {
      case HWINFER_PROBE_READ:
        VK_RETURN_IF_ERROR(record_probe_read(recording, stream->device, *desc));
        break;
      case HWINFER_PROBE_COPY:
        record_probe_copy(recording, *desc);
        break;
      default:
        VK_RETURN_IF_ERROR(record_probe_write(recording, *desc));
        break;
    }
    return recording.submit();
  });
}

// ---- kernel_query ------------------------------------------------------------------------------

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

template <typename Desc, typename Check>
hwinfer_error* query_with(hwinfer_device* device, const hwinfer_kernel_desc* desc, const char* name,
                          Check check, hwinfer_kernel_support* out) {
  VK_RETURN_IF_ERROR(check_desc_size(desc->struct_size, sizeof(Desc), name));
  return answer(check(device, *reinterpret_cast<const Desc*>(desc), false), out);
}

const hwinfer_kernel_table kKernelTable = {
    .struct_size = sizeof(hwinfer_kernel_table),
    .reserved0 = 0,
    .gemm = nullptr,
    .matmul_quantized = nullptr,
    .attention_prefill = nullptr,
    .attention_decode_paged = nullptr,
    .kv_append = nullptr,
    .rms_norm = &enqueue_rms_norm,
    .rope = nullptr,
    .silu_mul = &enqueue_silu_mul,
    .embedding = nullptr,
    .bandwidth_probe = &enqueue_bandwidth_probe,
};

}  // namespace

hwinfer_error* kernel_query(hwinfer_device* device, const hwinfer_kernel_desc* desc,
                            hwinfer_kernel_support* out) {
  return guarded("kernel_query", [&]() -> hwinfer_error* {
    VK_RETURN_IF_ERROR(require_non_null(device, "kernel_query: device"));
    VK_RETURN_IF_ERROR(require_non_null(desc, "kernel_query: desc"));
    VK_RETURN_IF_ERROR(require_non_null(out, "kernel_query: out"));
    VK_RETURN_IF_ERROR(
        check_desc_size(desc->struct_size, sizeof(hwinfer_kernel_desc), "kernel_query"));
    switch (desc->kind) {
      case HWINFER_KERNEL_RMS_NORM:
        return query_with<hwinfer_rms_norm_desc>(device, desc, "rms_norm", check_rms_norm, out);
      case HWINFER_KERNEL_SILU_MUL:
        return query_with<hwinfer_silu_mul_desc>(device, desc, "silu_mul", check_silu_mul, out);
      case HWINFER_KERNEL_BANDWIDTH_PROBE:
        return query_with<hwinfer_bandwidth_probe_desc>(device, desc, "bandwidth_probe",
                                                        check_bandwidth_probe, out);
      default:
        break;
    }
    if (const char* name = hwinfer_kernel_kind_name(desc->kind)) {
      hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED,
                          "%s is not implemented in the Vulkan backend yet", name);
    } else {
      hwinfer_set_support(out, HWINFER_KERNEL_UNSUPPORTED,
                          "unknown kernel kind %" PRIu32 " (newer than this vulkan plugin)",
                          desc->kind);
    }
    return nullptr;
  });
}

const hwinfer_kernel_table* kernel_table() { return &kKernelTable; }

}  // namespace hwinfer::vulkan
