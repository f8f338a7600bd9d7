// quantize_k.h — quantizers for the K-quant weight types (Q2_K .. Q6_K) that `hwinfer model synth`
// and `model quantize` write, in plugin.h's layouts so llama.cpp and hwinfer read the blocks alike.
// Round to nearest with each sub-block's scale (and min) taken from its range, not llama.cpp's
// iterative scale search: somewhat more error (tests/unit/quantize_k_test.cpp measures it against
// llama.cpp's own), which random benchmark weights do not mind. Scalar; |n| a multiple of 256.
#ifndef HWINFER_SDK_REFERENCE_QUANTIZE_K_H_
#define HWINFER_SDK_REFERENCE_QUANTIZE_K_H_

#include <cstdint>

namespace hwinfer::reference {

// |n| values -> n / 256 blocks of the type (plugin.h's byte counts) at |out|.
void quantize_q2_k(const float* x, int64_t n, uint8_t* out);
void quantize_q3_k(const float* x, int64_t n, uint8_t* out);
void quantize_q4_k(const float* x, int64_t n, uint8_t* out);
void quantize_q5_k(const float* x, int64_t n, uint8_t* out);

void quantize_q6_k(const float* x, int64_t n, uint8_t* out);

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_QUANTIZE_K_H_
