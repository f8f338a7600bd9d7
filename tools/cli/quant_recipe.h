// quant_recipe.h — llama.cpp's quantization recipes ("q4_k_m", "q3_k_m", ...): the weight type
// each tensor of a Llama model gets, as llama.cpp's quantize tool picks it for the dense Llama
// architecture without an importance matrix (most matrices in the recipe's base type,
// output.weight in Q6_K, attn_v / ffn_down / attn_output a step up in some layers, and a fallback
// for rows that are not whole 256-value super-blocks). Shared by `model synth` and `model
// quantize`; tests/unit/quant_recipe_test.cpp holds it to the files llama.cpp's tool wrote.
#pragma once

#include <cstdint>
#include <string>

#include "hwinfer/model_shape.h"
#include "hwinfer/status.h"

namespace hwinfer::cli {

struct QuantRecipe {
  std::string name = "f16";  // as ParseQuantRecipe takes it
  uint32_t base = 1;         // HWINFER_DTYPE_F16: the type of most matrices
  uint32_t file_type = 1;    // general.file_type (llama.cpp's llama_ftype)
  bool pure = false;         // every matrix in |base| (llama.cpp's quantize --pure)
};

// What a 2-D weight tensor is for, from its GGUF name.
enum class TensorRole {
  kTokenEmbedding,
  kOutput,
  kAttnQ,
  kAttnK,
  kAttnV,
  kAttnOutput,
  kFfnGate,
  kFfnUp,
  kFfnDown,
  kOther,
};

// "q4_k_m" -> Q4_K with llama.cpp's Q4_K_M exceptions, ...; InvalidArgument listing the names
// (QuantRecipeNames) otherwise.
StatusOr<QuantRecipe> ParseQuantRecipe(const std::string& name, bool pure = false);
const char* QuantRecipeNames();

// Every matrix in |type| (F32, F16, BF16 or any block type with a quantizer).
QuantRecipe PureRecipe(uint32_t type);

// The role of tensor |name| ("blk.3.attn_v.weight" -> kAttnV with *layer = 3; -1 outside layers).
TensorRole RoleOf(const std::string& name, int64_t* layer);

// The type of a matrix of |role| in |layer| whose rows hold |row_length| values.
uint32_t RecipeTensorType(const QuantRecipe& recipe, const ModelShape& shape, TensorRole role,
                          int64_t layer, uint64_t row_length);

}  // namespace hwinfer::cli
