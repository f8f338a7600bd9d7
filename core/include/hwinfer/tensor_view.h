// hwinfer/tensor_view.h — building hwinfer_tensor_view values (the ABI's strided views).
//
// Helpers only: they fill the plain C struct and compute contiguous byte strides, with block-size
// rules for quantized dtypes. They allocate nothing and check nothing about the buffer's size
// beyond what ViewBytes reports.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "hwinfer/device.h"
#include "hwinfer/plugin.h"

namespace hwinfer {

// Bytes of one element for plain dtypes (F32 4, F16/BF16 2, I8 1, I32 4); 0 for block dtypes.
uint32_t DtypeElementBytes(uint32_t dtype);
// Values per block (32 for Q8_0/Q4_0, 1 for plain dtypes) and bytes per block.
uint32_t DtypeBlockValues(uint32_t dtype);
uint32_t DtypeBlockBytes(uint32_t dtype);
// "f32", "q4_0", ... ("unknown" otherwise)
const char* DtypeName(uint32_t dtype);

// Bytes that |n_values| innermost values of |dtype| occupy (n_values a multiple of the block).
uint64_t RowBytes(uint32_t dtype, int64_t n_values);

// A contiguous row-major view of |shape| (outermost first) at |offset_bytes| in |buffer|.
hwinfer_tensor_view ContiguousView(const Buffer& buffer, uint64_t offset_bytes, uint32_t dtype,
                                   std::initializer_list<int64_t> shape);
// The same with a raw handle (NULL allowed: an absent optional operand).
hwinfer_tensor_view ContiguousView(hwinfer_buffer* buffer, uint64_t offset_bytes, uint32_t dtype,
                                   std::initializer_list<int64_t> shape);

// An absent optional operand (buffer NULL).
hwinfer_tensor_view NoView();

// One past the last byte the view touches, relative to the buffer start.
uint64_t ViewEndBytes(const hwinfer_tensor_view& view);

// F32, F16 or BF16: weights a gemm takes as they are (the others are block-quantized).
bool IsPlainFloatDtype(uint32_t dtype);

// y [m, n] = x [m, k] w^T, w [n, k], as the runtime launches it for w's dtype: gemm with
// b_transposed for F32/F16/BF16 weights, matmul_quantized for the block types. m = x.shape[0],
// n = w.shape[0], k = w.shape[1]; desc() is the descriptor that applies.
struct WeightMatmul {
  hwinfer_gemm_desc gemm;
  hwinfer_matmul_quantized_desc quantized;
  bool is_gemm = false;
  const hwinfer_kernel_desc& desc() const {
    return is_gemm ? AsKernelDesc(gemm) : AsKernelDesc(quantized);
  }
};
WeightMatmul MakeWeightMatmul(const hwinfer_tensor_view& x, const hwinfer_tensor_view& w,
                              const hwinfer_tensor_view& y);

}  // namespace hwinfer
