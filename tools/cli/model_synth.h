// tools/cli/model_synth.h — writing a random-weight Llama GGUF file of any shape in
// configs/models, following llama.cpp's GGUF conventions (metadata keys, tensor names, GGML
// layouts, tokenizer metadata with a small built-in vocabulary), so llama.cpp and hwinfer load it
// alike. For benchmarking without downloads: the weights mean nothing.
#pragma once

#include <cstdint>
#include <string>

#include "hwinfer/model_shape.h"
#include "hwinfer/status.h"

namespace hwinfer::cli {

// The weight types of a file: one for the token embedding and the layer matrices, and the
// exceptions llama.cpp's quantization recipes make (Q4_K_M: output.weight, and attn_v / ffn_down
// of the layers its use_more_bits rule picks, in Q6_K).
struct WeightRecipe {
  uint32_t matrices = 1;   // HWINFER_DTYPE_F16
  uint32_t output = 1;     // output.weight
  uint32_t more_bits = 1;  // attn_v and ffn_down of the layers llama.cpp favours
  uint32_t file_type = 1;  // general.file_type (llama.cpp's llama_ftype)
};

struct SynthOptions {
  WeightRecipe weights;
  uint64_t seed = 0;
  // Weights are uniform in [-a, a] with a = std * sqrt(3), so their standard deviation is |std|
  // (0.02 as in the shared tiny-llama files keeps activations finite at any depth we ship).
  double std = 0.02;
  // Every tensor (norms included) all zeros, written as a sparse file: "dummy" weights for
  // measuring shapes too large to generate (vLLM's --load-format dummy). Writes in milliseconds.
  bool zero_weights = false;
};

// Every matrix in |type| (F32, F16, BF16, Q8_0, Q4_0, Q6_K).
WeightRecipe UniformWeights(uint32_t type);

// "f16" -> every matrix F16, "q4_k_m" -> llama.cpp's Q4_K_M mix, ...; InvalidArgument listing the
// accepted names otherwise.
StatusOr<WeightRecipe> ParseWeightType(const std::string& name);

// Writes the model to |path|. Norm weights are F32 ones; the matrices take the recipe's types
// (one type for all, token embedding and output included, as llama.cpp's --pure, except in the
// K-quant mixes). The whole model is generated in memory before
// it is written (the GGUF writer takes every tensor at once), so this needs RAM for the file size.
Status SynthesizeModel(const ModelShape& shape, const SynthOptions& options,
                       const std::string& path);

}  // namespace hwinfer::cli
