// model_synth_test.cpp — `hwinfer model synth` writes GGUF files in llama.cpp's conventions:
// metadata, tokenizer, tensor names, types and shapes read back through the GGUF reader; the same
// seed gives the same bytes; the random weights keep a float64 forward pass finite.
#include "model_synth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "hwinfer/gguf.h"
#include "hwinfer/plugin.h"
#include "reference/quantize_blocks.h"
#include "reference/reference_llama.h"
#include "reference/weight_blocks.h"

namespace hwinfer {
namespace {

ModelShape TinyShape() {
  ModelShape shape;
  shape.name = "tiny";
  shape.n_layers = 2;
  shape.d_model = 64;
  shape.n_heads = 4;
  shape.n_kv_heads = 2;
  shape.ffn_dim = 128;
  shape.vocab_size = 300;
  shape.context_length = 128;
  return shape;
}

std::string Synth(uint32_t type, uint64_t seed, const std::string& name) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  cli::SynthOptions options;
  options.weights = cli::PureRecipe(type);
  options.seed = seed;
  Status status = cli::SynthesizeModel(TinyShape(), options, path);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ModelSynth, WritesLlamaConventionsForEveryType) {
  for (uint32_t type :
       {HWINFER_DTYPE_F16, HWINFER_DTYPE_BF16, HWINFER_DTYPE_Q8_0, HWINFER_DTYPE_Q4_0}) {
    auto file = GgufFile::Open(Synth(type, 1, "hwinfer_synth_" + std::to_string(type) + ".gguf"));
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    const GgufFile& gguf = **file;
    EXPECT_EQ(*gguf.GetString("general.architecture"), "llama");
    EXPECT_EQ(*gguf.GetUint32("llama.block_count"), 2u);
    EXPECT_EQ(*gguf.GetUint32("llama.embedding_length"), 64u);
    EXPECT_EQ(*gguf.GetUint32("llama.attention.head_count_kv"), 2u);
    EXPECT_EQ(*gguf.GetUint32("llama.rope.dimension_count"), 16u);
    EXPECT_FLOAT_EQ(*gguf.GetFloat32("llama.rope.freq_base"), 10000.0f);
    EXPECT_EQ(*gguf.GetString("tokenizer.ggml.model"), "llama");
    EXPECT_EQ((*gguf.GetArray("tokenizer.ggml.tokens"))->items.size(), 300u);
    EXPECT_EQ(*gguf.GetUint32("tokenizer.ggml.bos_token_id"), 1u);
    ASSERT_EQ(gguf.tensors().size(), 2u + 2u * 9u + 1u);
    const GgufTensorInfo* k = gguf.FindTensor("blk.1.attn_k.weight");
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->ggml_type, type);
    EXPECT_EQ(k->RowMajorShape(), (std::vector<int64_t>{32, 64}));
    EXPECT_EQ(gguf.FindTensor("blk.0.ffn_norm.weight")->ggml_type, HWINFER_DTYPE_F32);
    EXPECT_EQ(gguf.FindTensor("output.weight")->ggml_type, type);
  }
}

TEST(ModelSynth, SameSeedSameBytesOtherSeedOtherBytes) {
  const std::string a = ReadAll(Synth(HWINFER_DTYPE_Q4_0, 7, "hwinfer_synth_a.gguf"));
  const std::string b = ReadAll(Synth(HWINFER_DTYPE_Q4_0, 7, "hwinfer_synth_b.gguf"));
  const std::string c = ReadAll(Synth(HWINFER_DTYPE_Q4_0, 8, "hwinfer_synth_c.gguf"));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.size(), c.size());
}

TEST(ModelSynth, RandomWeightsKeepTheForwardPassFinite) {
  auto file = GgufFile::Open(Synth(HWINFER_DTYPE_F32, 3, "hwinfer_synth_f32.gguf"));
  ASSERT_TRUE(file.ok());
  auto tensor = [&](const std::string& name) {
    const GgufTensorInfo* info = (*file)->FindTensor(name);
    std::vector<float> values(info->ValueCount());
    std::memcpy(values.data(), (*file)->TensorData(*info), values.size() * 4);
    return values;
  };
  const ModelShape shape = TinyShape();
  reference::LlamaConfig config{shape.n_layers,   shape.d_model, shape.n_heads,
                                shape.n_kv_heads, shape.ffn_dim, shape.vocab_size,
                                shape.rope_theta, shape.rms_eps};
  reference::LlamaWeights weights{
      tensor("token_embd.weight"), {}, tensor("output_norm.weight"), tensor("output.weight")};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    weights.layers.push_back({tensor(p + "attn_norm.weight"), tensor(p + "attn_q.weight"),
                              tensor(p + "attn_k.weight"), tensor(p + "attn_v.weight"),
                              tensor(p + "attn_output.weight"), tensor(p + "ffn_norm.weight"),
                              tensor(p + "ffn_gate.weight"), tensor(p + "ffn_up.weight"),
                              tensor(p + "ffn_down.weight")});
  }
  reference::ReferenceLlama model(config, weights);
  for (int32_t token : {1, 100, 299, 5}) {
    for (double logit : model.Forward(token)) ASSERT_TRUE(std::isfinite(logit));
  }
}

