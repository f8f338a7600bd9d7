// llama_model_test.cpp — LlamaModel: hyperparameters and tensors from real GGUF files
// (tests/data/gguf, written by llama.cpp's tools), and every kind of bad file a user can hand it:
// another architecture, an unsupported tensor type, shapes that disagree with the metadata, a
// missing tensor or key, a truncated file. Bad files are the tiny-llama file rewritten in memory
// with one thing changed.
#include "hwinfer/llama_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "gguf_edit.h"
#include "hwinfer/plugin.h"

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

std::string DataFile(const std::string& name) {
  return std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + name;
}

using test::SetKv;
using test::TensorCopy;

// tiny-llama-f32.gguf with |edit| applied to its metadata and tensors, parsed back as a model
// (over |storage|, which must outlive it).
StatusOr<std::shared_ptr<const LlamaModel>> Rewritten(const test::GgufEdit& edit,
                                                      std::vector<uint8_t>& storage) {
  HWINFER_ASSIGN_OR_RETURN(storage, test::EditedGguf(DataFile("tiny-llama-f32.gguf"), edit));
  auto parsed = GgufFile::Parse(storage.data(), storage.size(), "edited.gguf");
  if (!parsed.ok()) return parsed.status();
  return LlamaModel::FromGguf(std::move(*parsed));
}

TensorCopy& FindTensor(std::vector<TensorCopy>& tensors, const std::string& name) {
  TensorCopy* found = test::FindTensorCopy(tensors, name);
  if (found == nullptr) {
    ADD_FAILURE() << "no tensor " << name;
    return tensors.front();
  }
  return *found;
}

TEST(LlamaModel, ReadsHyperparametersAndTensorsOfEveryType) {
  for (const char* name : {"tiny-llama-f32.gguf", "tiny-llama-f16.gguf", "tiny-llama-q8_0.gguf",
                           "tiny-llama-q4_0.gguf"}) {
    SCOPED_TRACE(name);
    auto model = LlamaModel::Open(DataFile(name));
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const ModelShape& s = (*model)->shape();
    EXPECT_EQ(s.n_layers, 2);
    EXPECT_EQ(s.d_model, 256);
    EXPECT_EQ(s.n_heads, 8);
    EXPECT_EQ(s.n_kv_heads, 2);
    EXPECT_EQ(s.ffn_dim, 768);
    EXPECT_EQ(s.vocab_size, 512);
    EXPECT_EQ(s.context_length, 512);
    EXPECT_DOUBLE_EQ(s.rope_theta, 10000.0);
    EXPECT_NEAR(s.rms_eps, 1e-5, 1e-12);
    EXPECT_EQ((*model)->rope_dim(), 32);
    EXPECT_EQ((*model)->layers().size(), 2u);
    EXPECT_EQ((*model)->output_norm().ggml_type, HWINFER_DTYPE_F32);
    // Decode bytes: every tensor but the embedding table (the output projection is separate).
    uint64_t all = 0;
    for (const GgufTensorInfo& t : (*model)->file().tensors()) all += t.size_bytes;
    EXPECT_EQ((*model)->decode_weight_bytes(), all - (*model)->token_embd().size_bytes);
    EXPECT_EQ((*model)->weight_bytes(), all);
  }
}

TEST(LlamaModel, TiedOutputFallsBackToTheEmbedding) {
  std::vector<uint8_t> storage;
  auto model = Rewritten(
      [](auto&, std::vector<TensorCopy>& tensors) {
        std::erase_if(tensors, [](const TensorCopy& t) { return t.name == "output.weight"; });
      },
      storage);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(&(*model)->output(), &(*model)->token_embd());
}

TEST(LlamaModel, RejectsAnotherArchitecture) {
  std::vector<uint8_t> storage;
  auto model = Rewritten(
      [](auto& kvs, auto&) { SetKv(kvs, "general.architecture", GgufValue::String("gpt2")); },
      storage);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(model.status().message(), HasSubstr("general.architecture is 'gpt2'"));
}

