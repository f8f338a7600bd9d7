// perplexity.cpp — see hwinfer/perplexity.h.
#include "hwinfer/perplexity.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

namespace hwinfer {
namespace {

// Mean and sample standard deviation of |values| (sd 0 for fewer than two).
std::pair<double, double> MeanAndSd(const std::vector<double>& values) {
  if (values.empty()) return {0, 0};
  double sum = 0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  if (values.size() < 2) return {mean, 0};
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return {mean, std::sqrt(squares / static_cast<double>(values.size() - 1))};
}

// log(sum(exp(row))) in double: ~0 for F32 log-probabilities, which sum to 1 only within F32
// rounding (~1e-7). Renormalising both rows by it makes each a proper distribution, so the KL of
// two nearly equal ones is resolved to ~1e-11 instead of drowning in that rounding.
double LogSumExp(std::span<const float> row) {
  const double max = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (float x : row) sum += std::exp(static_cast<double>(x) - max);
  return max + std::log(sum);
}

size_t ArgMax(std::span<const float> row) {
  return static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

// Releases the windows' sequences however the run ends.
class SequenceGuard {
 public:
  SequenceGuard(LlamaExecutor& executor, std::vector<SequenceId> ids)
      : executor_(executor), ids_(std::move(ids)) {}
  ~SequenceGuard() {
    for (SequenceId id : ids_) (void)executor_.Release(id);
  }
  SequenceGuard(const SequenceGuard&) = delete;
  SequenceGuard& operator=(const SequenceGuard&) = delete;

 private:
  LlamaExecutor& executor_;
  std::vector<SequenceId> ids_;
};

// Window |w|'s tokens [from, to) as prefill chunks of at most max_batch_tokens; the logits of its
// positions [rows_from, to) (and past it, rows_from >= to: none) go to |on_row|(position, logits).
Status Prefill(LlamaExecutor& executor, const EvalWindows& windows, int64_t w, int64_t from,
               int64_t to, int64_t rows_from,
               const std::function<void(int64_t, const float*)>& on_row) {
  const int64_t vocab = executor.model().shape().vocab_size;
  const auto window = windows.tokens.begin() + static_cast<ptrdiff_t>(w * windows.ctx);
  for (int64_t pos = from; pos < to;) {
    const int64_t n = std::min(executor.options().max_batch_tokens, to - pos);
    SequenceChunk chunk{w, {window + pos, window + pos + n}, false, 0};
    const int64_t first_row = std::max(pos, rows_from);  // rows [first_row, pos + n) are wanted
    chunk.logit_rows = std::max<int64_t>(pos + n - first_row, 0);
    HWINFER_ASSIGN_OR_RETURN(const auto step, executor.Step({chunk}));
    for (int64_t p = first_row; p < pos + n; ++p) {
      on_row(p, step.front().data() + static_cast<size_t>((p - first_row) * vocab));
    }
    pos += n;
  }
  return Status::Ok();
}

// Windows [first_w, first_w + count) through |executor| as |scoring| says; each window's
// log-softmax of its scored positions' logits into |log_probs|[i] [scored_per_window, vocab].
Status RunWindows(LlamaExecutor& executor, const EvalWindows& windows, int64_t first_w,
                  int64_t count, EvalScoring scoring, std::vector<std::vector<float>>* log_probs) {
  const int64_t ctx = windows.ctx, first = windows.first_scored;
  const auto vocab = static_cast<size_t>(executor.model().shape().vocab_size);
  std::vector<SequenceId> ids;
  for (int64_t i = 0; i < count; ++i) ids.push_back(first_w + i);
  SequenceGuard release(executor, ids);
  log_probs->resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    std::vector<float>& out = (*log_probs)[static_cast<size_t>(i)];
    out.resize(static_cast<size_t>(windows.scored_per_window()) * vocab);
    // Decode scoring prefills the first half only; prefill scoring the whole window.
    const int64_t prefill_to = scoring == EvalScoring::kDecode ? first : ctx;
    HWINFER_RETURN_IF_ERROR(
        Prefill(executor, windows, first_w + i, 0, prefill_to, first,
                [&](int64_t p, const float* logits) {
                  if (p >= ctx - 1) return;  // the last position predicts nothing in the window
                  LogSoftmax({logits, vocab},
                             {out.data() + static_cast<size_t>(p - first) * vocab, vocab});
                })
            .WithContext(fmt::format("window {} of {}", first_w + i + 1, windows.count)));
  }
  if (scoring == EvalScoring::kPrefill) return Status::Ok();
  for (int64_t p = first; p < ctx - 1; ++p) {
    std::vector<SequenceChunk> step;
    for (int64_t i = 0; i < count; ++i) {
      step.push_back({first_w + i, {windows.tokens[static_cast<size_t>((first_w + i) * ctx + p)]}});
    }
    auto logits = executor.Step(step);
    if (!logits.ok()) {
      return logits.status().WithContext(fmt::format(
          "windows {}..{} of {}, position {}", first_w + 1, first_w + count, windows.count, p));
    }
    for (int64_t i = 0; i < count; ++i) {
      float* out =
          (*log_probs)[static_cast<size_t>(i)].data() + static_cast<size_t>(p - first) * vocab;
      LogSoftmax((*logits)[static_cast<size_t>(i)], {out, vocab});
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<EvalWindows> MakeEvalWindows(const std::vector<int32_t>& tokens, int64_t ctx, int32_t bos,
                                      int64_t max_windows) {
  if (ctx < 4) {
    return InvalidArgument(fmt::format(
        "--ctx is {}; expected at least 4 (the second half of each window is scored)", ctx));
  }
  EvalWindows windows;
  windows.ctx = ctx;
  windows.first_scored = ctx / 2;
  windows.count = static_cast<int64_t>(tokens.size()) / ctx;
  if (max_windows > 0) windows.count = std::min(windows.count, max_windows);
  if (windows.count == 0) {
    return InvalidArgument(fmt::format(
        "the text has {} tokens; one window of --ctx {} needs {}: give a longer text or a "
        "smaller --ctx",
        tokens.size(), ctx, ctx));
  }
  windows.tokens.assign(tokens.begin(),
                        tokens.begin() + static_cast<ptrdiff_t>(windows.count * ctx));
  if (bos >= 0) {
    for (int64_t w = 0; w < windows.count; ++w) windows.tokens[static_cast<size_t>(w * ctx)] = bos;
  }
  return windows;
}

void LogSoftmax(std::span<const float> logits, std::span<float> out) {
  const double log_sum = LogSumExp(logits);
  for (size_t i = 0; i < logits.size(); ++i) {
    out[i] = static_cast<float>(static_cast<double>(logits[i]) - log_sum);
  }
}

void EvalScorer::Add(std::span<const float> log_probs, int32_t target) {
  AddNll(log_probs, LogSumExp(log_probs), target);
}

void EvalScorer::AddNll(std::span<const float> log_probs, double norm, int32_t target) {
  nll_.push_back(norm - static_cast<double>(log_probs[static_cast<size_t>(target)]));
}

void EvalScorer::AddWithReference(std::span<const float> log_probs,
                                  std::span<const float> reference, int32_t target) {
  const double norm = LogSumExp(log_probs), reference_norm = LogSumExp(reference);
  AddNll(log_probs, norm, target);
  reference_nll_.push_back(reference_norm -
                           static_cast<double>(reference[static_cast<size_t>(target)]));
  double kl = 0;
  for (size_t v = 0; v < reference.size(); ++v) {
    const double r = static_cast<double>(reference[v]) - reference_norm;
    kl += std::exp(r) * (r - (static_cast<double>(log_probs[v]) - norm));
  }
  // Both distributions are proper, so KL >= 0 but for double rounding (~1e-17).
  kl_.push_back(std::max(kl, 0.0));
  if (ArgMax(log_probs) == ArgMax(reference)) ++agree_;
}

double EvalScorer::perplexity() const { return std::exp(MeanAndSd(nll_).first); }

void EvalScorer::Summarise(EvalResult* result) const {
  const auto n = static_cast<double>(nll_.size());
  const auto [mean, sd] = MeanAndSd(nll_);
  result->scored_tokens = static_cast<int64_t>(nll_.size());
  result->mean_nll = mean;
  result->perplexity = std::exp(mean);
  result->perplexity_error = n > 0 ? result->perplexity * sd / std::sqrt(n) : 0;
  if (kl_.empty()) return;
  ReferenceSummary summary;
  std::vector<double> kl = kl_;
  std::sort(kl.begin(), kl.end());
  summary.kl_mean = MeanAndSd(kl).first;
  summary.kl_median = kl[(kl.size() - 1) / 2];
  // The nearest-rank 99th percentile: the smallest value with at least 99% at or below it.
  const auto rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(kl.size())));
  summary.kl_p99 = kl[std::max<size_t>(rank, 1) - 1];
  summary.kl_max = kl.back();
  summary.top1_agreement = static_cast<double>(agree_) / static_cast<double>(kl.size());
  summary.reference_perplexity = std::exp(MeanAndSd(reference_nll_).first);
  std::vector<double> difference(nll_.size());
  double delta_p = 0, delta_p_squares = 0;
  for (size_t i = 0; i < nll_.size(); ++i) {
    difference[i] = nll_[i] - reference_nll_[i];
    const double d = std::exp(-nll_[i]) - std::exp(-reference_nll_[i]);
    delta_p += d;
    delta_p_squares += d * d;
  }
  summary.delta_p_mean = delta_p / n;
  summary.delta_p_rms = std::sqrt(delta_p_squares / n);
  const auto [mean_difference, sd_difference] = MeanAndSd(difference);
  summary.perplexity_ratio = std::exp(mean_difference);
  summary.perplexity_ratio_error = summary.perplexity_ratio * sd_difference / std::sqrt(n);
  result->reference = summary;
}

// InvalidArgument when |executor| cannot run |windows| as |scoring| asks.
Status CheckExecutorFits(const LlamaExecutor& executor, const EvalWindows& windows,
                         EvalScoring scoring) {
  const ExecutorOptions& options = executor.options();
  if (scoring == EvalScoring::kDecode) return Status::Ok();
  const int64_t needed = std::min(windows.ctx - windows.first_scored, options.max_batch_tokens);
  if (options.logit_rows() >= needed) return Status::Ok();
  return InvalidArgument(fmt::format(
      "the executor returns {} rows of logits a step; scoring windows of {} in prefill chunks "
      "needs {} (ExecutorOptions::max_logit_rows)",
      options.logit_rows(), windows.ctx, needed));
}

StatusOr<EvalResult> EvaluatePerplexity(LlamaExecutor& executor, const EvalWindows& windows,
                                        const EvalRunOptions& options) {
  HWINFER_RETURN_IF_ERROR(CheckExecutorFits(executor, windows, options.scoring));
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const auto vocab = static_cast<size_t>(executor.model().shape().vocab_size);
  // Decode scoring runs max_sequences windows side by side; prefill scoring one at a time.
  const int64_t group =
      options.scoring == EvalScoring::kDecode ? executor.options().max_sequences : 1;
  EvalScorer scorer;
  std::vector<std::vector<float>> log_probs;
  std::vector<float> reference;
  for (int64_t first_w = 0; first_w < windows.count; first_w += group) {
    const int64_t count = std::min(group, windows.count - first_w);
    HWINFER_RETURN_IF_ERROR(
        RunWindows(executor, windows, first_w, count, options.scoring, &log_probs));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t w = first_w + i;
      const std::vector<float>& rows = log_probs[static_cast<size_t>(i)];
      if (options.save != nullptr) HWINFER_RETURN_IF_ERROR(options.save->WriteWindow(rows));
      if (options.reference != nullptr) {
        HWINFER_RETURN_IF_ERROR(options.reference->ReadWindow(w, &reference));
      }
      for (int64_t j = 0; j < windows.scored_per_window(); ++j) {
        const int32_t target =
            windows.tokens[static_cast<size_t>(w * windows.ctx + windows.first_scored + j + 1)];
        const std::span<const float> row(rows.data() + static_cast<size_t>(j) * vocab, vocab);
        if (options.reference == nullptr) {
          scorer.Add(row, target);
        } else {
          scorer.AddWithReference(row, {reference.data() + static_cast<size_t>(j) * vocab, vocab},
                                  target);
        }
      }
    }
    const int64_t done = first_w + count;
    if (options.progress) options.progress({done, windows.count, seconds(), scorer.perplexity()});
  }
  EvalResult result;
  result.windows = windows.count;
  scorer.Summarise(&result);
  result.seconds = seconds();
  // Decode scoring never feeds a window's last token (it predicts nothing inside the window).
  const int64_t fed = windows.ctx - (options.scoring == EvalScoring::kDecode ? 1 : 0);
  result.tokens_per_second =
      result.seconds > 0 ? static_cast<double>(windows.count * fed) / result.seconds : 0;
  return result;
}

}  // namespace hwinfer