// q4_k_m mixes types as llama.cpp's recipe does: Q4_K everywhere but output.weight and the
// attn_v / ffn_down of the layers use_more_bits picks (of 8 layers: 0, 3, 6, 7), in Q6_K.
TEST(ModelSynth, Q4KMMixesTypesAsLlamaCppsRecipe) {
  ModelShape shape = TinyShape();
  shape.d_model = 256;
  shape.ffn_dim = 512;
  shape.n_layers = 8;
  auto recipe = cli::ParseQuantRecipe("q4_k_m");
  ASSERT_TRUE(recipe.ok()) << recipe.status().ToString();
  cli::SynthOptions options;
  options.weights = *recipe;
  const std::string path = (std::filesystem::temp_directory_path() / "synth-q4km.gguf").string();
  ASSERT_TRUE(cli::SynthesizeModel(shape, options, path).ok());
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto type_of = [&](const std::string& name) { return (*file)->FindTensor(name)->ggml_type; };
  EXPECT_EQ(type_of("token_embd.weight"), HWINFER_DTYPE_Q4_K);
  EXPECT_EQ(type_of("output.weight"), HWINFER_DTYPE_Q6_K);
  for (int layer = 0; layer < 8; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    const uint32_t more = (layer == 0 || layer == 3 || layer == 6 || layer == 7)
                              ? HWINFER_DTYPE_Q6_K
                              : HWINFER_DTYPE_Q4_K;
    EXPECT_EQ(type_of(p + "attn_v.weight"), more) << layer;
    EXPECT_EQ(type_of(p + "ffn_down.weight"), more) << layer;
    EXPECT_EQ(type_of(p + "attn_q.weight"), HWINFER_DTYPE_Q4_K) << layer;
    EXPECT_EQ(type_of(p + "attn_norm.weight"), HWINFER_DTYPE_F32) << layer;
  }
  EXPECT_EQ(std::get<uint64_t>((*file)->Find("general.file_type")->data), 15u);  // Q4_K_M
  // Rows that are not whole super-blocks fall back as llama.cpp's tool does: ffn 1280 = 5 x 256
  // fits, ffn 1408 does not (Q4_K -> Q5_0, Q6_K -> Q8_0 for ffn_down, whose rows are ffn long).
  shape.ffn_dim = 1408;
  ASSERT_TRUE(cli::SynthesizeModel(shape, options, path).ok());
  file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(type_of("blk.1.ffn_down.weight"), HWINFER_DTYPE_Q5_0);
  EXPECT_EQ(type_of("blk.0.ffn_down.weight"), HWINFER_DTYPE_Q8_0);  // use_more_bits: Q6_K
  EXPECT_EQ(type_of("blk.1.ffn_up.weight"), HWINFER_DTYPE_Q4_K);    // rows of d_model = 256
  // The 64-wide tiny shape cannot hold even the fallback's blocks everywhere: a clear error.
  ModelShape narrow_shape = TinyShape();
  narrow_shape.d_model = 48;
  narrow_shape.n_heads = 3;
  narrow_shape.n_kv_heads = 1;
  Status narrow = cli::SynthesizeModel(narrow_shape, options, path);
  EXPECT_EQ(narrow.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(narrow.message().find("token_embd.weight has rows of 48 values, not whole Q5_0 blocks"),
            std::string::npos)
      << narrow.ToString();
}

// The Q5_0 fallback reads back as a 5-bit type should (llama.cpp's round-to-nearest: half a step
// of max|x| / 16, a whole step at the end opposite the largest value, where q stops at 31).
TEST(ModelSynth, Q5_0FallbackQuantizesWithinFiveBitError) {
  std::vector<float> x(1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  std::vector<uint8_t> blocks(x.size() / 32 * HWINFER_Q5_0_BLOCK_BYTES);
  reference::quantize_q5_0(x.data(), blocks.data(), static_cast<int64_t>(x.size()));
  std::vector<float> back(x.size());
  reference::dequantize_blocks(HWINFER_DTYPE_Q5_0, blocks.data(), static_cast<int64_t>(x.size()),
                               back.data());
  double err2 = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(back[i], x[i], 1.0 / 16 * 1.001) << i;
    err2 += (back[i] - x[i]) * static_cast<double>(back[i] - x[i]);
  }
  // Uniform rounding error of a 1/16 step has RMS 1/16/sqrt(12) = 0.018; the clamped end adds a
  // little.
  EXPECT_LT(std::sqrt(err2 / static_cast<double>(x.size())), 0.025);
}

TEST(ModelSynth, RejectsTooSmallVocabularyAndUnknownType) {
  ModelShape shape = TinyShape();
  shape.vocab_size = 100;
  cli::SynthOptions options;
  options.weights = cli::PureRecipe(HWINFER_DTYPE_F16);
  Status status = cli::SynthesizeModel(shape, options, "/tmp/unused.gguf");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("vocab_size 100"), std::string::npos);
  EXPECT_FALSE(cli::ParseQuantRecipe("q5_k").ok());
}

}  // namespace
}  // namespace hwinfer
