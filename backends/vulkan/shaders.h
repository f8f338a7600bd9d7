// shaders.h — the SPIR-V of shaders/*.comp, compiled by glslc at build time and embedded by
// cmake/embed_spirv.cmake (the generated embedded_shaders.cpp in the build tree). Do not edit the
// generated file; add a shader to shader_names in CMakeLists.txt and declare it here. Shaders
// compiled once per weight type (weight_shader_families in CMakeLists.txt) are reached through
// k_weight_shaders instead.
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
extern const uint32_t k_quantize_x_spv[];
extern const size_t k_quantize_x_spv_words;
extern const uint32_t k_gemv_spv[];
extern const size_t k_gemv_spv_words;
extern const uint32_t k_matmul_q_gemv_spv[];
extern const size_t k_matmul_q_gemv_spv_words;

// One per-weight-type variant: |family| is its index in weight_shader_families (WeightShaderFamily
// of dispatch.h), |dtype| the HWINFER_DTYPE_* it was compiled for.
struct WeightShaderSpirv {
  uint32_t family;
  uint32_t dtype;
  const uint32_t* code;
  size_t words;
};
extern const WeightShaderSpirv k_weight_shaders[];
extern const size_t k_weight_shader_count;

}  // namespace hwinfer::vulkan::shaders

#endif  // HWINFER_BACKENDS_VULKAN_SHADERS_H_
