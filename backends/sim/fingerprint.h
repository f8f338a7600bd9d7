// fingerprint.h — the sim backend's deterministic pseudo-output (README.md, "Fingerprints").
//
// The simulator computes no numerics. Instead every row of a backed activation carries a 24-bit
// fingerprint in its element 0 (F32: the value itself, exactly representable; F16/BF16: the low
// 16 bits as raw bits), and kernels combine their inputs' row fingerprints along the data flow.
// gemm and matmul_quantized also write one "one-hot" logit (1e30f) per F32 output row, at column
// 1 + fp % (n - 1), so an argmax over a logits row is a deterministic pseudo-token.
//
// Every function touches O(1) elements per row: the host cost of a kernel is O(rows), never
// O(rows x cols). Views must have passed check_operand with a buffer; virtual buffers are skipped
// (reads report false, writes do nothing).
#ifndef HWINFER_BACKENDS_SIM_FINGERPRINT_H_
#define HWINFER_BACKENDS_SIM_FINGERPRINT_H_

#include <cstdint>
#include <vector>

#include "sim_internal.h"

namespace hwinfer::sim {

inline constexpr uint32_t kFingerprintMask = (1u << 24) - 1;

// A 24-bit mix of two values (a 64-bit finaliser, truncated).
uint32_t mix(uint32_t a, uint32_t b);

// The fingerprint of row |row| (index along dimension 0) of |view|; false when the buffer is
// virtual or the dtype carries none (I8, I32, quantized).
bool read_row(const hwinfer_tensor_view& view, int64_t row, uint32_t* fp);
// Writes |fp| into element 0 of row |row| of |view| (F32, F16, BF16 only; else nothing).
void write_row(const hwinfer_tensor_view& view, int64_t row, uint32_t fp);

// Element |index| of a rank-1 I32 view; false when the buffer is virtual.
bool read_int(const hwinfer_tensor_view& view, int64_t index, int32_t* value);
// Every value of a rank-1 or rank-2 I32 view, row-major; false when the buffer is virtual.
bool read_int_array(const hwinfer_tensor_view& view, std::vector<int32_t>* out);

// For row |row| of the rank-2 F32 [rows, n] view |view|: zeroes every one-hot this backend wrote
// earlier inside the row's bytes, then writes 1e30f at column 1 + fp % (n - 1) (n >= 2) and
// remembers it in the buffer's side table.
void write_one_hot(const hwinfer_tensor_view& view, int64_t row, uint32_t fp);

}  // namespace hwinfer::sim

#endif  // HWINFER_BACKENDS_SIM_FINGERPRINT_H_
