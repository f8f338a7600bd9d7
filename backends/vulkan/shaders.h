// shaders.h — the SPIR-V of shaders/*.comp, compiled by glslc at build time and embedded by
// cmake/embed_spirv.cmake (the generated embedded_shaders.cpp in the build tree). Do not edit the
// generated file; add a shader to shader_names in CMakeLists.txt and declare it here.
#ifndef HWINFER_BACKENDS_VULKAN_SHADERS_H_
#define HWINFER_BACKENDS_VULKAN_SHADERS_H_

#include <cstddef>
#include <cstdint>

namespace hwinfer::vulkan::shaders {

extern const uint32_t k_probe_read_spv[];
extern const size_t k_probe_read_spv_words;
extern const uint32_t k_rms_norm_spv[];
extern const size_t k_rms_norm_spv_words;
extern const uint32_t k_silu_mul_spv[];
extern const size_t k_silu_mul_spv_words;
extern const uint32_t k_embedding_spv[];
extern const size_t k_embedding_spv_words;
extern const uint32_t k_rope_spv[];
extern const size_t k_rope_spv_words;
extern const uint32_t k_gemm_spv[];
extern const size_t k_gemm_spv_words;
extern const uint32_t k_kv_append_spv[];
extern const size_t k_kv_append_spv_words;
extern const uint32_t k_quantize_q8_spv[];
extern const size_t k_quantize_q8_spv_words;
extern const uint32_t k_matmul_q_spv[];
extern const size_t k_matmul_q_spv_words;
extern const uint32_t k_attention_decode_spv[];
extern const size_t k_attention_decode_spv_words;
extern const uint32_t k_attention_reduce_spv[];
extern const size_t k_attention_reduce_spv_words;
extern const uint32_t k_attention_prefill_spv[];
extern const size_t k_attention_prefill_spv_words;
extern const uint32_t k_matmul_q_dequant_spv[];
extern const size_t k_matmul_q_dequant_spv_words;
extern const uint32_t k_gemv_spv[];
extern const size_t k_gemv_spv_words;
extern const uint32_t k_matmul_q_gemv_spv[];
extern const size_t k_matmul_q_gemv_spv_words;

}  // namespace hwinfer::vulkan::shaders

#endif  // HWINFER_BACKENDS_VULKAN_SHADERS_H_
