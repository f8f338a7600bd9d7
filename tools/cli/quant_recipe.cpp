// quant_recipe.cpp — see quant_recipe.h. The rules follow llama.cpp's llama_tensor_get_type
// (src/llama-quant.cpp) for the recipes listed in kRecipes, read from its behaviour on the files in
// tests/data/gguf-quant-mixes and its documented rules; no code of it is used.
#include "quant_recipe.h"

#include <cstring>

#include "hwinfer/gguf.h"
#include "hwinfer/plugin.h"

namespace hwinfer::cli {
namespace {

struct RecipeEntry {
  const char* name;
  uint32_t base;
  uint32_t file_type;  // llama_ftype
};

constexpr RecipeEntry kRecipes[] = {
    {"f32", HWINFER_DTYPE_F32, 0},        {"f16", HWINFER_DTYPE_F16, 1},
    {"bf16", HWINFER_DTYPE_BF16, 32},     {"q8_0", HWINFER_DTYPE_Q8_0, 7},
    {"q6_k", HWINFER_DTYPE_Q6_K, 18},     {"q5_k_m", HWINFER_DTYPE_Q5_K, 17},
    {"q5_1", HWINFER_DTYPE_Q5_1, 9},      {"q5_0", HWINFER_DTYPE_Q5_0, 8},
    {"q4_k_m", HWINFER_DTYPE_Q4_K, 15},   {"q4_k_s", HWINFER_DTYPE_Q4_K, 14},
    {"q4_1", HWINFER_DTYPE_Q4_1, 3},      {"q4_0", HWINFER_DTYPE_Q4_0, 2},
    {"iq4_nl", HWINFER_DTYPE_IQ4_NL, 25}, {"q3_k_m", HWINFER_DTYPE_Q3_K, 12},
    {"q2_k", HWINFER_DTYPE_Q2_K, 10},
};

bool Is(const QuantRecipe& recipe, const char* name) { return recipe.name == name; }

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool UsesMoreBits(int64_t layer, int64_t n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

uint32_t AttnVType(const QuantRecipe& r, const ModelShape& shape, int64_t layer) {
  const int64_t gqa = shape.n_kv_heads > 0 ? shape.n_heads / shape.n_kv_heads : 1;
  uint32_t type = r.base;
  if (Is(r, "q2_k")) type = gqa >= 4 ? HWINFER_DTYPE_Q4_K : HWINFER_DTYPE_Q3_K;
  if (Is(r, "q3_k_m")) type = layer < 2 ? HWINFER_DTYPE_Q5_K : HWINFER_DTYPE_Q4_K;
  if ((Is(r, "q4_k_m") || Is(r, "q5_k_m")) && UsesMoreBits(layer, shape.n_layers)) {
    type = HWINFER_DTYPE_Q6_K;
  }
  if (Is(r, "q4_k_s") && layer < 4) type = HWINFER_DTYPE_Q5_K;
  if (Is(r, "iq4_nl") && gqa >= 4) type = HWINFER_DTYPE_Q5_K;
  // Llama 70B (80 layers): its attn_v is 8x smaller than attn_q, so more bits cost little.
  if (shape.n_layers == 80 && (type == HWINFER_DTYPE_Q3_K || type == HWINFER_DTYPE_Q4_K)) {
    type = HWINFER_DTYPE_Q5_K;
  }
  return type;
}

uint32_t FfnDownType(const QuantRecipe& r, const ModelShape& shape, int64_t layer) {
  if (Is(r, "q2_k")) return HWINFER_DTYPE_Q3_K;
  if (Is(r, "q3_k_m")) return layer < shape.n_layers / 16 ? HWINFER_DTYPE_Q5_K : HWINFER_DTYPE_Q4_K;
  if ((Is(r, "q4_k_m") || Is(r, "q5_k_m")) && UsesMoreBits(layer, shape.n_layers)) {
    return HWINFER_DTYPE_Q6_K;
  }
  if (Is(r, "q4_k_s") && layer < shape.n_layers / 8) return HWINFER_DTYPE_Q5_K;
  return r.base;
}

// |type|, or what llama.cpp's tool writes instead when a row of |row| values does not hold whole
// 256-value super-blocks.
uint32_t RowCompatibleType(uint32_t type, uint64_t row) {
  if (hwinfer_dtype_block_values(type) != 256 || row % 256 == 0) return type;
  switch (type) {
    case HWINFER_DTYPE_Q4_K:
      return HWINFER_DTYPE_Q5_0;
    case HWINFER_DTYPE_Q5_K:
      return HWINFER_DTYPE_Q5_1;
    case HWINFER_DTYPE_Q6_K:
      return HWINFER_DTYPE_Q8_0;
    default:  // Q2_K, Q3_K
      return HWINFER_DTYPE_IQ4_NL;
  }
}

}  // namespace

const char* QuantRecipeNames() {
  return "f32, f16, bf16, q8_0, q6_k, q5_k_m, q5_1, q5_0, q4_k_m, q4_k_s, q4_1, q4_0, iq4_nl, "
         "q3_k_m, q2_k";
}

StatusOr<QuantRecipe> ParseQuantRecipe(const std::string& name, bool pure) {
  for (const RecipeEntry& entry : kRecipes) {
    if (name == entry.name) return QuantRecipe{entry.name, entry.base, entry.file_type, pure};
  }
  return InvalidArgument("weight type '" + name + "' is not one of " + QuantRecipeNames());
}

QuantRecipe PureRecipe(uint32_t type) {
  for (const RecipeEntry& entry : kRecipes) {
    if (entry.base == type) return QuantRecipe{entry.name, type, entry.file_type, true};
  }
  return QuantRecipe{GgmlTypeName(type), type, 0, true};
}

TensorRole RoleOf(const std::string& name, int64_t* layer) {
  *layer = -1;
  if (name == "token_embd.weight") return TensorRole::kTokenEmbedding;
  if (name == "output.weight") return TensorRole::kOutput;
  if (name.rfind("blk.", 0) != 0) return TensorRole::kOther;
  const size_t dot = name.find('.', 4);
  if (dot == std::string::npos) return TensorRole::kOther;
  *layer = std::strtoll(name.c_str() + 4, nullptr, 10);
  const std::string rest = name.substr(dot + 1);
  const std::pair<const char*, TensorRole> kRoles[] = {
      {"attn_q.weight", TensorRole::kAttnQ},     {"attn_k.weight", TensorRole::kAttnK},
      {"attn_v.weight", TensorRole::kAttnV},     {"attn_output.weight", TensorRole::kAttnOutput},
      {"ffn_gate.weight", TensorRole::kFfnGate}, {"ffn_up.weight", TensorRole::kFfnUp},
      {"ffn_down.weight", TensorRole::kFfnDown},
  };
  for (const auto& [suffix, role] : kRoles) {
    if (rest == suffix) return role;
  }
  return TensorRole::kOther;
}

uint32_t RecipeTensorType(const QuantRecipe& recipe, const ModelShape& shape, TensorRole role,
                          int64_t layer, uint64_t row_length) {
  const bool float_recipe = hwinfer_dtype_block_values(recipe.base) <= 1;
  uint32_t type = recipe.base;
  if (!recipe.pure && !float_recipe) {
    switch (role) {
      case TensorRole::kOutput:
        if (recipe.base != HWINFER_DTYPE_Q8_0) type = HWINFER_DTYPE_Q6_K;
        break;
      case TensorRole::kAttnV:
        type = AttnVType(recipe, shape, layer);
        break;
      case TensorRole::kFfnDown:
        type = FfnDownType(recipe, shape, layer);
        break;
      case TensorRole::kAttnOutput:
        if (Is(recipe, "q2_k")) type = HWINFER_DTYPE_Q3_K;
        if (Is(recipe, "q3_k_m")) type = HWINFER_DTYPE_Q4_K;
        break;
      default:
        break;
    }
  }
  return RowCompatibleType(type, row_length);
}

}  // namespace hwinfer::cli
