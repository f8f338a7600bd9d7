// reference_llama.h — a plain float64 Llama forward pass, one token at a time: the oracle the
// executor's whole-model output is compared against (and, on the shared tiny-llama GGUF files,
// checked itself against llama.cpp's reference tokens).
//
// Reads top to bottom like llama2.c: no threads, no SIMD, no paging, no quantization — weights
// arrive already dequantized to f32 in GGUF's layout ([n_out, n_in] row-major per matrix), and
// RoPE is the NORMAL (adjacent pairs) form llama.cpp uses for the llama architecture. Optionally
// (ReferenceRounding) it rounds where a runtime does: f16 KV, f16 attention operands, 8-bit x.
#ifndef HWINFER_SDK_REFERENCE_REFERENCE_LLAMA_H_
#define HWINFER_SDK_REFERENCE_REFERENCE_LLAMA_H_

#include <array>
#include <cstdint>
#include <vector>

namespace hwinfer::reference {

struct LlamaConfig {
  int64_t n_layers = 0, d_model = 0, n_heads = 0, n_kv_heads = 0, ffn_dim = 0, vocab_size = 0;
  double rope_theta = 10000.0, rms_eps = 1e-5;
  int64_t head_dim() const { return d_model / n_heads; }
};

struct LlamaLayerWeights {
  std::vector<float> attn_norm;  // [d_model]
  std::vector<float> wq;         // [n_heads * head_dim, d_model]
  std::vector<float> wk;         // [n_kv_heads * head_dim, d_model]
  std::vector<float> wv;         // [n_kv_heads * head_dim, d_model]
  std::vector<float> wo;         // [d_model, n_heads * head_dim]
  std::vector<float> ffn_norm;   // [d_model]
  std::vector<float> w_gate;     // [ffn_dim, d_model]
  std::vector<float> w_up;       // [ffn_dim, d_model]
  std::vector<float> w_down;     // [d_model, ffn_dim]
};

struct LlamaWeights {
  std::vector<float> token_embd;  // [vocab_size, d_model]
  std::vector<LlamaLayerWeights> layers;
  std::vector<float> output_norm;  // [d_model]
  std::vector<float> output;       // [vocab_size, d_model]
};

// What a runtime rounds that the plain forward keeps exact, to compare with it closely.
struct ReferenceRounding {
  // K and V rounded to f16 as they are cached (an f16 KV cache).
  bool kv_f16 = false;
  // q and the softmax probabilities rounded to f16 before their products with K and V
  // (llama.cpp's CPU attention converts them to the f16 cache's type).
  bool attention_f16 = false;
  // The GGUF type (HWINFER_DTYPE_*) of every matrix, per layer in the order wq, wk, wv, wo,
  // w_gate, w_up, w_down, and of the output: x is quantized before each product as llama.cpp
  // quantizes activations for that type (weight_blocks.h). Empty: x stays exact.
  std::vector<std::array<uint32_t, 7>> layer_types;
  uint32_t output_type = 0;
};

// One sequence: feed tokens in order; each call returns that position's logits [vocab_size].
class ReferenceLlama {
 public:
  ReferenceLlama(const LlamaConfig& config, const LlamaWeights& weights,
                 ReferenceRounding rounding = {});
  std::vector<double> Forward(int32_t token);
  int64_t position() const { return position_; }

 private:
  const LlamaConfig& config_;
  const LlamaWeights& weights_;
  ReferenceRounding rounding_;
  int64_t position_ = 0;
  // Per layer: keys and values of every position so far, [position][n_kv_heads * head_dim].
  std::vector<std::vector<std::vector<double>>> keys_, values_;
};

}  // namespace hwinfer::reference

#endif  // HWINFER_SDK_REFERENCE_REFERENCE_LLAMA_H_
