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

struct SynthOptions {
  uint32_t weight_type = 0;  // HWINFER_DTYPE_F16 | BF16 | Q8_0 | Q4_0 (F32 also accepted)
  uint64_t seed = 0;
  // Weights are uniform in [-a, a] with a = std * sqrt(3), so their standard deviation is |std|
  // (0.02 as in the shared tiny-llama files keeps activations finite at any depth we ship).
  double std = 0.02;
  // Every tensor (norms included) all zeros, written as a sparse file: "dummy" weights for
  // measuring shapes too large to generate (vLLM's --load-format dummy). Writes in milliseconds.
  bool zero_weights = false;
};

// "f16" -> HWINFER_DTYPE_F16, ...; InvalidArgument listing the accepted names otherwise.
StatusOr<uint32_t> ParseWeightType(const std::string& name);

// Writes the model to |path|. Norm weights are F32 ones; every matrix (token embedding and output
// included, as llama.cpp's --pure) is |weight_type|. The whole model is generated in memory before
// it is written (the GGUF writer takes every tensor at once), so this needs RAM for the file size.
Status SynthesizeModel(const ModelShape& shape, const SynthOptions& options,
                       const std::string& path);

}  // namespace hwinfer::cli
