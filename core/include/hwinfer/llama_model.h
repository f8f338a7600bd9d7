// hwinfer/llama_model.h — a Llama-family model as a GGUF file describes it: the hyperparameters
// from the `llama.*` keys and every tensor the forward pass needs, checked against each other.
//
// Validation only, no devices: LlamaModel::Open either returns a model whose every tensor exists,
// has a type the kernels take (F32, F16, BF16 or a block-quantized GGUF type) and the shape the
// metadata implies, or an error naming the file, the key or tensor, what it holds and what was
// expected. The GGUF file stays mapped for the model's lifetime so weights can be imported without
// a copy.
//
// Tensor names and shapes are llama.cpp's (GGUF dims list the innermost first; shapes here are
// row-major, outermost first):
//   token_embd.weight           [vocab, d_model]
//   blk.N.attn_norm.weight      [d_model]                   F32 (every norm weight is F32)
//   blk.N.attn_q.weight         [n_heads * head_dim, d_model]
//   blk.N.attn_k.weight         [n_kv_heads * head_dim, d_model]
//   blk.N.attn_v.weight         [n_kv_heads * head_dim, d_model]
//   blk.N.attn_output.weight    [d_model, n_heads * head_dim]
//   blk.N.ffn_norm.weight       [d_model]
//   blk.N.ffn_gate.weight       [ffn_dim, d_model]
//   blk.N.ffn_up.weight         [ffn_dim, d_model]
//   blk.N.ffn_down.weight       [d_model, ffn_dim]
//   output_norm.weight          [d_model]
//   output.weight               [vocab, d_model]   (absent = tied to token_embd, as llama.cpp)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/model_shape.h"
#include "hwinfer/status.h"

namespace hwinfer {

struct LlamaLayerTensors {
  const GgufTensorInfo* attn_norm = nullptr;
  const GgufTensorInfo* wq = nullptr;
  const GgufTensorInfo* wk = nullptr;
  const GgufTensorInfo* wv = nullptr;
  const GgufTensorInfo* wo = nullptr;
  const GgufTensorInfo* ffn_norm = nullptr;
  const GgufTensorInfo* w_gate = nullptr;
  const GgufTensorInfo* w_up = nullptr;
  const GgufTensorInfo* w_down = nullptr;
};

class LlamaModel {
 public:
  // Maps and validates |path|. Errors: the GGUF reader's (truncated or corrupt file), an
  // architecture other than "llama" (Unsupported, naming it), a missing key or tensor (NotFound),
  // an unsupported tensor type (Unsupported, naming tensor and type), a tensor shape that
  // disagrees with the metadata (InvalidArgument, naming both).
  static StatusOr<std::shared_ptr<const LlamaModel>> Open(const std::string& path);
  // The same over an already parsed file (tests build files in memory).
  static StatusOr<std::shared_ptr<const LlamaModel>> FromGguf(std::unique_ptr<GgufFile> file);

  const GgufFile& file() const { return *file_; }
  // Hyperparameters (name = general.name or the file name; file = the path).
  const ModelShape& shape() const { return shape_; }
  // llama.rope.dimension_count (head_dim unless the file says otherwise).
  int64_t rope_dim() const { return rope_dim_; }

  const GgufTensorInfo& token_embd() const { return *token_embd_; }
  const GgufTensorInfo& output_norm() const { return *output_norm_; }
  // output.weight, or token_embd.weight when the file ties them.
  const GgufTensorInfo& output() const { return *output_; }
  const std::vector<LlamaLayerTensors>& layers() const { return layers_; }

  // Bytes of every weight tensor (what one forward pass over all layers reads, plus the
  // embedding rows, which are negligible).
  uint64_t weight_bytes() const { return weight_bytes_; }
  // Bytes a decode step reads per token in weights: every layer matrix and norm, the final norm
  // and the output projection (not the embedding table, of which one row is read).
  uint64_t decode_weight_bytes() const { return decode_weight_bytes_; }

 private:
  LlamaModel() = default;
  Status Load();

  std::unique_ptr<GgufFile> file_;
  ModelShape shape_;
  int64_t rope_dim_ = 0;
  const GgufTensorInfo* token_embd_ = nullptr;
  const GgufTensorInfo* output_norm_ = nullptr;
  const GgufTensorInfo* output_ = nullptr;
  std::vector<LlamaLayerTensors> layers_;
  uint64_t weight_bytes_ = 0;
  uint64_t decode_weight_bytes_ = 0;
};

}  // namespace hwinfer
