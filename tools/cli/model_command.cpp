// model_command.cpp — `hwinfer model synth --shape configs/models/NAME.yaml --type
// f16|bf16|q8_0|q4_0 -o FILE.gguf [--seed S]`: writes a random-weight Llama GGUF model of that
// shape (model_synth.h).
#include <fmt/format.h>

#include "commands.h"
#include "model_synth.h"

namespace hwinfer::cli {
int RunSynth(const SynthCommandOptions& options) {
  auto path = FindModelShapeFile(options.shape);
  if (!path.ok()) return ReportError(path.status());
  auto shape = LoadModelShape(*path);
  if (!shape.ok()) return ReportError(shape.status());
  auto type = ParseWeightType(options.type);
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

}  // namespace hwinfer::cli
