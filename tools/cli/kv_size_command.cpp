// kv_size_command.cpp — `hwinfer kv-size --model M [--batch 1,8,...] [--seqlen 1024,...] [--json]`:
// the KV-cache size table of a model shape (the founding article's formula, model_shape.h), in
// f16 and int8, beside the f16 weight bytes. Arithmetic only: nothing is loaded or allocated.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "hwinfer/model_shape.h"
#include "hwinfer/text_escape.h"

namespace hwinfer::cli {
int RunKvSize(const KvSizeOptions& options) {
  auto path = FindModelShapeFile(options.model);
  if (!path.ok()) return ReportError(path.status());
  auto shape = LoadModelShape(*path);
  if (!shape.ok()) return ReportError(shape.status());
  std::vector<int64_t> seqlens = options.seqlens;
  if (seqlens.empty()) seqlens.push_back(shape->context_length);
  for (int64_t seqlen : seqlens) {
    // Arithmetic still holds past the context, but no request of this model can be that long.
    if (seqlen > shape->context_length) {
      fmt::print(stderr,
                 "hwinfer: warning: seqlen {} is past the context length of {} ({}); no sequence "
                 "of this model holds that many tokens\n",
                 seqlen, EscapeControlCharacters(shape->name), shape->context_length);
    }
  }

  const double weight_bytes_f16 = 2.0 * static_cast<double>(shape->TotalParams());
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t batch : options.batches) {
    for (int64_t seqlen : seqlens) {
      rows.push_back({{"batch", batch},
                      {"seqlen", seqlen},
                      {"kv_bytes_f16", shape->KvCacheBytes(batch, seqlen, 2.0)},
                      {"kv_bytes_int8", shape->KvCacheBytes(batch, seqlen, 1.0)}});
    }
  }
  if (options.json) {
    nlohmann::json out = {{"model", shape->name},
                          {"params", shape->TotalParams()},
                          {"weight_bytes_f16", weight_bytes_f16},
                          {"kv_bytes_per_token_f16", shape->KvBytesPerToken(2.0)},
                          {"rows", rows}};
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{}: {} layers, d_model {}, {} heads, {} KV heads (head_dim {}), {:.2f} B params\n",
             shape->name, shape->n_layers, shape->d_model, shape->n_heads, shape->n_kv_heads,
             shape->head_dim(), static_cast<double>(shape->TotalParams()) / 1e9);
  fmt::print("weights (f16): {:.2f} GiB; KV cache per token (f16): {:.1f} KiB\n",
             weight_bytes_f16 / (1 << 30), shape->KvBytesPerToken(2.0) / 1024.0);
  fmt::print("KV bytes = batch x seqlen x head_dim x n_layers x 2 x bytes x n_kv_heads\n\n");
  fmt::print("{:>6} {:>8} {:>14} {:>14} {:>18}\n", "batch", "seqlen", "KV f16 (GiB)",
             "KV int8 (GiB)", "KV f16 / weights");
  for (const nlohmann::json& row : rows) {
    const double f16 = row["kv_bytes_f16"].get<double>();
    fmt::print("{:>6} {:>8} {:>14.3f} {:>14.3f} {:>17.1f}%\n", row["batch"].get<int64_t>(),
               row["seqlen"].get<int64_t>(), f16 / (1 << 30),
               row["kv_bytes_int8"].get<double>() / (1 << 30), 100.0 * f16 / weight_bytes_f16);
  }
  return 0;
}

StatusOr<std::string> FindModelShapeFile(const std::string& model) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(model, ec)) return model;
  const std::string file = model + ".yaml";
  std::vector<fs::path> folders = {fs::path("configs") / "models"};
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) folders.push_back(exe.parent_path() / ".." / "share" / "hwinfer" / "models");
  folders.push_back(fs::path(HWINFER_CLI_SOURCE_DIR) / "configs" / "models");
  std::string searched;
  for (const fs::path& folder : folders) {
    if (fs::is_regular_file(folder / file, ec)) return (folder / file).lexically_normal().string();
    searched += (searched.empty() ? "" : ", ") + folder.lexically_normal().string();
  }
  return NotFound("model '" + model + "': no such file, and no " + file + " in " + searched);
}

}  // namespace hwinfer::cli