TEST(LlamaModel, RejectsAnUnsupportedTensorTypeNamingIt) {
  std::vector<uint8_t> storage;
  auto model = Rewritten(
      [](auto&, std::vector<TensorCopy>& tensors) {
        TensorCopy& t = FindTensor(tensors, "blk.1.ffn_up.weight");  // [768, 256]
        uint64_t block_values = 0, block_bytes = 0;
        ASSERT_TRUE(GgmlTypeBlock(16 /* IQ2_XXS */, &block_values, &block_bytes));
        t.type = 16;
        t.bytes.assign(768 * 256 / block_values * block_bytes, 0);
      },
      storage);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported);
  EXPECT_THAT(model.status().message(), HasSubstr("blk.1.ffn_up.weight has type IQ2_XXS"));
}

TEST(LlamaModel, RejectsATensorShapeThatDisagreesWithTheMetadata) {
  std::vector<uint8_t> storage;
  auto model = Rewritten(
      [](auto& kvs, auto&) {
        SetKv(kvs, "llama.feed_forward_length", GgufValue::Uint32(1024));  // tensors have 768
      },
      storage);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(),
              HasSubstr("blk.0.ffn_gate.weight has shape [768, 256]; the metadata"));
  EXPECT_THAT(model.status().message(), HasSubstr("implies [1024, 256]"));
}

// Nothing may be sized by block_count before the tensors are checked: 0xFFFFFFFF layers used to
// abort with std::bad_alloc (layers_.resize), 50 million took 9 s and 3.6 GB.
TEST(LlamaModel, AnAbsurdBlockCountIsRefusedBeforeAnythingIsSizedByIt) {
  for (const uint32_t block_count : {0xFFFFFFFFu, 50000000u, 3u}) {
    SCOPED_TRACE(block_count);
    std::vector<uint8_t> storage;
    auto model = Rewritten(
        [block_count](auto& kvs, auto&) {
          SetKv(kvs, "llama.block_count", GgufValue::Uint32(block_count));
        },
        storage);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(model.status().message(),
                HasSubstr("llama.block_count is " + std::to_string(block_count) +
                          " but the file holds 21 tensors, room for at most 2 layers"));
  }
}

// block_count = 1 on a 2-layer file ran a one-layer model silently.
TEST(LlamaModel, ALayerPastBlockCountIsAnError) {
  std::vector<uint8_t> storage;
  auto model = Rewritten(
      [](auto& kvs, auto&) { SetKv(kvs, "llama.block_count", GgufValue::Uint32(1)); }, storage);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(),
              HasSubstr("belongs to layer 1, but llama.block_count is 1"));
}

TEST(LlamaModel, RejectsAMissingTensor) {
  std::vector<uint8_t> storage;
  auto model = Rewritten(
      [](auto&, std::vector<TensorCopy>& tensors) {
        std::erase_if(tensors, [](const TensorCopy& t) { return t.name == "blk.1.attn_k.weight"; });
      },
      storage);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(model.status().message(), HasSubstr("no tensor blk.1.attn_k.weight"));
}

TEST(LlamaModel, RejectsHeadCountsThatDoNotDivide) {
  std::vector<uint8_t> storage;
  auto model = Rewritten(
      [](auto& kvs, auto&) { SetKv(kvs, "llama.attention.head_count_kv", GgufValue::Uint32(3)); },
      storage);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("n_kv_heads (3) must divide n_heads (8)"));
}

TEST(LlamaModel, RejectsANonF32NormWeight) {
  std::vector<uint8_t> storage;
  auto model = Rewritten(
      [](auto&, std::vector<TensorCopy>& tensors) {
        TensorCopy& t = FindTensor(tensors, "blk.0.attn_norm.weight");
        t.type = HWINFER_DTYPE_F16;
        t.bytes.resize(t.bytes.size() / 2);
      },
      storage);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(),
              HasSubstr("norm weight blk.0.attn_norm.weight has type F16"));
}

TEST(LlamaModel, TruncatedFileIsAnErrorNamingTheOffset) {
  std::ifstream in(DataFile("tiny-llama-f32.gguf"), std::ios::binary);
  std::vector<char> bytes(1000);
  ASSERT_TRUE(in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())));
  auto parsed =
      GgufFile::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "cut.gguf");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("cut.gguf"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("offset"));
}

}  // namespace
}  // namespace hwinfer
