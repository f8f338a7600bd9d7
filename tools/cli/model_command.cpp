// model_command.cpp — `hwinfer model synth --shape configs/models/NAME.yaml --type T -o FILE.gguf
// [--seed S] [--pure]`: writes a random-weight Llama GGUF model of that shape (model_synth.h);
// `hwinfer model quantize IN.gguf OUT.gguf --type T [--pure]` converts a float model
// (model_quantize.h). T is one of llama.cpp's recipes (quant_recipe.h).
#include <fmt/format.h>

#include "commands.h"
#include "model_quantize.h"
#include "model_synth.h"

namespace hwinfer::cli {
int RunSynth(const SynthCommandOptions& options) {
  auto path = FindModelShapeFile(options.shape);
  if (!path.ok()) return ReportError(path.status());
  auto shape = LoadModelShape(*path);
  if (!shape.ok()) return ReportError(shape.status());
  auto type = ParseQuantRecipe(options.type, options.pure);
  if (!type.ok()) return ReportError(type.status());
  SynthOptions synth;
  synth.weights = *type;
  synth.seed = options.seed;
  Status written = SynthesizeModel(*shape, synth, options.output);
  if (!written.ok()) return ReportError(written.WithContext(options.output));
  fmt::print("wrote {} ({} {}, {:.3f} B params, seed {})\n", options.output, shape->name,
             options.type, static_cast<double>(shape->TotalParams()) / 1e9, options.seed);
  return 0;
}

int RunQuantize(const QuantizeCommandOptions& options) {
  auto recipe = ParseQuantRecipe(options.type, options.pure);
  if (!recipe.ok()) return ReportError(recipe.status());
  auto summary = QuantizeModel(options.input, options.output, *recipe);
  if (!summary.ok()) return ReportError(summary.status());
  fmt::print("wrote {} ({}{}: {} tensors quantized, {:.1f} MB -> {:.1f} MB of weights)\n",
             options.output, options.type, options.pure ? " pure" : "", summary->tensors_quantized,
             static_cast<double>(summary->bytes_in) / 1e6,
             static_cast<double>(summary->bytes_out) / 1e6);
  return 0;
}

}  // namespace hwinfer::cli
