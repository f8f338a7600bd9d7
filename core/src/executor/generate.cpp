// generate.cpp — see hwinfer/generate.h: chunked prefill packed into steps, then lock-step decode.
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

StatusOr<GenerateResult> GenerateHeld(LlamaExecutor& executor,
                                      const std::vector<std::vector<int32_t>>& prompts,
                                      int64_t n_new, const SamplingParams& params,
                                      SequenceId first_sequence, const TokenCallback& on_token) {
  const size_t n = prompts.size();
  std::vector<Sampler> samplers;
  for (size_t i = 0; i < n; ++i) {
    SamplingParams p = params;
    p.seed = params.seed + i;
    samplers.emplace_back(p);
  }
  GenerateResult result;
  result.tokens.resize(n);
  const ExecutorOptions& options = executor.options();

  // Prefill: pack chunks of the prompts into steps; a sequence's logits come with its last chunk.
  const Clock::time_point prefill_start = Clock::now();
  std::vector<size_t> consumed(n, 0);
  size_t next = 0;  // first sequence whose prompt is not fully consumed
  while (next < n) {
    std::vector<SequenceChunk> step;
    std::vector<size_t> members;
    int64_t budget = options.max_batch_tokens;
    for (size_t i = next;
         i < n && budget > 0 && static_cast<int64_t>(step.size()) < options.max_sequences; ++i) {
      const auto take = static_cast<size_t>(
          std::min<int64_t>(budget, static_cast<int64_t>(prompts[i].size() - consumed[i])));
      SequenceChunk chunk;
      chunk.sequence = first_sequence + static_cast<SequenceId>(i);
      chunk.tokens.assign(prompts[i].begin() + static_cast<std::ptrdiff_t>(consumed[i]),
                          prompts[i].begin() + static_cast<std::ptrdiff_t>(consumed[i] + take));
      consumed[i] += take;
      chunk.want_logits = consumed[i] == prompts[i].size();
      budget -= static_cast<int64_t>(take);
      step.push_back(std::move(chunk));
      members.push_back(i);
    }
    HWINFER_ASSIGN_OR_RETURN(const auto logits, executor.Step(step));
    for (size_t j = 0; j < members.size(); ++j) {
      if (!step[j].want_logits) continue;
      HWINFER_ASSIGN_OR_RETURN(const int32_t token, samplers[members[j]].Sample(logits[j]));
      result.tokens[members[j]].push_back(token);
      if (on_token) on_token(members[j], token);
    }
    while (next < n && consumed[next] == prompts[next].size()) ++next;
  }
  result.prefill_seconds = SecondsSince(prefill_start);

  // Decode: every sequence feeds its last token, one step per new token.
  for (int64_t t = 1; t < n_new; ++t) {
    std::vector<SequenceChunk> step(n);
    for (size_t i = 0; i < n; ++i) {
      step[i].sequence = first_sequence + static_cast<SequenceId>(i);
      step[i].tokens = {result.tokens[i].back()};
    }
    const Clock::time_point start = Clock::now();
    HWINFER_ASSIGN_OR_RETURN(const auto logits, executor.Step(step));
    result.decode_step_seconds.push_back(SecondsSince(start));
    for (size_t i = 0; i < n; ++i) {
      HWINFER_ASSIGN_OR_RETURN(const int32_t token, samplers[i].Sample(logits[i]));
      result.tokens[i].push_back(token);
      if (on_token) on_token(i, token);
    }
  }
  return result;
}

}  // namespace

StatusOr<GenerateResult> Generate(LlamaExecutor& executor,
                                  const std::vector<std::vector<int32_t>>& prompts, int64_t n_new,
                                  const SamplingParams& params, SequenceId first_sequence,
                                  const TokenCallback& on_token) {
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
  auto result = GenerateHeld(executor, prompts, n_new, params, first_sequence, on_token);
  for (size_t i = 0; i < prompts.size(); ++i) {
    const SequenceId id = first_sequence + static_cast<SequenceId>(i);
    if (executor.kv().HasSequence(id)) (void)executor.Release(id);
  }
  return result;
}

}  // namespace hwinfer
