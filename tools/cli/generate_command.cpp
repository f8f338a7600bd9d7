// generate_command.cpp — `hwinfer generate -m FILE.gguf --prompt-tokens 1,2,3 -n 32 [--backend B |
// --device D] [--seed S] [--temperature T] [--top-k K] [--top-p P] [--kv-dtype f16|i8]`: runs the
// model on one device and prints the generated token ids on one line (no tokenizer yet: ids in,
// ids out), each as soon as it is sampled, so a run cut short leaves what it produced. With
// --timing, TTFT and TPOT go to stderr.
#include <fmt/format.h>

#include <cstdio>

#include "cli_common.h"
#include "hwinfer/generate.h"
#include "hwinfer/workload.h"
#include "model_run.h"

namespace hwinfer::cli {
namespace {

struct GenerateOptions {
  ModelRunOptions run;
  std::string prompt_text;  // --prompt-tokens, parsed by ParseTokenIds
  int64_t n_new = 32;
  SamplingParams sampling;
  bool timing = false;
};

int RunGenerate(const GlobalOptions& global, const GenerateOptions& options) {
  if (Status valid = options.sampling.Validate(); !valid.ok()) return ReportError(valid);
  auto prompt = ParseTokenIds(options.prompt_text, "--prompt-tokens");
  if (!prompt.ok()) return ReportError(prompt.status());
  auto opened =
      OpenModel(global, options.run, {1, static_cast<int64_t>(prompt->size()), options.n_new});
  if (!opened.ok()) return ReportError(opened.status());
  // Stream: each token is written and flushed as soon as it is sampled.
  bool first = true;
  const TokenCallback print = [&first](size_t, int32_t token) {
    fmt::print("{}{}", first ? "" : " ", token);
    first = false;
    std::fflush(stdout);
  };
  auto result =
      Generate(*(*opened)->executor, {*prompt}, options.n_new, options.sampling, 0, print);
  if (!first) fmt::print("\n");  // ends the line of tokens, also when a later step failed
  std::fflush(stdout);
  if (!result.ok()) return ReportError(result.status().WithContext(options.run.model_path));
  if (options.timing) {
    double decode = 0;
    for (double s : result->decode_step_seconds) decode += s;
    const double tpot = result->decode_step_seconds.empty()
                            ? 0
                            : decode / static_cast<double>(result->decode_step_seconds.size());
    fmt::print(stderr, "TTFT {:.2f} ms ({} prompt tokens), TPOT {:.2f} ms (mean of {} steps)\n",
               result->prefill_seconds * 1e3, prompt->size(), tpot * 1e3,
               result->decode_step_seconds.size());
  }
  return 0;
}

}  // namespace

void AddGenerateCommand(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand("generate", "Generate token ids from a GGUF model");
  AddModelRunOptions(command, options->run);
  command
      ->add_option("--prompt-tokens", options->prompt_text,
                   "Prompt token ids, comma-separated (e.g. 1,15043,3186)")
      ->required();
  command->add_option("-n,--n-predict", options->n_new, "Tokens to generate")
      ->check(IntegerIn(1, kMaxRequestTokens));
  command->add_option("--seed", options->sampling.seed, "Sampling seed")->check(SeedValue());
  command->add_option("--temperature", options->sampling.temperature, "0 = greedy");
  command->add_option("--top-k", options->sampling.top_k, "0 = no limit");
  command->add_option("--top-p", options->sampling.top_p, "1 = no limit");
  command->add_flag("--timing", options->timing, "Print TTFT and TPOT to stderr");
  command->callback([&global, &exit_code, options] { exit_code = RunGenerate(global, *options); });
}

}  // namespace hwinfer::cli
