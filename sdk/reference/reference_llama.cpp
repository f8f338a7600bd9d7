// reference_llama.cpp — see reference_llama.h. Every intermediate is double (then rounded as
// ReferenceRounding asks).
#include "reference/reference_llama.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "hwinfer/plugin.h"
#include "reference/half.h"
#include "reference/reference_ops.h"
#include "reference/weight_blocks.h"

namespace hwinfer::reference {
namespace {

using Vec = std::vector<double>;

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]
Vec rmsnorm(const Vec& x, const std::vector<float>& weight, double eps) {
  double sum_squares = 0;
  for (double v : x) sum_squares += v * v;
  const double scale = 1.0 / std::sqrt(sum_squares / static_cast<double>(x.size()) + eps);
  Vec out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * scale * weight[i];
  return out;
}

// W (n_out, n_in) @ x (n_in,) -> (n_out,)
Vec matmul(const std::vector<float>& w, const Vec& x, int64_t n_out) {
  const size_t n_in = x.size();
  Vec out(static_cast<size_t>(n_out), 0.0);
  for (size_t o = 0; o < out.size(); ++o) {
    const float* row = w.data() + o * n_in;
    double sum = 0;
    for (size_t i = 0; i < n_in; ++i) sum += static_cast<double>(row[i]) * x[i];
    out[o] = sum;
  }
  return out;
}

// x as llama.cpp quantizes it for a matrix of GGUF type |type| (x.size() a multiple of the
// activation block); x unchanged for F32 / F16 / BF16 (type 0, 1, 30).
Vec quantize_x(const Vec& x, uint32_t type) {
  if (hwinfer_dtype_block_values(type) == 0) return x;
  const ActivationFormat format = activation_format_for(type);
  const auto block = static_cast<size_t>(activation_block_values(format));
  Vec out(x.size());
  std::vector<float> values(block);
  for (size_t b = 0; b < x.size() / block; ++b) {
    for (size_t t = 0; t < block; ++t) values[t] = static_cast<float>(x[b * block + t]);
    const ActivationBlock q = quantize_activation_block(format, values.data());
    for (size_t t = 0; t < block; ++t) {
      out[b * block + t] = static_cast<double>(q.d) * static_cast<double>(q.q[t]);
    }
  }
  return out;
}

// |v| rounded to f16 when |round| (else unchanged).
double maybe_f16(double v, bool round) {
  return round ? static_cast<double>(f16_to_f32(f32_to_f16(static_cast<float>(v)))) : v;
}

void maybe_f16(Vec& v, bool round) {
  for (double& e : v) e = maybe_f16(e, round);
}

// Rotates adjacent pairs (2i, 2i+1) of every head by position * theta^(-2i / head_dim).
void rope(Vec& x, int64_t n_heads, int64_t head_dim, int64_t position, double theta) {
  for (int64_t h = 0; h < n_heads; ++h) {
    rope_head_reference(x.data() + h * head_dim, head_dim, position, theta, RopeMode::kNormal);
  }
}

}  // namespace

ReferenceLlama::ReferenceLlama(const LlamaConfig& config, const LlamaWeights& weights,
                               ReferenceRounding rounding)
    : config_(config),
      weights_(weights),
      rounding_(std::move(rounding)),
      keys_(static_cast<size_t>(config.n_layers)),
      values_(static_cast<size_t>(config.n_layers)) {}

std::vector<double> ReferenceLlama::Forward(int32_t token) {
  const LlamaConfig& c = config_;
  const int64_t hd = c.head_dim(), kv_dim = c.n_kv_heads * hd, group = c.n_heads / c.n_kv_heads;
  Vec x(static_cast<size_t>(c.d_model));
  for (int64_t i = 0; i < c.d_model; ++i) {
    x[static_cast<size_t>(i)] = weights_.token_embd[static_cast<size_t>(token * c.d_model + i)];
  }
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const LlamaLayerWeights& w = weights_.layers[static_cast<size_t>(l)];
    std::array<uint32_t, 7> types{};  // x exact
    if (!rounding_.layer_types.empty()) types = rounding_.layer_types[static_cast<size_t>(l)];
    // Attention: h = rmsnorm(x); q, k, v = Wq h, Wk h, Wv h; RoPE on q and k.
    Vec h = rmsnorm(x, w.attn_norm, c.rms_eps);
    Vec q = matmul(w.wq, quantize_x(h, types[0]), c.n_heads * hd);
    Vec k = matmul(w.wk, quantize_x(h, types[1]), kv_dim);
    Vec v = matmul(w.wv, quantize_x(h, types[2]), kv_dim);
    rope(q, c.n_heads, hd, position_, c.rope_theta);
    rope(k, c.n_kv_heads, hd, position_, c.rope_theta);
    maybe_f16(k, rounding_.kv_f16);
    maybe_f16(v, rounding_.kv_f16);
    maybe_f16(q, rounding_.attention_f16);
    keys_[static_cast<size_t>(l)].push_back(k);
    values_[static_cast<size_t>(l)].push_back(v);
    const auto& keys = keys_[static_cast<size_t>(l)];
    const auto& values = values_[static_cast<size_t>(l)];
    // softmax(q k^T / sqrt(hd)) v over positions 0..position_, head h reading KV head h / group.
    Vec attention(static_cast<size_t>(c.n_heads * hd), 0.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    for (int64_t head = 0; head < c.n_heads; ++head) {
      const int64_t kv_head = head / group;
      Vec scores(keys.size());
      double max_score = -INFINITY;
      for (size_t t = 0; t < keys.size(); ++t) {
        double dot = 0;
        for (int64_t i = 0; i < hd; ++i) {
          dot += q[static_cast<size_t>(head * hd + i)] *
                 keys[t][static_cast<size_t>(kv_head * hd + i)];
        }
        scores[t] = dot * scale;
        max_score = std::max(max_score, scores[t]);
      }
      double total = 0;
      for (double& s : scores) total += (s = std::exp(s - max_score));
      for (size_t t = 0; t < keys.size(); ++t) {
        for (int64_t i = 0; i < hd; ++i) {
          attention[static_cast<size_t>(head * hd + i)] +=
              maybe_f16(scores[t] / total, rounding_.attention_f16) *
              values[t][static_cast<size_t>(kv_head * hd + i)];
        }
      }
    }
    Vec o = matmul(w.wo, quantize_x(attention, types[3]), c.d_model);
    for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
    // MLP: x += W_down (silu(W_gate h) * W_up h), h = rmsnorm(x).
    h = rmsnorm(x, w.ffn_norm, c.rms_eps);
    Vec gate = matmul(w.w_gate, quantize_x(h, types[4]), c.ffn_dim);
    Vec up = matmul(w.w_up, quantize_x(h, types[5]), c.ffn_dim);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
    Vec down = matmul(w.w_down, quantize_x(gate, types[6]), c.d_model);
    for (size_t i = 0; i < x.size(); ++i) x[i] += down[i];
  }
  ++position_;
  return matmul(weights_.output,
                quantize_x(rmsnorm(x, weights_.output_norm, c.rms_eps), rounding_.output_type),
                c.vocab_size);
}

}  // namespace hwinfer::reference
