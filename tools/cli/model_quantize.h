// model_quantize.h — `hwinfer model quantize IN.gguf OUT.gguf --type T`: a Llama GGUF model with
// F32 / F16 / BF16 weights rewritten in one of llama.cpp's recipes (quant_recipe.h), with the same
// quantizers `model synth` uses; metadata and the norm vectors are copied unchanged.
#pragma once

#include <cstdint>
#include <string>

#include "hwinfer/status.h"
#include "quant_recipe.h"

namespace hwinfer::cli {

struct QuantizeSummary {
  int64_t tensors_quantized = 0;
  uint64_t bytes_in = 0;   // tensor data
  uint64_t bytes_out = 0;  // tensor data
};

// Reads |in| (mapped), writes |out| through a temporary file renamed into place, so a failure
// leaves no partial |out|. Errors name the file and tensor: a weight already quantized, rows that
// hold no whole blocks of the chosen type, |out| being |in|.
StatusOr<QuantizeSummary> QuantizeModel(const std::string& in, const std::string& out,
                                        const QuantRecipe& recipe);

}  // namespace hwinfer::cli
