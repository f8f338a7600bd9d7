// hwinfer/model_shape.h — the shape of a Llama-family decoder (configs/models/*.yaml) and the
// sizes that follow from it: parameter count, weight bytes per dtype, KV-cache bytes.
//
// Arithmetic and validation only: no weights, no devices. The KV-cache formula is the founding
// article's: batch x seqlen x head_dim x n_layers x 2 (K and V) x bytes_per_elem x n_kv_heads.
//
//   name: llama2-7b              # required string
//   architecture: llama          # required; only "llama" today
//   n_layers: 32                 # required integers > 0
//   d_model: 4096
//   n_heads: 32
//   n_kv_heads: 32               # divides n_heads (GQA/MQA when smaller)
//   ffn_dim: 11008
//   vocab_size: 32000
//   context_length: 4096
//   rope_theta: 10000            # required number > 0
//   rms_eps: 1.0e-5              # required number > 0
#pragma once

#include <cstdint>
#include <string>

#include "hwinfer/status.h"

namespace hwinfer {

struct ModelShape {
  std::string file;  // where it was read from ("" when built in code)
  std::string name;
  std::string architecture = "llama";
  int64_t n_layers = 0;
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t ffn_dim = 0;
  int64_t vocab_size = 0;
  int64_t context_length = 0;
  double rope_theta = 10000.0;
  double rms_eps = 1e-5;

  int64_t head_dim() const { return d_model / n_heads; }

  // Parameters of each part (the output projection is counted separately from the embedding,
  // as Llama does not tie them).
  int64_t EmbeddingParams() const { return vocab_size * d_model; }
  int64_t LayerParams() const;  // attention (q, k, v, o) + gated MLP + two norm weights
  int64_t OutputParams() const { return vocab_size * d_model + d_model; }  // final norm + head
  int64_t TotalParams() const;

  // KV-cache bytes for |batch| sequences of |seqlen| tokens at |bytes_per_element| (2 for f16,
  // 1 for int8; int8's per-block scales are not included).
  double KvCacheBytes(int64_t batch, int64_t seqlen, double bytes_per_element) const;
  // Bytes of the K and V of one token in all layers.
  double KvBytesPerToken(double bytes_per_element) const;

  // InvalidArgument naming the field when the shape is inconsistent (n_heads does not divide
  // d_model, n_kv_heads does not divide n_heads, a size <= 0, ...).
  Status Validate() const;
};

// Reads configs/models/NAME.yaml; errors name file:line:column and the expected form.
StatusOr<ModelShape> LoadModelShape(const std::string& path);

}  // namespace hwinfer
