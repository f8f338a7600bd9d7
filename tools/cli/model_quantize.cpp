// model_quantize.cpp — see model_quantize.h.
#include "model_quantize.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/plugin.h"
#include "reference/half.h"
#include "reference/quantize_weights.h"

namespace hwinfer::cli {
namespace {

bool IsFloatType(uint32_t type) {
  return type == HWINFER_DTYPE_F32 || type == HWINFER_DTYPE_F16 || type == HWINFER_DTYPE_BF16;
}

// The values of an F32 / F16 / BF16 tensor as f32.
std::vector<float> ToF32(const GgufTensorInfo& tensor, const uint8_t* data) {
  std::vector<float> values(tensor.ValueCount());
  for (size_t i = 0; i < values.size(); ++i) {
    if (tensor.ggml_type == HWINFER_DTYPE_F32) {
      std::memcpy(&values[i], data + 4 * i, 4);
      continue;
    }
    uint16_t bits = 0;
    std::memcpy(&bits, data + 2 * i, 2);
    values[i] = tensor.ggml_type == HWINFER_DTYPE_F16 ? reference::f16_to_f32(bits)
                                                      : reference::bf16_to_f32(bits);
  }
  return values;
}

// The layer count and head counts the recipes look at, from the file's metadata.
StatusOr<ModelShape> RecipeShape(const GgufFile& file) {
  auto arch = file.GetString("general.architecture");
  if (!arch.ok()) return arch.status();
  ModelShape shape;
  auto layers = file.GetUint32(*arch + ".block_count");
  auto heads = file.GetUint32(*arch + ".attention.head_count");
  if (!layers.ok()) return layers.status();
  if (!heads.ok()) return heads.status();
  auto kv_heads = file.GetUint32(*arch + ".attention.head_count_kv");
  shape.n_layers = *layers;
  shape.n_heads = *heads;
  shape.n_kv_heads = kv_heads.ok() ? *kv_heads : *heads;
  return shape;
}

// Every key of |file|, general.file_type set to the recipe's.
Status CopyMetadata(const GgufFile& file, const QuantRecipe& recipe, GgufWriter& writer) {
  bool has_file_type = false, has_version = false;
  for (const auto& [key, value] : file.metadata()) {
    has_file_type |= key == "general.file_type";
    has_version |= key == "general.quantization_version";
    HWINFER_RETURN_IF_ERROR(writer.AddKv(
        key, key == "general.file_type" ? GgufValue::Uint32(recipe.file_type) : value));
  }
  if (!has_file_type) {
    HWINFER_RETURN_IF_ERROR(writer.AddKv("general.file_type", GgufValue::Uint32(recipe.file_type)));
  }
  if (!has_version && !IsFloatType(recipe.base)) {  // GGML's quantization format version
    HWINFER_RETURN_IF_ERROR(writer.AddKv("general.quantization_version", GgufValue::Uint32(2)));
  }
  return Status::Ok();
}

// The type |tensor| is written in: matrices per the recipe, anything else as it is.
StatusOr<uint32_t> OutputType(const GgufTensorInfo& tensor, const QuantRecipe& recipe,
                              const ModelShape& shape) {
  const bool matrix = tensor.dims.size() == 2 && tensor.name.size() > 7 &&
                      tensor.name.compare(tensor.name.size() - 7, 7, ".weight") == 0;
  if (!matrix) return tensor.ggml_type;
  if (!IsFloatType(tensor.ggml_type)) {
    return InvalidArgument("tensor " + tensor.name + " is already " +
                           GgmlTypeName(tensor.ggml_type) +
                           "; model quantize reads F32, F16 or BF16 weights");
  }
  int64_t layer = 0;
  const TensorRole role = RoleOf(tensor.name, &layer);
  const uint32_t type = RecipeTensorType(recipe, shape, role, layer, tensor.dims[0]);
  const uint64_t block = hwinfer_dtype_block_values(type);
  if (block > 1 && tensor.dims[0] % block != 0) {
    return InvalidArgument("tensor " + tensor.name + " has rows of " +
                           std::to_string(tensor.dims[0]) + " values, not whole " +
                           GgmlTypeName(type) + " blocks of " + std::to_string(block));
  }
  return type;
}

}  // namespace

StatusOr<QuantizeSummary> QuantizeModel(const std::string& in, const std::string& out,
                                        const QuantRecipe& recipe) {
  std::error_code same_error;
  if (std::filesystem::exists(out) && std::filesystem::equivalent(in, out, same_error)) {
    return InvalidArgument("the output " + out + " is the input file; write to another path");
  }
  if (!reference::can_quantize_weights(recipe.base)) {
    return InvalidArgument(std::string("no quantizer for ") + GgmlTypeName(recipe.base));
  }
  auto file = GgufFile::Open(in);
  if (!file.ok()) return file.status();
  auto shape = RecipeShape(**file);
  if (!shape.ok()) return shape.status().WithContext(in);
  GgufWriter writer;
  HWINFER_RETURN_IF_ERROR(CopyMetadata(**file, recipe, writer));
  QuantizeSummary summary;
  std::vector<std::vector<uint8_t>> converted;  // alive until WriteFile returns
  converted.reserve((*file)->tensors().size());
  for (const GgufTensorInfo& tensor : (*file)->tensors()) {
    auto type = OutputType(tensor, recipe, *shape);
    if (!type.ok()) return type.status().WithContext(in);
    const uint8_t* data = (*file)->TensorData(tensor);
    summary.bytes_in += tensor.size_bytes;
    if (*type == tensor.ggml_type) {
      HWINFER_RETURN_IF_ERROR(
          writer.AddTensor(tensor.name, tensor.ggml_type, tensor.dims, data, tensor.size_bytes));
      summary.bytes_out += tensor.size_bytes;
      continue;
    }
    converted.push_back(reference::quantize_weights(ToF32(tensor, data), *type));
    HWINFER_RETURN_IF_ERROR(writer.AddTensor(tensor.name, *type, tensor.dims,
                                             converted.back().data(), converted.back().size()));
    summary.bytes_out += converted.back().size();
    ++summary.tensors_quantized;
  }
  const std::string partial = out + ".partial";
  Status written = writer.WriteFile(partial);
  if (!written.ok()) {
    std::remove(partial.c_str());
    return written.WithContext(out);
  }
  std::error_code rename_error;
  std::filesystem::rename(partial, out, rename_error);
  if (rename_error) {
    std::remove(partial.c_str());
    return Internal("renaming " + partial + " to " + out + ": " + rename_error.message());
  }
  return summary;
}

}  // namespace hwinfer::cli
