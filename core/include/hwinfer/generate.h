// hwinfer/generate.h — token generation over a LlamaExecutor: prompts are prefilled in chunks
// packed into steps of at most max_batch_tokens, then every sequence decodes one token per step
// together, each with its own seeded sampler, until it has its tokens or samples a stop token.
// Times are wall-clock from the host around each step, device synchronisation included
// ("measure end to end").
//
// For `hwinfer generate`, `hwinfer bench-model` and the executor tests; the scheduler (continuous
// batching with arrivals and preemption) is a separate layer with its own loop.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hwinfer/llama_executor.h"
#include "hwinfer/sampler.h"
#include "hwinfer/status.h"

namespace hwinfer {

struct GenerateResult {
  // [n_sequences][<= n_new] generated ids; a sequence that stopped ends with its stop token.
  std::vector<std::vector<int32_t>> tokens;
  double prefill_seconds = 0;               // until every sequence had its first token
  std::vector<double> decode_step_seconds;  // one per decode step (at most n_new - 1)
  // Tensor parallelism: per rank, its stats summed over the decode steps (bytes, FLOPs, kernels,
  // device and collective seconds); empty otherwise.
  std::vector<RankStepStats> decode_rank_totals;
};

// Called with each token as soon as it is sampled: |sequence| is the prompt's index, tokens of
// one sequence come in order (a caller streams them; a run cut short keeps what was printed).
using TokenCallback = std::function<void(size_t sequence, int32_t token)>;

// Whether a sampled token ends its sequence (end of generation: EOS, EOT). The token is kept
// (in the result and passed to the TokenCallback), then the sequence is released at once and
// decodes no more while the others go on.
using StopPredicate = std::function<bool(int32_t token)>;

// Generates up to |n_new| tokens (>= 1) after each prompt (all of them without |is_stop|).
// Sequence i uses id |first_sequence| + i and sampler seed params.seed + i; all sequences are
// released before returning (also on error). Errors: those of LlamaExecutor::Step (token out of
// vocabulary, context length, KV capacity, non-finite logits), more sequences than the
// executor's max_sequences, an empty prompt, a prompt plus n_new - 1 that passes the context
// length (checked before anything runs, for any n_new).
StatusOr<GenerateResult> Generate(LlamaExecutor& executor,
                                  const std::vector<std::vector<int32_t>>& prompts, int64_t n_new,
                                  const SamplingParams& params, SequenceId first_sequence = 0,
                                  const TokenCallback& on_token = nullptr,
                                  const StopPredicate& is_stop = nullptr);

}  // namespace hwinfer
