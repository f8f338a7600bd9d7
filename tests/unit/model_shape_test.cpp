// model_shape_test.cpp — the shipped model shapes load, their parameter counts match the published
// models, the KV-cache formula gives the founding article's numbers, and bad shape files fail with
// file:line:column.
#include "hwinfer/model_shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace hwinfer {
namespace {

using ::testing::HasSubstr;

std::string ShapePath(const std::string& name) {
  return std::string(HWINFER_SOURCE_DIR) + "/configs/models/" + name + ".yaml";
}

ModelShape Load(const std::string& name) {
  auto shape = LoadModelShape(ShapePath(name));
  EXPECT_TRUE(shape.ok()) << shape.status().ToString();
  return shape.ok() ? *shape : ModelShape{};
}

std::string WriteTemp(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / "hwinfer_bad_shape.yaml";
  std::ofstream(path) << text;
  return path.string();
}

TEST(ModelShape, EveryShippedShapeLoads) {
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(HWINFER_SOURCE_DIR) + "/configs/models")) {
    auto shape = LoadModelShape(entry.path().string());
    EXPECT_TRUE(shape.ok()) << shape.status().ToString();
    ++count;
  }
  EXPECT_GE(count, 6);
}

TEST(ModelShape, ParameterCountsMatchPublishedModels) {
  EXPECT_EQ(Load("llama2-7b").TotalParams(), 6738415616);       // Llama-2-7b
  EXPECT_EQ(Load("tinyllama-1.1b").TotalParams(), 1100048384);  // TinyLlama-1.1B
  EXPECT_EQ(Load("llama3-8b").TotalParams(), 8030261248);       // Meta-Llama-3-8B
  EXPECT_EQ(Load("mistral-7b").TotalParams(), 7241732096);      // Mistral-7B-v0.1
  EXPECT_EQ(Load("llama2-70b").TotalParams(), 68976648192);     // Llama-2-70b
}

TEST(ModelShape, KvCacheBytesFollowTheArticleFormula) {
  // batch x seqlen x (d_model / n_heads) x n_layers x 2 x bytes x n_kv_heads
  const ModelShape llama2_70b = Load("llama2-70b");
  EXPECT_EQ(llama2_70b.head_dim(), 128);
  EXPECT_DOUBLE_EQ(llama2_70b.KvCacheBytes(1, 1024, 2.0), 1024.0 * 128 * 80 * 2 * 2 * 8);
  EXPECT_DOUBLE_EQ(llama2_70b.KvCacheBytes(16, 1024, 1.0), 16.0 * 1024 * 128 * 80 * 2 * 1 * 8);
  // Llama 2 7B (no GQA): 0.5 MiB per token in f16.
  EXPECT_DOUBLE_EQ(Load("llama2-7b").KvBytesPerToken(2.0), 524288.0);
}

TEST(ModelShape, RejectsInconsistentShape) {
  ModelShape shape = Load("small");
  shape.file.clear();
  shape.n_kv_heads = 3;
  Status status = shape.Validate();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("n_kv_heads (3) must divide n_heads (8)"));
}

TEST(ModelShape, BadFilesNameLineAndColumn) {
  const std::string good =
      "name: x\narchitecture: llama\nn_layers: 2\nd_model: 64\nn_heads: 4\n"
      "n_kv_heads: 2\nffn_dim: 128\nvocab_size: 100\ncontext_length: 64\n"
      "rope_theta: 10000\nrms_eps: 1.0e-5\n";
  auto wrong_type = LoadModelShape(WriteTemp(good + "n_layer: 3\n"));
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_THAT(wrong_type.status().message(), HasSubstr(":12:1: unknown key 'n_layer'"));

  std::string negative = good;
  negative.replace(negative.find("n_layers: 2"), 11, "n_layers: -2");
  auto bad_value = LoadModelShape(WriteTemp(negative));
  ASSERT_FALSE(bad_value.ok());
  EXPECT_THAT(bad_value.status().message(), HasSubstr(":3:11: 'n_layers' must be an integer > 0"));

  std::string gpt = good;
  gpt.replace(gpt.find("llama"), 5, "gpt2");
  auto arch = LoadModelShape(WriteTemp(gpt));
  ASSERT_FALSE(arch.ok());
  EXPECT_THAT(arch.status().message(), HasSubstr(":2:15: unsupported architecture 'gpt2'"));

  auto missing = LoadModelShape(WriteTemp("name: x\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("missing required key 'architecture'"));

  auto absent = LoadModelShape("/nonexistent/shape.yaml");
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace hwinfer
