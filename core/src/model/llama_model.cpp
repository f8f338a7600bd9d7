// llama_model.cpp — see hwinfer/llama_model.h: Llama hyperparameters from the `llama.*` GGUF keys
// and every tensor of the forward pass, each checked for presence, type and shape.
#include "hwinfer/llama_model.h"

#include <fmt/format.h>

#include "hwinfer/plugin.h"

namespace hwinfer {
namespace {

std::string ShapeString(const std::vector<int64_t>& shape) {
  return "[" + fmt::format("{}", fmt::join(shape, ", ")) + "]";
}

// A required unsigned key, > 0.
StatusOr<int64_t> RequiredSize(const GgufFile& file, const std::string& key) {
  HWINFER_ASSIGN_OR_RETURN(const uint32_t value, file.GetUint32(key));
  if (value == 0) return InvalidArgument(file.name() + ": " + key + " is 0; expected > 0");
  return static_cast<int64_t>(value);
}

// An optional unsigned key (|fallback| when absent).
StatusOr<int64_t> OptionalSize(const GgufFile& file, const std::string& key, int64_t fallback) {
  if (file.Find(key) == nullptr) return fallback;
  return RequiredSize(file, key);
}

// The tensors of one layer: attn_norm, q, k, v, output, ffn_norm, gate, up, down.
constexpr uint64_t kTensorsPerLayer = 9;

// A tensor "blk.N.*" with N >= block_count belongs to a layer the metadata does not have: the file
// and its metadata disagree (running only the first block_count layers would be a wrong model).
Status CheckNoLayerPastBlockCount(const GgufFile& f, int64_t n_layers) {
  for (const GgufTensorInfo& tensor : f.tensors()) {
    if (!tensor.name.starts_with("blk.")) continue;
    const size_t dot = tensor.name.find('.', 4);
    const std::string digits = tensor.name.substr(4, dot == std::string::npos ? dot : dot - 4);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const int64_t layer = std::stoll(digits);
    if (layer >= n_layers) {
      return InvalidArgument(fmt::format(
          "{}: tensor {} belongs to layer {}, but llama.block_count is {}; the file's layers "
          "and its metadata disagree",
          f.name(), tensor.name, layer, n_layers));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::shared_ptr<const LlamaModel>> LlamaModel::Open(const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(auto file, GgufFile::Open(path));
  return FromGguf(std::move(file));
}

StatusOr<std::shared_ptr<const LlamaModel>> LlamaModel::FromGguf(std::unique_ptr<GgufFile> file) {
  std::shared_ptr<LlamaModel> model(new LlamaModel());
  model->file_ = std::move(file);
  HWINFER_RETURN_IF_ERROR(model->Load());
  return std::shared_ptr<const LlamaModel>(std::move(model));
}

Status LlamaModel::Load() {
  const GgufFile& f = *file_;
  const std::string& where = f.name();
  HWINFER_ASSIGN_OR_RETURN(const std::string architecture, f.GetString("general.architecture"));
  if (architecture != "llama") {
    return Unsupported(where + ": general.architecture is '" + architecture +
                       "'; hwinfer runs the 'llama' architecture (Llama, Mistral, TinyLlama, ...)");
  }
  shape_.file = where;
  shape_.name = f.Find("general.name") != nullptr ? *f.GetString("general.name") : where;
  HWINFER_ASSIGN_OR_RETURN(shape_.n_layers, RequiredSize(f, "llama.block_count"));
  // Nothing is sized by block_count before it is checked against the tensors the file holds.
  const uint64_t most_layers = f.tensors().size() / kTensorsPerLayer;
  if (static_cast<uint64_t>(shape_.n_layers) > most_layers) {
    return InvalidArgument(fmt::format(
        "{}: llama.block_count is {} but the file holds {} tensors, room for at most {} layers "
        "({} tensors each)",
        where, shape_.n_layers, f.tensors().size(), most_layers, kTensorsPerLayer));
  }
  HWINFER_ASSIGN_OR_RETURN(shape_.d_model, RequiredSize(f, "llama.embedding_length"));
  HWINFER_ASSIGN_OR_RETURN(shape_.n_heads, RequiredSize(f, "llama.attention.head_count"));
  HWINFER_ASSIGN_OR_RETURN(shape_.n_kv_heads,
                           OptionalSize(f, "llama.attention.head_count_kv", shape_.n_heads));
  HWINFER_ASSIGN_OR_RETURN(shape_.ffn_dim, RequiredSize(f, "llama.feed_forward_length"));
  HWINFER_ASSIGN_OR_RETURN(shape_.context_length, RequiredSize(f, "llama.context_length"));
  if (f.Find("llama.rope.freq_base") != nullptr) {
    HWINFER_ASSIGN_OR_RETURN(shape_.rope_theta, f.GetFloat64("llama.rope.freq_base"));
  }
  HWINFER_ASSIGN_OR_RETURN(shape_.rms_eps, f.GetFloat64("llama.attention.layer_norm_rms_epsilon"));
  if (!(shape_.rope_theta > 0) || !(shape_.rms_eps > 0)) {
    return InvalidArgument(where +
                           ": llama.rope.freq_base and "
                           "llama.attention.layer_norm_rms_epsilon must be > 0");
  }

  // The vocabulary is the embedding's row count (llama.vocab_size is optional in GGUF).
  token_embd_ = f.FindTensor("token_embd.weight");
  if (token_embd_ == nullptr) return NotFound(where + ": no tensor token_embd.weight");
  if (token_embd_->dims.size() != 2) {
    return InvalidArgument(where + ": tensor token_embd.weight has " +
                           std::to_string(token_embd_->dims.size()) +
                           " dimensions; expected 2 ([vocab, d_model])");
  }
  shape_.vocab_size = static_cast<int64_t>(token_embd_->dims[1]);
  if (f.Find("llama.vocab_size") != nullptr) {
    HWINFER_ASSIGN_OR_RETURN(const int64_t declared, RequiredSize(f, "llama.vocab_size"));
    if (declared != shape_.vocab_size) {
      return InvalidArgument(
          fmt::format("{}: llama.vocab_size is {} but token_embd.weight has {} rows", where,
                      declared, shape_.vocab_size));
    }
  }
  HWINFER_RETURN_IF_ERROR(shape_.Validate());
  HWINFER_ASSIGN_OR_RETURN(rope_dim_,
                           OptionalSize(f, "llama.rope.dimension_count", shape_.head_dim()));
  if (rope_dim_ > shape_.head_dim() || rope_dim_ % 2 != 0) {
    return InvalidArgument(fmt::format(
        "{}: llama.rope.dimension_count is {}; expected an even number <= head_dim ({})", where,
        rope_dim_, shape_.head_dim()));
  }

  const int64_t d = shape_.d_model, hd = shape_.head_dim();
  const int64_t q_dim = shape_.n_heads * hd, kv_dim = shape_.n_kv_heads * hd;
  const std::string metadata = fmt::format(
      "(llama.embedding_length={}, head_count={}, head_count_kv={}, feed_forward_length={}, "
      "vocab={})",
      d, shape_.n_heads, shape_.n_kv_heads, shape_.ffn_dim, shape_.vocab_size);
  // Finds |name| and checks its type and row-major |shape|.
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape,
                    const GgufTensorInfo** out) -> Status {
    const GgufTensorInfo* info = f.FindTensor(name);
    if (info == nullptr) return NotFound(where + ": no tensor " + name);
    if (!GgmlTypeIsSupported(info->ggml_type)) {
      const char* type = GgmlTypeName(info->ggml_type);
      return Unsupported(fmt::format(
          "{}: tensor {} has type {}; hwinfer's kernels take F32, F16, BF16, Q4_0, Q4_1, Q5_0, "
          "Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_NL",
          where, name, type != nullptr ? type : fmt::format("unknown ({})", info->ggml_type)));
    }
    if (shape.size() == 1 && info->ggml_type != HWINFER_DTYPE_F32) {
      return Unsupported(fmt::format(
          "{}: norm weight {} has type {}; hwinfer takes F32 norm weights (as llama.cpp's "
          "converters and quantizer write them)",
          where, name, GgmlTypeName(info->ggml_type)));
    }
    if (info->RowMajorShape() != shape) {
      return InvalidArgument(fmt::format("{}: tensor {} has shape {}; the metadata {} implies {}",
                                         where, name, ShapeString(info->RowMajorShape()), metadata,
                                         ShapeString(shape)));
    }
    *out = info;
    return Status::Ok();
  };

  HWINFER_RETURN_IF_ERROR(tensor("token_embd.weight", {shape_.vocab_size, d}, &token_embd_));
  HWINFER_RETURN_IF_ERROR(tensor("output_norm.weight", {d}, &output_norm_));
  if (f.FindTensor("output.weight") != nullptr) {
    HWINFER_RETURN_IF_ERROR(tensor("output.weight", {shape_.vocab_size, d}, &output_));
  } else {
    output_ = token_embd_;  // tied embeddings
  }
  layers_.resize(static_cast<size_t>(shape_.n_layers));
  for (int64_t l = 0; l < shape_.n_layers; ++l) {
    LlamaLayerTensors& t = layers_[static_cast<size_t>(l)];
    const std::string p = "blk." + std::to_string(l) + ".";
    HWINFER_RETURN_IF_ERROR(tensor(p + "attn_norm.weight", {d}, &t.attn_norm));
    HWINFER_RETURN_IF_ERROR(tensor(p + "attn_q.weight", {q_dim, d}, &t.wq));
    HWINFER_RETURN_IF_ERROR(tensor(p + "attn_k.weight", {kv_dim, d}, &t.wk));
    HWINFER_RETURN_IF_ERROR(tensor(p + "attn_v.weight", {kv_dim, d}, &t.wv));
    HWINFER_RETURN_IF_ERROR(tensor(p + "attn_output.weight", {d, q_dim}, &t.wo));
    HWINFER_RETURN_IF_ERROR(tensor(p + "ffn_norm.weight", {d}, &t.ffn_norm));
    HWINFER_RETURN_IF_ERROR(tensor(p + "ffn_gate.weight", {shape_.ffn_dim, d}, &t.w_gate));
    HWINFER_RETURN_IF_ERROR(tensor(p + "ffn_up.weight", {shape_.ffn_dim, d}, &t.w_up));
    HWINFER_RETURN_IF_ERROR(tensor(p + "ffn_down.weight", {d, shape_.ffn_dim}, &t.w_down));
    for (const GgufTensorInfo* info :
         {t.attn_norm, t.wq, t.wk, t.wv, t.wo, t.ffn_norm, t.w_gate, t.w_up, t.w_down}) {
      decode_weight_bytes_ += info->size_bytes;
    }
  }
  HWINFER_RETURN_IF_ERROR(CheckNoLayerPastBlockCount(f, shape_.n_layers));
  decode_weight_bytes_ += output_norm_->size_bytes + output_->size_bytes;
  weight_bytes_ = decode_weight_bytes_ + (output_ == token_embd_ ? 0 : token_embd_->size_bytes);
  return Status::Ok();
}

}  // namespace hwinfer
