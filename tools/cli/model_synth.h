// tools/cli/model_synth.h — writing a random-weight Llama GGUF file of any shape in
// configs/models, following llama.cpp's GGUF conventions (metadata keys, tensor names, GGML
// layouts, tokenizer metadata with a small built-in vocabulary), so llama.cpp and hwinfer load it
// alike. For benchmarking without downloads: the weights mean nothing.
#pragma once

#include <cstdint>
#include <string>

#include "hwinfer/model_shape.h"
#include "hwinfer/status.h"
#include "quant_recipe.h"

namespace hwinfer::cli {

struct SynthOptions {
  QuantRecipe weights;  // the type of each tensor (quant_recipe.h)
  uint64_t seed = 0;
  // Weights are uniform in [-a, a] with a = std * sqrt(3), so their standard deviation is |std|
  // (0.02 as in the shared tiny-llama files keeps activations finite at any depth we ship).
  double std = 0.02;
  // Every tensor (norms included) all zeros, written as a sparse file: "dummy" weights for
  // measuring shapes too large to generate (vLLM's --load-format dummy). Writes in milliseconds.
  bool zero_weights = false;
};

// Writes the model to |path|. Norm weights are F32 ones; the matrices take the recipe's types.
// The whole model is generated in memory before it is written (the GGUF writer takes every tensor
// at once), so this needs RAM for the file size.
Status SynthesizeModel(const ModelShape& shape, const SynthOptions& options,
                       const std::string& path);

}  // namespace hwinfer::cli
