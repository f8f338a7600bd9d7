// bench_model_source.cpp — a bench config's model section as a GGUF file (bench_model_source.h).
// Synthesised files are written to a temporary name and renamed, so an interrupted run never
// leaves a half-written model that a later run would reuse.
#include "bench_model_source.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "hwinfer/llama_model.h"
#include "hwinfer/model_shape.h"
#include "model_synth.h"

namespace hwinfer::cli {

std::string BenchCacheDir(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/hwinfer";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/hwinfer";
  }
  return "/tmp/hwinfer-cache";
}

// Bytes per weight of |type| (F16 / BF16 2, F32 4, a block type its block bytes per value).
double BytesPerWeight(uint32_t type) {
  if (hwinfer_dtype_block_values(type) != 0) {
    return static_cast<double>(hwinfer_dtype_block_bytes(type)) / hwinfer_dtype_block_values(type);
  }
  return type == HWINFER_DTYPE_F32 ? 4.0 : 2.0;
}

StatusOr<std::string> ResolveBenchModel(const ModelSource& source) {
  if (!source.path.empty()) return source.path;
  if (source.shape.empty()) return InvalidArgument("model: needs `path` or `shape`");
  HWINFER_ASSIGN_OR_RETURN(const ModelShape shape, LoadModelShape(source.shape));
  HWINFER_ASSIGN_OR_RETURN(const QuantRecipe weights, ParseQuantRecipe(source.type));
  const bool dummy = source.weights == ModelSource::Weights::kDummy;
  const std::filesystem::path dir =
      std::filesystem::path(BenchCacheDir(source.cache_dir)) / "models";
  const std::filesystem::path file =
      dir / fmt::format("{}-{}{}.gguf", shape.name, source.type, dummy ? "-dummy" : "");
  std::error_code error;
  if (std::filesystem::exists(file, error)) {
    // Reuse it only if it still describes this shape (the shape file may have changed).
    auto model = LlamaModel::Open(file.string());
    if (model.ok() && (*model)->shape().n_layers == shape.n_layers &&
        (*model)->shape().d_model == shape.d_model && (*model)->shape().ffn_dim == shape.ffn_dim &&
        (*model)->shape().vocab_size == shape.vocab_size &&
        (*model)->shape().n_kv_heads == shape.n_kv_heads &&
        (*model)->shape().context_length == shape.context_length &&
        (*model)->output().ggml_type ==
            RecipeTensorType(weights, shape, TensorRole::kOutput, -1,
                             static_cast<uint64_t>(shape.d_model))) {  // a file of another mix
      return file.string();
    }
  }
  std::filesystem::create_directories(dir, error);
  if (error) {
    return InvalidArgument(
        fmt::format("model cache {}: cannot create: {}", dir.string(), error.message()));
  }
  if (!dummy) {
    fmt::print(stderr, "hwinfer: synthesising {} ({}, {:.1f} MB, random weights) into {}\n",
               shape.name, source.type,
               static_cast<double>(shape.TotalParams()) * 1e-6 * BytesPerWeight(weights.base),
               file.string());
  }
  SynthOptions options;
  options.weights = weights;
  options.zero_weights = dummy;
  const std::string temp = fmt::format("{}.tmp{}", file.string(), getpid());
  Status written = SynthesizeModel(shape, options, temp);
  if (!written.ok()) {
    std::filesystem::remove(temp, error);
    return written.WithContext("synthesising model " + shape.name);
  }
  std::filesystem::rename(temp, file, error);
  if (error) {
    return InvalidArgument(fmt::format("model cache: cannot rename {} to {}: {}", temp,
                                       file.string(), error.message()));
  }
  return file.string();
}

}  // namespace hwinfer::cli
