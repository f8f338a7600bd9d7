// llama_reference_weights.h — test helper: a GGUF Llama model's hyperparameters and weights,
// dequantized to f32, in the form the float64 reference forward (reference_llama.h) takes.
// Header-only (tests/unit compiles only *_test.cpp files).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hwinfer/llama_model.h"
#include "hwinfer/plugin.h"
#include "reference/half.h"
#include "reference/reference_llama.h"
#include "reference/weight_blocks.h"

namespace hwinfer::testing_support {

// F32, F16, BF16 or any block-quantized type as f32 values.
inline std::vector<float> DequantizedTensor(const GgufFile& file, const GgufTensorInfo& info) {
  const auto n = static_cast<int64_t>(info.ValueCount());
  std::vector<float> values(static_cast<size_t>(n));
  const uint8_t* data = file.TensorData(info);
  switch (info.ggml_type) {
    case HWINFER_DTYPE_F32:
      std::memcpy(values.data(), data, values.size() * sizeof(float));
      break;
    case HWINFER_DTYPE_F16:
    case HWINFER_DTYPE_BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, data + 2 * i, 2);
        values[static_cast<size_t>(i)] = info.ggml_type == HWINFER_DTYPE_F16
                                             ? reference::f16_to_f32(h)
                                             : reference::bf16_to_f32(h);
      }
      break;
    default:
      if (hwinfer_dtype_block_values(info.ggml_type) == 0) {
        ADD_FAILURE() << info.name << ": no dequantizer for type " << info.ggml_type;
        break;
      }
      reference::dequantize_blocks(info.ggml_type, data, n, values.data());
  }
  return values;
}

inline reference::LlamaConfig ReferenceConfig(const LlamaModel& model) {
  const ModelShape& s = model.shape();
  reference::LlamaConfig c;
  c.n_layers = s.n_layers;
  c.d_model = s.d_model;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.ffn_dim = s.ffn_dim;
  c.vocab_size = s.vocab_size;
  c.rope_theta = s.rope_theta;
  c.rms_eps = s.rms_eps;
  return c;
}

// The rounding that makes the float64 forward follow a runtime on |model|: each matrix's x
// quantized as llama.cpp does for the matrix's type, K and V in f16; |attention_f16| also rounds
// q and the softmax probabilities to f16 (llama.cpp's CPU attention; hwinfer keeps them f32).
inline reference::ReferenceRounding RuntimeRounding(const LlamaModel& model, bool attention_f16) {
  reference::ReferenceRounding rounding;
  rounding.kv_f16 = true;
  rounding.attention_f16 = attention_f16;
  for (const LlamaLayerTensors& l : model.layers()) {
    rounding.layer_types.push_back({l.wq->ggml_type, l.wk->ggml_type, l.wv->ggml_type,
                                    l.wo->ggml_type, l.w_gate->ggml_type, l.w_up->ggml_type,
                                    l.w_down->ggml_type});
  }
  rounding.output_type = model.output().ggml_type;
  return rounding;
}

inline reference::LlamaWeights ReferenceWeights(const LlamaModel& model) {
  const GgufFile& f = model.file();
  auto get = [&f](const GgufTensorInfo* info) { return DequantizedTensor(f, *info); };
  reference::LlamaWeights w;
  w.token_embd = get(&model.token_embd());
  w.output_norm = get(&model.output_norm());
  w.output = get(&model.output());
  for (const LlamaLayerTensors& l : model.layers()) {
    w.layers.push_back({get(l.attn_norm), get(l.wq), get(l.wk), get(l.wv), get(l.wo),
                        get(l.ffn_norm), get(l.w_gate), get(l.w_up), get(l.w_down)});
  }
  return w;
}

}  // namespace hwinfer::testing_support
