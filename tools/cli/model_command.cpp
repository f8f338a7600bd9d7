// model_command.cpp — `hwinfer model synth --shape configs/models/NAME.yaml --type
// f16|bf16|q8_0|q4_0 -o FILE.gguf [--seed S]`: writes a random-weight Llama GGUF model of that
// shape (model_synth.h).
#include <fmt/format.h>

#include "cli_common.h"
#include "model_synth.h"

namespace hwinfer::cli {
namespace {

struct SynthCommandOptions {
  std::string shape;
  std::string type = "f16";
  std::string output;
  uint64_t seed = 0;
};

int RunSynth(const SynthCommandOptions& options) {
  auto path = FindModelShapeFile(options.shape);
  if (!path.ok()) return ReportError(path.status());
  auto shape = LoadModelShape(*path);
  if (!shape.ok()) return ReportError(shape.status());
  auto type = ParseWeightType(options.type);
  if (!type.ok()) return ReportError(type.status());
  SynthOptions synth;
  synth.weight_type = *type;
  synth.seed = options.seed;
  Status written = SynthesizeModel(*shape, synth, options.output);
  if (!written.ok()) return ReportError(written.WithContext(options.output));
  fmt::print("wrote {} ({} {}, {:.3f} B params, seed {})\n", options.output, shape->name,
             options.type, static_cast<double>(shape->TotalParams()) / 1e9, options.seed);
  return 0;
}

}  // namespace

void AddModelCommand(CLI::App& app, int& exit_code) {
  CLI::App* model = app.add_subcommand("model", "Work with model files");
  model->require_subcommand(1);
  auto options = std::make_shared<SynthCommandOptions>();
  CLI::App* synth = model->add_subcommand("synth", "Write a random-weight GGUF model of a shape");
  synth->add_option("--shape", options->shape, "Model shape: a YAML file or a configs/models name")
      ->required();
  synth->add_option("--type", options->type, "Weight type: f16 | bf16 | q8_0 | q4_0 | f32");
  synth->add_option("-o,--output", options->output, "Output .gguf file")->required();
  synth->add_option("--seed", options->seed, "Random seed")->check(SeedValue());
  synth->callback([&exit_code, options] { exit_code = RunSynth(*options); });
}

}  // namespace hwinfer::cli
