// tiny_model.h — test helper: the tiny Llama files of tests/data/gguf (dim 256, 2 layers, 8 heads,
// 2 KV heads, ffn 768, vocab 512) and executor options small enough that a few prompts exercise
// chunked prefill, several KV blocks per sequence and batched decode. Header-only (tests/unit
// compiles only *_test.cpp files).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "hwinfer/llama_executor.h"
#include "hwinfer/llama_model.h"

namespace hwinfer::testing_support {

inline std::shared_ptr<const LlamaModel> TinyModel(
    const std::string& name = "tiny-llama-f16.gguf") {
  auto model = LlamaModel::Open(std::string(HWINFER_SOURCE_DIR) + "/tests/data/gguf/" + name);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : nullptr;
}

// 3 sequences, 32 tokens a step, blocks of 4 tokens, 256 tokens of KV cache.
inline ExecutorOptions SmallOptions(uint32_t kv_dtype = HWINFER_DTYPE_F16) {
  ExecutorOptions options;
  options.max_sequences = 3;
  options.max_batch_tokens = 32;
  options.kv_block_size = 4;
  options.kv_cache_tokens = 256;
  options.kv_dtype = kv_dtype;
  return options;
}

}  // namespace hwinfer::testing_support
