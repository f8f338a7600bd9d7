// generate_command.cpp — `hwinfer generate -m FILE.gguf --prompt-tokens 1,2,3 -n 32 [--backend B |
// --device D] [--seed S] [--temperature T] [--top-k K] [--top-p P] [--kv-dtype f16|i8]`: runs the
// model on one device and prints the generated token ids on one line (no tokenizer yet: ids in,
// ids out). With --timing, TTFT and TPOT go to stderr.
#include <fmt/format.h>

#include "cli_common.h"
#include "hwinfer/generate.h"
#include "model_run.h"

namespace hwinfer::cli {
namespace {

struct GenerateOptions {
  ModelRunOptions run;
  std::vector<int32_t> prompt;
  int64_t n_new = 32;
  SamplingParams sampling;
  bool timing = false;
};

int RunGenerate(const GlobalOptions& global, const GenerateOptions& options) {
  if (Status valid = options.sampling.Validate(); !valid.ok()) return ReportError(valid);
  auto opened = OpenModel(global, options.run, 1);
  if (!opened.ok()) return ReportError(opened.status());
  auto result = Generate(*(*opened)->executor, {options.prompt}, options.n_new, options.sampling);
  if (!result.ok()) return ReportError(result.status().WithContext(options.run.model_path));
  fmt::print("{}\n", fmt::join(result->tokens.front(), " "));
  if (options.timing) {
    double decode = 0;
    for (double s : result->decode_step_seconds) decode += s;
    const double tpot = result->decode_step_seconds.empty()
                            ? 0
                            : decode / static_cast<double>(result->decode_step_seconds.size());
    fmt::print(stderr, "TTFT {:.2f} ms ({} prompt tokens), TPOT {:.2f} ms (mean of {} steps)\n",
               result->prefill_seconds * 1e3, options.prompt.size(), tpot * 1e3,
               result->decode_step_seconds.size());
  }
  return 0;
}

}  // namespace

void AddGenerateCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand("generate", "Generate token ids from a GGUF model");
  AddModelRunOptions(command, options->run);
  command->add_option("--prompt-tokens", options->prompt, "Prompt token ids, comma-separated")
      ->required()
      ->delimiter(',');
  command->add_option("-n,--n-predict", options->n_new, "Tokens to generate")
      ->check(CLI::PositiveNumber);
  command->add_option("--seed", options->sampling.seed, "Sampling seed");
  command->add_option("--temperature", options->sampling.temperature, "0 = greedy");
  command->add_option("--top-k", options->sampling.top_k, "0 = no limit");
  command->add_option("--top-p", options->sampling.top_p, "1 = no limit");
  command->add_flag("--timing", options->timing, "Print TTFT and TPOT to stderr");
  command->callback([&global, &exit_code, options] { exit_code = RunGenerate(global, *options); });
}

}  // namespace hwinfer::cli
