// generate_command.cpp — `hwinfer generate -m FILE.gguf --prompt-tokens 1,2,3 -n 32 [--backend B |
// --device D] [--seed S] [--temperature T] [--top-k K] [--top-p P] [--kv-dtype f16|i8]`: runs the
// model on one device and prints the generated token ids on one line (no tokenizer yet: ids in,
// ids out), each as soon as it is sampled, so a run cut short leaves what it produced. With
// --timing, TTFT and TPOT go to stderr.
#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "hwinfer/generate.h"
#include "hwinfer/workload.h"
#include "model_run.h"

namespace hwinfer::cli {
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

}  // namespace hwinfer::cli
