// model_synth.cpp — see model_synth.h. Deterministic for a seed: each tensor draws from its own
// splitmix64 stream seeded by (seed, tensor index), so files are byte-identical across runs.
#include "model_synth.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/plugin.h"
#include "reference/quantize_weights.h"

namespace hwinfer::cli {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// |n| values uniform in [-a, a].
std::vector<float> RandomValues(uint64_t n, double a, uint64_t stream_seed) {
  std::vector<float> values(n);
  uint64_t state = stream_seed;
  for (float& v : values) {
    const double unit = static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
    v = static_cast<float>((2.0 * unit - 1.0) * a);
  }
  return values;
}

// The built-in vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then "▁tN" pieces.
Status AddTokenizer(GgufWriter& writer, int64_t vocab_size) {
  if (vocab_size < 259) {
    return InvalidArgument("vocab_size " + std::to_string(vocab_size) +
                           " is too small for the built-in vocabulary (3 control + 256 byte "
                           "tokens); expected >= 259");
  }
  std::vector<GgufValue> tokens, scores, types;
  for (int64_t id = 0; id < vocab_size; ++id) {
    std::string text;
    int32_t type = 1;  // normal
    if (id == 0) {
      text = "<unk>", type = 2;  // unknown
    } else if (id < 3) {
      text = id == 1 ? "<s>" : "</s>", type = 3;  // control
    } else if (id < 259) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "<0x%02X>", static_cast<unsigned>(id - 3));
      text = hex, type = 6;  // byte
    } else {
      text = "\xe2\x96\x81t" + std::to_string(id);  // "▁t<id>"
    }
    tokens.push_back(GgufValue::String(text));
    scores.push_back(GgufValue::Float32(id < 259 ? 0.0f : -static_cast<float>(id)));
    types.push_back(GgufValue::Int32(type));
  }
  HWINFER_RETURN_IF_ERROR(writer.AddKv("tokenizer.ggml.model", GgufValue::String("llama")));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("tokenizer.ggml.tokens",
                                       GgufValue::Array(GgufType::kString, std::move(tokens))));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("tokenizer.ggml.scores",
                                       GgufValue::Array(GgufType::kFloat32, std::move(scores))));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("tokenizer.ggml.token_type",
                                       GgufValue::Array(GgufType::kInt32, std::move(types))));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("tokenizer.ggml.bos_token_id", GgufValue::Uint32(1)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("tokenizer.ggml.eos_token_id", GgufValue::Uint32(2)));
  return writer.AddKv("tokenizer.ggml.unknown_token_id", GgufValue::Uint32(0));
}

}  // namespace

