// weight_blocks.h — the oracle's view of every block-quantized GGUF weight type of plugin.h:
// dequantization value by value, written from the layout comments in plugin.h (not from any
// kernel), and the activation blocks llama.cpp quantizes x into before its integer dot products
// (Q8_0, Q8_1, Q8_K), so a reference product can follow llama.cpp's arithmetic.
//
// Scalar and slow on purpose; blocks are read byte by byte (no alignment needed).
#ifndef HWINFER_SDK_REFERENCE_WEIGHT_BLOCKS_H_
#define HWINFER_SDK_REFERENCE_WEIGHT_BLOCKS_H_

#include <cstdint>

namespace hwinfer::reference {

// |n| values (a multiple of the dtype's block) of block-quantized |dtype| at |blocks| -> out[n].
// Every value is computed in double and rounded once to float.
void dequantize_blocks(uint32_t dtype, const uint8_t* blocks, int64_t n, float* out);

// How llama.cpp quantizes the activations multiplied with weights of a given type.
enum class ActivationFormat {
  kQ8_0,  // 32 int8, d = max|x| / 127 stored as binary16 (Q4_0, Q5_0, Q8_0, IQ4_NL)
  kQ8_1,  // Q8_0 plus s = d * sum(q) as binary16 (Q4_1, Q5_1: folds the weights' min in)
  kQ8_K,  // 256 int8, f32 d = -max / 127 of the signed value of largest magnitude (K-quants)
};
ActivationFormat activation_format_for(uint32_t weight_dtype);

// One activation block, any format: value t = d * q[t]. For Q8_0/Q8_1 |d| is the binary16 value
// (llama.cpp stores it so) while q was computed with the unrounded scale; |s| is Q8_1's
// binary16 d * sum(q) (0 otherwise). 32 values for Q8_0/Q8_1, 256 for Q8_K.
struct ActivationBlock {
  float d = 0.0f;
  float s = 0.0f;
  int8_t q[256] = {};
};

// Quantizes one block of x (32 or 256 values by |format|) as llama.cpp's reference quantizers:
// Q8_0/Q8_1 round half away from zero, Q8_K rounds half to even and clamps to 127. With
// |binary16_scale| false, Q8_0/Q8_1 keep d (and s) in f32: the same integers, the scale a backend
// that never stores the blocks may keep (the GPU plugins do).
ActivationBlock quantize_activation_block(ActivationFormat format, const float* x,
                                          bool binary16_scale = true);

// Values per block of |format| (32 or 256).
int64_t activation_block_values(ActivationFormat format);

// Test input: |n_blocks| blocks of |dtype| of random bytes (every bit pattern of the quants and
// sub-block scales), each binary16 scale / min field drawn uniformly from +-1/16 (32-value
// blocks) or +-1/2048 (super-blocks), so values stay within about +-8. Deterministic in |seed|.
void fill_random_blocks(uint32_t dtype, int64_t n_blocks, uint64_t seed, uint8_t* out);

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_WEIGHT_BLOCKS_H_
