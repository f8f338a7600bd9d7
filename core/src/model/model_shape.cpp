// model_shape.cpp — parses and validates configs/models/*.yaml and computes parameter and
// KV-cache sizes (model_shape.h). Strict YAML like the runtime config (unknown keys, wrong types,
// missing keys are file:line:column errors). Must not allocate or touch weights.
#include "hwinfer/model_shape.h"

#include <string_view>
#include <vector>

#include "config/yaml_checks.h"

namespace hwinfer {
namespace {

using config_internal::MapEntry;

const std::vector<std::string_view> kShapeKeys = {
    "name",    "architecture", "n_layers",       "d_model",    "n_heads", "n_kv_heads",
    "ffn_dim", "vocab_size",   "context_length", "rope_theta", "rms_eps"};

StatusOr<int64_t> GetPositiveInteger(const std::string& file, const MapEntry& entry) {
  HWINFER_ASSIGN_OR_RETURN(const int64_t value, config_internal::GetInteger(file, entry));
  if (value <= 0) {
    return config_internal::ErrorAt(
        config_internal::ValueLocation(file, entry),
        "'" + entry.key + "' must be an integer > 0; got " + std::to_string(value));
  }
  return value;
}

StatusOr<double> GetPositiveNumber(const std::string& file, const MapEntry& entry) {
  HWINFER_ASSIGN_OR_RETURN(const double value, config_internal::GetNumber(file, entry));
  if (value <= 0) {
    return config_internal::ErrorAt(
        config_internal::ValueLocation(file, entry),
        "'" + entry.key + "' must be a number > 0; got " + config_internal::Describe(entry.value));
  }
  return value;
}

StatusOr<ModelShape> ParseModelShape(const std::string& text, const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(const YAML::Node root,
                           config_internal::ParseSingleDocument(text, path, "a model shape map"));
  HWINFER_ASSIGN_OR_RETURN(
      const std::vector<MapEntry> entries,
      config_internal::ReadMap(path, root, config_internal::LocationOf(path, root), "model shape",
                               kShapeKeys));
  for (std::string_view key : kShapeKeys) {
    HWINFER_RETURN_IF_ERROR(config_internal::RequireKey(path, root, "model shape", entries, key));
  }
  ModelShape shape;
  shape.file = path;
  for (const MapEntry& entry : entries) {
    const std::string& key = entry.key;
    if (key == "name") {
      HWINFER_ASSIGN_OR_RETURN(shape.name, config_internal::GetString(path, entry));
    } else if (key == "architecture") {
      HWINFER_ASSIGN_OR_RETURN(shape.architecture, config_internal::GetString(path, entry));
      if (shape.architecture != "llama") {
        return config_internal::ErrorAt(config_internal::ValueLocation(path, entry),
                                        "unsupported architecture " +
                                            config_internal::Quote(shape.architecture) +
                                            "; expected 'llama'");
      }
    } else if (key == "rope_theta") {
      HWINFER_ASSIGN_OR_RETURN(shape.rope_theta, GetPositiveNumber(path, entry));
    } else if (key == "rms_eps") {
      HWINFER_ASSIGN_OR_RETURN(shape.rms_eps, GetPositiveNumber(path, entry));
    } else {
      HWINFER_ASSIGN_OR_RETURN(const int64_t value, GetPositiveInteger(path, entry));
      if (key == "n_layers") shape.n_layers = value;
      if (key == "d_model") shape.d_model = value;
      if (key == "n_heads") shape.n_heads = value;
      if (key == "n_kv_heads") shape.n_kv_heads = value;
      if (key == "ffn_dim") shape.ffn_dim = value;
      if (key == "vocab_size") shape.vocab_size = value;
      if (key == "context_length") shape.context_length = value;
    }
  }
  HWINFER_RETURN_IF_ERROR(shape.Validate());
  return shape;
}

}  // namespace

int64_t ModelShape::LayerParams() const {
  const int64_t kv_dim = n_kv_heads * head_dim();
  const int64_t attention = d_model * d_model * 2 + d_model * kv_dim * 2;  // q, o; k, v
  const int64_t mlp = 3 * d_model * ffn_dim;                               // gate, up, down
  return attention + mlp + 2 * d_model;                                    // + 2 norms
}

int64_t ModelShape::TotalParams() const {
  return EmbeddingParams() + n_layers * LayerParams() + OutputParams();
}

double ModelShape::KvBytesPerToken(double bytes_per_element) const {
  return static_cast<double>(head_dim()) * static_cast<double>(n_layers) * 2.0 * bytes_per_element *
         static_cast<double>(n_kv_heads);
}

double ModelShape::KvCacheBytes(int64_t batch, int64_t seqlen, double bytes_per_element) const {
  return static_cast<double>(batch) * static_cast<double>(seqlen) *
         KvBytesPerToken(bytes_per_element);
}

Status ModelShape::Validate() const {
  const std::string where = file.empty() ? "model shape '" + name + "'" : file;
  if (n_layers <= 0 || d_model <= 0 || n_heads <= 0 || n_kv_heads <= 0 || ffn_dim <= 0 ||
      vocab_size <= 0 || context_length <= 0) {
    return InvalidArgument(where + ": every size must be > 0");
  }
  if (d_model % n_heads != 0) {
    return InvalidArgument(where + ": n_heads (" + std::to_string(n_heads) +
                           ") must divide d_model (" + std::to_string(d_model) + ")");
  }
  if (n_heads % n_kv_heads != 0) {
    return InvalidArgument(where + ": n_kv_heads (" + std::to_string(n_kv_heads) +
                           ") must divide n_heads (" + std::to_string(n_heads) + ")");
  }
  if (head_dim() % 2 != 0) {
    return InvalidArgument(where + ": head_dim (d_model / n_heads = " + std::to_string(head_dim()) +
                           ") must be even for RoPE");
  }
  return Status::Ok();
}

StatusOr<ModelShape> LoadModelShape(const std::string& path) {
  HWINFER_ASSIGN_OR_RETURN(const std::string text,
                           config_internal::ReadTextFile(path, "model shape file"));
  try {
    return ParseModelShape(text, path);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": unexpected YAML error: " + e.msg);
  }
}

}  // namespace hwinfer