Status SynthesizeModel(const ModelShape& shape, const SynthOptions& options,
                       const std::string& path) {
  HWINFER_RETURN_IF_ERROR(shape.Validate());
  const QuantRecipe& recipe = options.weights;
  if (!reference::can_quantize_weights(recipe.base)) {
    return InvalidArgument(std::string("no quantizer for weight type ") +
                           GgmlTypeName(recipe.base));
  }
  GgufWriter writer;
  auto u32 = [](int64_t v) { return GgufValue::Uint32(static_cast<uint32_t>(v)); };
  HWINFER_RETURN_IF_ERROR(writer.AddKv("general.architecture", GgufValue::String("llama")));
  HWINFER_RETURN_IF_ERROR(
      writer.AddKv("general.name", GgufValue::String(shape.name + "-synthetic")));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("general.file_type", GgufValue::Uint32(recipe.file_type)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.vocab_size", u32(shape.vocab_size)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.context_length", u32(shape.context_length)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.embedding_length", u32(shape.d_model)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.block_count", u32(shape.n_layers)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.feed_forward_length", u32(shape.ffn_dim)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.rope.dimension_count", u32(shape.head_dim())));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.attention.head_count", u32(shape.n_heads)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.attention.head_count_kv", u32(shape.n_kv_heads)));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.attention.layer_norm_rms_epsilon",
                                       GgufValue::Float32(static_cast<float>(shape.rms_eps))));
  HWINFER_RETURN_IF_ERROR(writer.AddKv("llama.rope.freq_base",
                                       GgufValue::Float32(static_cast<float>(shape.rope_theta))));
  HWINFER_RETURN_IF_ERROR(AddTokenizer(writer, shape.vocab_size));

  // Tensors in llama.cpp's order; dims innermost first ({n_in, n_out} for a matrix).
  struct Spec {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
  };
  const uint32_t kNorm = HWINFER_DTYPE_F32;
  const auto d = static_cast<uint64_t>(shape.d_model);
  const auto kv = static_cast<uint64_t>(shape.n_kv_heads * shape.head_dim());
  const auto ffn = static_cast<uint64_t>(shape.ffn_dim);
  const auto vocab = static_cast<uint64_t>(shape.vocab_size);
  std::vector<Spec> specs = {{"token_embd.weight", {d, vocab}, 0}};
  for (int64_t l = 0; l < shape.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    specs.push_back({p + "attn_norm.weight", {d}, kNorm});
    specs.push_back({p + "attn_q.weight", {d, d}, 0});
    specs.push_back({p + "attn_k.weight", {d, kv}, 0});
    specs.push_back({p + "attn_v.weight", {d, kv}, 0});
    specs.push_back({p + "attn_output.weight", {d, d}, 0});
    specs.push_back({p + "ffn_norm.weight", {d}, kNorm});
    specs.push_back({p + "ffn_gate.weight", {d, ffn}, 0});
    specs.push_back({p + "ffn_up.weight", {d, ffn}, 0});
    specs.push_back({p + "ffn_down.weight", {ffn, d}, 0});
  }
  specs.push_back({"output_norm.weight", {d}, kNorm});
  specs.push_back({"output.weight", {d, vocab}, 0});

  for (Spec& spec : specs) {
    if (spec.dims.size() == 2) {
      int64_t layer = 0;
      const TensorRole role = RoleOf(spec.name, &layer);
      spec.type = RecipeTensorType(recipe, shape, role, layer, spec.dims[0]);
    }
    const uint64_t block = hwinfer_dtype_block_values(spec.type);
    if (block != 0 && spec.dims[0] % block != 0) {
      return InvalidArgument(
          shape.name + ": " + spec.name + " has rows of " + std::to_string(spec.dims[0]) +
          " values, not whole " + GgmlTypeName(spec.type) + " blocks of " + std::to_string(block) +
          " (d_model and ffn_dim must be multiples of " + std::to_string(block) + ")");
    }
  }
  const double a = options.std * std::sqrt(3.0);
  std::vector<std::vector<uint8_t>> data(specs.size());  // alive until WriteFile returns
  for (size_t i = 0; i < specs.size(); ++i) {
    uint64_t n = 1;
    for (uint64_t dim : specs[i].dims) n *= dim;
    const bool norm = specs[i].dims.size() == 1;
    const uint32_t tensor_type = specs[i].type;
    if (options.zero_weights) {
      uint64_t block_values = 0, block_bytes = 0;
      GgmlTypeBlock(tensor_type, &block_values, &block_bytes);
      HWINFER_RETURN_IF_ERROR(writer.AddTensor(specs[i].name, tensor_type, specs[i].dims, nullptr,
                                               n / block_values * block_bytes));
      continue;
    }
    std::vector<float> values = norm ? std::vector<float>(n, 1.0f)
                                     : RandomValues(n, a, options.seed * 0x100000001b3ull + i);
    data[i] = reference::quantize_weights(values, tensor_type);
    HWINFER_RETURN_IF_ERROR(writer.AddTensor(specs[i].name, tensor_type, specs[i].dims,
                                             data[i].data(), data[i].size()));
  }
  return writer.WriteFile(path);
}

}  // namespace hwinfer::cli
