// tensor_view.cpp — dtype sizes and contiguous hwinfer_tensor_view construction. Pure arithmetic:
// no allocation, no device calls.
#include "hwinfer/tensor_view.h"

#include <cstring>

namespace hwinfer {

uint32_t DtypeElementBytes(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F32:
      return 4;
    case HWINFER_DTYPE_F16:
      return 2;
    case HWINFER_DTYPE_BF16:
      return 2;
    case HWINFER_DTYPE_I8:
      return 1;
    case HWINFER_DTYPE_I32:
      return 4;
    default:
      return 0;
  }
}

uint32_t DtypeBlockValues(uint32_t dtype) {
  const uint32_t values = hwinfer_dtype_block_values(dtype);
  return values != 0 ? values : 1;
}

uint32_t DtypeBlockBytes(uint32_t dtype) {
  const uint32_t bytes = hwinfer_dtype_block_bytes(dtype);
  return bytes != 0 ? bytes : DtypeElementBytes(dtype);
}

const char* DtypeName(uint32_t dtype) {
  switch (dtype) {
    case HWINFER_DTYPE_F32:
      return "f32";
    case HWINFER_DTYPE_F16:
      return "f16";
    case HWINFER_DTYPE_BF16:
      return "bf16";
    case HWINFER_DTYPE_Q8_0:
      return "q8_0";
    case HWINFER_DTYPE_Q4_0:
      return "q4_0";
    case HWINFER_DTYPE_Q4_1:
      return "q4_1";
    case HWINFER_DTYPE_Q5_0:
      return "q5_0";
    case HWINFER_DTYPE_Q5_1:
      return "q5_1";
    case HWINFER_DTYPE_IQ4_NL:
      return "iq4_nl";
    case HWINFER_DTYPE_Q2_K:
      return "q2_k";
    case HWINFER_DTYPE_Q3_K:
      return "q3_k";
    case HWINFER_DTYPE_Q4_K:
      return "q4_k";
    case HWINFER_DTYPE_Q5_K:
      return "q5_k";
    case HWINFER_DTYPE_Q6_K:
      return "q6_k";
    case HWINFER_DTYPE_I8:
      return "i8";
    case HWINFER_DTYPE_I32:
      return "i32";
    default:
      return "unknown";
  }
}

uint64_t RowBytes(uint32_t dtype, int64_t n_values) {
  const uint64_t blocks = static_cast<uint64_t>(n_values) / DtypeBlockValues(dtype);
  return blocks * DtypeBlockBytes(dtype);
}

hwinfer_tensor_view ContiguousView(hwinfer_buffer* buffer, uint64_t offset_bytes, uint32_t dtype,
                                   std::initializer_list<int64_t> shape) {
  hwinfer_tensor_view view = NoView();
  view.dtype = dtype;
  view.buffer = buffer;
  view.offset_bytes = offset_bytes;
  view.rank =
      static_cast<uint32_t>(shape.size() > HWINFER_MAX_RANK ? HWINFER_MAX_RANK : shape.size());
  uint32_t i = 0;
  for (int64_t dim : shape) {
    if (i == view.rank) break;
    view.shape[i++] = dim;
  }
  if (view.rank == 0) return view;
  const bool blocked = DtypeBlockValues(dtype) > 1;
  int64_t stride = static_cast<int64_t>(RowBytes(dtype, view.shape[view.rank - 1]));
  view.strides_bytes[view.rank - 1] = blocked ? 0 : DtypeElementBytes(dtype);
  for (int d = static_cast<int>(view.rank) - 2; d >= 0; --d) {
    view.strides_bytes[d] = stride;
    stride *= view.shape[d];
  }
  return view;
}

hwinfer_tensor_view ContiguousView(const Buffer& buffer, uint64_t offset_bytes, uint32_t dtype,
                                   std::initializer_list<int64_t> shape) {
  return ContiguousView(buffer.handle(), offset_bytes, dtype, shape);
}

hwinfer_tensor_view NoView() {
  hwinfer_tensor_view view;
  std::memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);
  return view;
}

uint64_t ViewEndBytes(const hwinfer_tensor_view& view) {
  if (view.rank == 0) return view.offset_bytes;
  uint64_t end = view.offset_bytes;
  for (uint32_t d = 0; d + 1 < view.rank; ++d) {
    if (view.shape[d] <= 0) return view.offset_bytes;
    end += static_cast<uint64_t>(view.shape[d] - 1) * static_cast<uint64_t>(view.strides_bytes[d]);
  }
  const int64_t inner = view.shape[view.rank - 1];
  if (inner <= 0) return view.offset_bytes;
  if (DtypeBlockValues(view.dtype) > 1) return end + RowBytes(view.dtype, inner);
  return end +
         static_cast<uint64_t>(inner - 1) *
             static_cast<uint64_t>(view.strides_bytes[view.rank - 1]) +
         DtypeElementBytes(view.dtype);
}

bool IsPlainFloatDtype(uint32_t dtype) {
  return dtype == HWINFER_DTYPE_F32 || dtype == HWINFER_DTYPE_F16 || dtype == HWINFER_DTYPE_BF16;
}

WeightMatmul MakeWeightMatmul(const hwinfer_tensor_view& x, const hwinfer_tensor_view& w,
                              const hwinfer_tensor_view& y) {
  WeightMatmul out;
  std::memset(&out.gemm, 0, sizeof(out.gemm));
  std::memset(&out.quantized, 0, sizeof(out.quantized));
  out.is_gemm = IsPlainFloatDtype(w.dtype);
  const int64_t m = x.shape[0], n = w.shape[0], k = w.shape[1];
  if (out.is_gemm) {
    hwinfer_gemm_desc& d = out.gemm;
    d.struct_size = sizeof(d);
    d.kind = HWINFER_KERNEL_GEMM;
    d.m = m;
    d.n = n;
    d.k = k;
    d.b_transposed = 1;
    d.alpha = 1.0f;
    d.beta = 0.0f;
    d.a = x;
    d.b = w;
    d.c = y;
  } else {
    hwinfer_matmul_quantized_desc& d = out.quantized;
    d.struct_size = sizeof(d);
    d.kind = HWINFER_KERNEL_MATMUL_QUANTIZED;
    d.m = m;
    d.n = n;
    d.k = k;
    d.x = x;
    d.w = w;
    d.y = y;
  }
  return out;
}

}  // namespace hwinfer
