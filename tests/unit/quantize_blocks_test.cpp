// quantize_blocks_test.cpp — Q8_0 / Q4_0 quantization is bit-exact with llama.cpp: quantizing the
// f32 weights of tests/data/gguf/tiny-llama-f32.gguf gives exactly the blocks llama.cpp's quantize
// tool wrote into tiny-llama-q8_0.gguf and tiny-llama-q4_0.gguf; dequantization stays within
// half a step of the input (one step on Q4_0's clamped side).
#include "reference/quantize_blocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hwinfer/gguf.h"

namespace hwinfer {
namespace {

std::unique_ptr<GgufFile> OpenTestModel(const std::string& name) {
  auto file = GgufFile::Open(std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + name);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  return file.ok() ? std::move(*file) : nullptr;
}

std::vector<float> F32Values(const GgufFile& file, const GgufTensorInfo& info) {
  std::vector<float> values(info.ValueCount());
  std::memcpy(values.data(), file.TensorData(info), values.size() * sizeof(float));
  return values;
}

template <typename Block>
void ExpectBitExact(const std::string& quantized_file, uint32_t type,
                    void (*quantize)(const float*, Block*, int64_t)) {
  auto f32 = OpenTestModel("tiny-llama-f32.gguf");
  auto quantized = OpenTestModel(quantized_file);
  ASSERT_TRUE(f32 && quantized);
  int matrices = 0;
  for (const GgufTensorInfo& info : quantized->tensors()) {
    if (info.ggml_type != type) continue;
    const GgufTensorInfo* source = f32->FindTensor(info.name);
    ASSERT_NE(source, nullptr) << info.name;
    const std::vector<float> values = F32Values(*f32, *source);
    std::vector<Block> ours(values.size() / 32);
    quantize(values.data(), ours.data(), static_cast<int64_t>(values.size()));
    ASSERT_EQ(ours.size() * sizeof(Block), info.size_bytes) << info.name;
    EXPECT_EQ(std::memcmp(ours.data(), quantized->TensorData(info), info.size_bytes), 0)
        << info.name << " differs from llama.cpp's quantization";
    ++matrices;
  }
  EXPECT_EQ(matrices, 2 + 2 * 7);  // token_embd, output and 7 matrices per layer
}

TEST(QuantizeBlocks, Q8_0IsBitExactWithLlamaCpp) {
  ExpectBitExact<hwinfer_block_q8_0>("tiny-llama-q8_0.gguf", HWINFER_DTYPE_Q8_0,
                                     reference::quantize_q8_0);
}

TEST(QuantizeBlocks, Q4_0IsBitExactWithLlamaCpp) {
  ExpectBitExact<hwinfer_block_q4_0>("tiny-llama-q4_0.gguf", HWINFER_DTYPE_Q4_0,
                                     reference::quantize_q4_0);
}

TEST(QuantizeBlocks, RoundTripErrorIsWithinHalfAStep) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.7f) * 3.0f;
  std::vector<hwinfer_block_q8_0> q8(2);
  std::vector<hwinfer_block_q4_0> q4(2);
  reference::quantize_q8_0(x.data(), q8.data(), 64);
  reference::quantize_q4_0(x.data(), q4.data(), 64);
  std::vector<float> back8(64), back4(64);
  reference::dequantize_q8_0(q8.data(), back8.data(), 64);
  reference::dequantize_q4_0(q4.data(), back4.data(), 64);
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t b = i / 32;
    const float step8 = reference::f16_to_f32(q8[b].d);
    const float step4 = std::fabs(reference::f16_to_f32(q4[b].d));
    EXPECT_LE(std::fabs(back8[i] - x[i]), 0.5f * step8 + 1e-3f) << i;
    // Q4_0 maps the largest magnitude to -8, so the far side clamps at +7: up to one whole step.
    EXPECT_LE(std::fabs(back4[i] - x[i]), step4 + 1e-3f) << i;
  }
}

}  // namespace
}  // namespace hwinfer
