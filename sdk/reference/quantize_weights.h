// quantize_weights.h — one entry point to every weight quantizer hwinfer writes files with
// (quantize_blocks.h, quantize_k.h): the GGUF bytes of a run of f32 values in a weight type.
#ifndef HWINFER_SDK_REFERENCE_QUANTIZE_WEIGHTS_H_
#define HWINFER_SDK_REFERENCE_QUANTIZE_WEIGHTS_H_

#include <cstdint>
#include <vector>

namespace hwinfer::reference {

// True when quantize_weights writes |type| (F32, F16, BF16 and every block type of plugin.h).
bool can_quantize_weights(uint32_t type);

// |values| (a multiple of the type's block) -> the bytes of |type|; empty when
// !can_quantize_weights(type).
std::vector<uint8_t> quantize_weights(const std::vector<float>& values, uint32_t type);

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_QUANTIZE_WEIGHTS_H_
