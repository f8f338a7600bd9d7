// quantize_k.h — quantizers for the K-quant weight types that `hwinfer model synth` writes
// (Q4_K and Q6_K, the types of llama.cpp's Q4_K_M and Q6_K recipes), in plugin.h's layouts so
// llama.cpp and hwinfer read the blocks alike. Round to nearest with each sub-block's scale (and
// min) taken from its range, not llama.cpp's iterative scale search: a few percent more error,
// which random benchmark weights do not mind. Scalar; |n| a multiple of 256.
#ifndef HWINFER_BACKENDS_CPU_REFERENCE_QUANTIZE_K_H_
#define HWINFER_BACKENDS_CPU_REFERENCE_QUANTIZE_K_H_

#include <cstdint>

namespace hwinfer::reference {

// |n| values -> n / 256 Q4_K blocks (144 bytes each) at |out|.
void quantize_q4_k(const float* x, int64_t n, uint8_t* out);

// |n| values -> n / 256 Q6_K blocks (210 bytes each) at |out|.
void quantize_q6_k(const float* x, int64_t n, uint8_t* out);

}  // namespace hwinfer::reference

#endif  // HWINFER_BACKENDS_CPU_REFERENCE_QUANTIZE_K_H_
