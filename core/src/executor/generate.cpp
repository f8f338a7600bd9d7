// generate.cpp — see hwinfer/generate.h: chunked prefill packed into steps, then lock-step decode
// of the sequences that have not stopped.
#include "hwinfer/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace hwinfer {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One Generate call over sequences already checked: their samplers, what each has produced and
// whether it stopped.
class Generation {
 public:
  Generation(LlamaExecutor& executor, const std::vector<std::vector<int32_t>>& prompts,
             const SamplingParams& params, SequenceId first_sequence, const TokenCallback& on_token,
             const StopPredicate& is_stop)
      : executor_(executor),
        prompts_(prompts),
        first_sequence_(first_sequence),
        on_token_(on_token),
        is_stop_(is_stop),
        stopped_(prompts.size(), false) {
    result_.tokens.resize(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      SamplingParams p = params;
      p.seed = params.seed + i;
      samplers_.emplace_back(p);
    }
  }

  // Pack chunks of the prompts into steps; a sequence's first token comes with its last chunk.
  Status Prefill() {
    const Clock::time_point start = Clock::now();
    const ExecutorOptions& options = executor_.options();
    const size_t n = prompts_.size();
    std::vector<size_t> consumed(n, 0);
    size_t next = 0;  // first sequence whose prompt is not fully consumed
    while (next < n) {
      std::vector<SequenceChunk> step;
      std::vector<size_t> members;
      int64_t budget = options.max_batch_tokens;
      for (size_t i = next;
           i < n && budget > 0 && static_cast<int64_t>(step.size()) < options.max_sequences; ++i) {
        const std::vector<int32_t>& prompt = prompts_[i];
        const auto take = static_cast<size_t>(
            std::min<int64_t>(budget, static_cast<int64_t>(prompt.size() - consumed[i])));
        SequenceChunk chunk;
        chunk.sequence = SequenceOf(i);
        chunk.tokens.assign(prompt.begin() + static_cast<std::ptrdiff_t>(consumed[i]),
                            prompt.begin() + static_cast<std::ptrdiff_t>(consumed[i] + take));
        consumed[i] += take;
        chunk.want_logits = consumed[i] == prompt.size();
        budget -= static_cast<int64_t>(take);
        step.push_back(std::move(chunk));
        members.push_back(i);
      }
      HWINFER_ASSIGN_OR_RETURN(const auto logits, executor_.Step(step));
      for (size_t j = 0; j < members.size(); ++j) {
        if (step[j].want_logits) HWINFER_RETURN_IF_ERROR(Sample(members[j], logits[j]));
      }
      while (next < n && consumed[next] == prompts_[next].size()) ++next;
    }
    result_.prefill_seconds = SecondsSince(start);
    return Status::Ok();
  }

  // Every sequence still running feeds its last token, one step per new token.
  Status Decode(int64_t n_new) {
    for (int64_t t = 1; t < n_new; ++t) {
      std::vector<SequenceChunk> step;
      std::vector<size_t> members;
      for (size_t i = 0; i < prompts_.size(); ++i) {
        if (stopped_[i]) continue;
        step.push_back({SequenceOf(i), {result_.tokens[i].back()}});
        members.push_back(i);
      }
      if (step.empty()) break;
      const Clock::time_point start = Clock::now();
      HWINFER_ASSIGN_OR_RETURN(const auto logits, executor_.Step(step));
      result_.decode_step_seconds.push_back(SecondsSince(start));
      AccumulateRankStats(executor_.last_step().ranks, &result_.decode_rank_totals);
      for (size_t j = 0; j < members.size(); ++j) {
        HWINFER_RETURN_IF_ERROR(Sample(members[j], logits[j]));
      }
    }
    return Status::Ok();
  }

  GenerateResult& result() { return result_; }

 private:
  SequenceId SequenceOf(size_t i) const { return first_sequence_ + static_cast<SequenceId>(i); }

  // The token is recorded and streamed; a stop token also ends its sequence at once.
  Status Sample(size_t i, const std::vector<float>& logits) {
    HWINFER_ASSIGN_OR_RETURN(const int32_t token, samplers_[i].Sample(logits));
    result_.tokens[i].push_back(token);
    if (on_token_) on_token_(i, token);
    if (!is_stop_ || !is_stop_(token)) return Status::Ok();
    stopped_[i] = true;
    return executor_.Release(SequenceOf(i));
  }

  LlamaExecutor& executor_;
  const std::vector<std::vector<int32_t>>& prompts_;
  const SequenceId first_sequence_;
  const TokenCallback& on_token_;
  const StopPredicate& is_stop_;
  std::vector<Sampler> samplers_;
  std::vector<bool> stopped_;
  GenerateResult result_;
};

}  // namespace

StatusOr<GenerateResult> Generate(LlamaExecutor& executor,
                                  const std::vector<std::vector<int32_t>>& prompts, int64_t n_new,
                                  const SamplingParams& params, SequenceId first_sequence,
                                  const TokenCallback& on_token, const StopPredicate& is_stop) {
  HWINFER_RETURN_IF_ERROR(params.Validate());
  if (prompts.empty()) return InvalidArgument("generate: no prompts");
  if (n_new < 1) return InvalidArgument(fmt::format("generate: n_new is {}; expected >= 1", n_new));
  if (static_cast<int64_t>(prompts.size()) > executor.options().max_sequences) {
    return InvalidArgument(fmt::format("generate: {} sequences; the executor's max_sequences is {}",
                                       prompts.size(), executor.options().max_sequences));
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].empty()) return InvalidArgument(fmt::format("generate: prompt {} is empty", i));
    // The last generated token is sampled, never fed back: prompt + n_new - 1 positions.
    const ModelShape& shape = executor.model().shape();
    const auto prompt = static_cast<int64_t>(prompts[i].size());
    if (prompt > shape.context_length || n_new - 1 > shape.context_length - prompt) {
      return InvalidArgument(fmt::format(
          "generate: a prompt of {} tokens plus {} new tokens needs {} positions; the context "
          "length of {} is {}",
          prompt, n_new, static_cast<uint64_t>(prompt) + static_cast<uint64_t>(n_new) - 1,
          shape.name, shape.context_length));
    }
    const SequenceId id = first_sequence + static_cast<SequenceId>(i);
    if (executor.kv().HasSequence(id)) {
      return FailedPrecondition(fmt::format("generate: sequence {} is already in use", id));
    }
  }
  Generation generation(executor, prompts, params, first_sequence, on_token, is_stop);
  Status status = generation.Prefill();
  if (status.ok()) status = generation.Decode(n_new);
  for (size_t i = 0; i < prompts.size(); ++i) {
    const SequenceId id = first_sequence + static_cast<SequenceId>(i);
    if (executor.kv().HasSequence(id)) (void)executor.Release(id);
  }
  if (!status.ok()) return status;
  return std::move(generation.result());
}

}  // namespace hwinfer
