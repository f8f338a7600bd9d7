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
#include "reference/quantize_blocks.h"
#include "reference/reference_llama.h"

namespace hwinfer::testing_support {

// Any of F32, F16, BF16, Q8_0, Q4_0 as f32 values.
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
    case HWINFER_DTYPE_Q8_0:
      reference::dequantize_q8_0(reinterpret_cast<const hwinfer_block_q8_0*>(data), values.data(),
                                 n);
      break;
    case HWINFER_DTYPE_Q4_0:
      reference::dequantize_q4_0(reinterpret_cast<const hwinfer_block_q4_0*>(data), values.data(),
                                 n);
      break;
    default:
      ADD_FAILURE() << info.name << ": no dequantizer for type " << info.ggml_type;
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
