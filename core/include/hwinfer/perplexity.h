// hwinfer/perplexity.h — scoring a model on a text, the same way on every backend: perplexity
// over non-overlapping windows and, against a reference run's saved log-probabilities
// (hwinfer/logits_file.h), the KL-divergence, top-1 agreement and perplexity ratio
// (docs/evaluation.md).
//
// Convention (llama.cpp's llama-perplexity): windows of ctx tokens, each from an empty KV cache
// and starting with BOS where the model adds one; the logits at positions ctx/2 .. ctx-2 are
// scored, each against the next token. Every figure is computed from F32 log-probabilities (the
// log-softmax taken in double, then rounded), the same numbers a reference file stores, so a run
// compared with its own reference gives KL 0 exactly; each row is renormalised in double before
// use, so KL resolves differences far below F32's rounding.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "hwinfer/llama_executor.h"
#include "hwinfer/logits_file.h"
#include "hwinfer/status.h"

namespace hwinfer {

struct EvalWindows {
  int64_t ctx = 0;
  int64_t count = 0;
  int64_t first_scored = 0;     // ctx / 2
  std::vector<int32_t> tokens;  // [count * ctx]
  int64_t scored_per_window() const { return ctx - 1 - first_scored; }
};

// The windows of |tokens|: floor(N / ctx) of them (at most |max_windows| when > 0), the rest
// dropped; each window's first token replaced by |bos| when >= 0. InvalidArgument when ctx < 4
// or the text holds fewer than ctx tokens ("--ctx" and the counts named).
StatusOr<EvalWindows> MakeEvalWindows(const std::vector<int32_t>& tokens, int64_t ctx, int32_t bos,
                                      int64_t max_windows = 0);

// log_softmax(|logits|) into |out| (same length), computed in double and rounded to F32.
void LogSoftmax(std::span<const float> logits, std::span<float> out);

// Per-token statistics of the run's scored tokens against a reference's.
struct ReferenceSummary {
  double kl_mean = 0, kl_median = 0, kl_p99 = 0, kl_max = 0;
  double top1_agreement = 0;  // share of positions whose argmax is the reference's
  // Δp = p_run(next token) - p_ref(next token): its mean and root mean square (llama.cpp's
  // "Mean Δp" and "RMS Δp": how much probability the right token gained or lost).
  double delta_p_mean = 0, delta_p_rms = 0;
  double reference_perplexity = 0;
  // PPL(run) / PPL(reference) = exp(mean(NLL_run - NLL_ref)), and its standard error.
  double perplexity_ratio = 0, perplexity_ratio_error = 0;
};

struct EvalResult {
  int64_t windows = 0;
  int64_t scored_tokens = 0;
  double mean_nll = 0;
  double perplexity = 0;
  double perplexity_error = 0;   // standard error (delta method: PPL x sd(NLL) / sqrt(n))
  double seconds = 0;            // wall-clock of the whole evaluation, scoring included
  double tokens_per_second = 0;  // tokens run through the model per second
  std::optional<ReferenceSummary> reference;
};

// Where an evaluation stands after a window.
struct EvalProgressInfo {
  int64_t done = 0, total = 0;  // windows
  double seconds = 0;
  double perplexity = 0;  // over the windows done
};
using EvalProgress = std::function<void(const EvalProgressInfo&)>;

// How the scored positions' logits are computed.
enum class EvalScoring {
  // As generation computes them: the window's first half is prefilled, then every scored
  // position is one decode step, its attention reading the whole window from the KV cache (so
  // the KV dtype's rounding is in every score). Windows run max_sequences at a time, one decode
  // token each per step.
  kDecode,
  // As a prompt is processed: the window in prefill chunks of max_batch_tokens, the scored rows'
  // logits from the chunks (ExecutorOptions::max_logit_rows must hold a chunk's). Faster; the
  // attention inside a chunk uses the chunk's own K and V unrounded, so a window of one chunk
  // never reads the KV cache.
  kPrefill,
};

struct EvalRunOptions {
  LogitsFileWriter* save = nullptr;             // --save-logits: each window's log-probabilities
  const LogitsFileReader* reference = nullptr;  // --reference: already checked with CheckSameRun
  EvalProgress progress;
  EvalScoring scoring = EvalScoring::kDecode;
};

// Runs every window through |executor| (one sequence each, released afterwards) as |scoring|
// says and scores it. Errors: the executor's (naming the window), the files'.
StatusOr<EvalResult> EvaluatePerplexity(LlamaExecutor& executor, const EvalWindows& windows,
                                        const EvalRunOptions& options = {});

// The accumulation behind EvaluatePerplexity, for one scored position at a time.
class EvalScorer {
 public:
  // |log_probs| [vocab]: the run's; |target|: the next token.
  void Add(std::span<const float> log_probs, int32_t target);
  // The same with the reference's log-probabilities of that position.
  void AddWithReference(std::span<const float> log_probs, std::span<const float> reference,
                        int32_t target);
  int64_t count() const { return static_cast<int64_t>(nll_.size()); }
  double perplexity() const;  // over the positions added so far
  // The perplexity fields of an EvalResult, and its reference summary when positions were added
  // with a reference.
  void Summarise(EvalResult* result) const;

 private:
  // The NLL of |target| under |log_probs| renormalised by |norm| (their log-sum-exp).
  void AddNll(std::span<const float> log_probs, double norm, int32_t target);

  std::vector<double> nll_;
  std::vector<double> reference_nll_;
  std::vector<double> kl_;
  int64_t agree_ = 0;
};

}  // namespace hwinfer
