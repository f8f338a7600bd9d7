// executor_memory.cpp — what a LlamaExecutor will allocate, computed before it allocates anything,
// and the check of that against the device's memory. Doubles throughout: a file or a flag may ask
// for 2^32 positions or 2^60 tokens, and the answer must be a number to refuse, not an overflow.
#include <fmt/format.h>

#include <algorithm>

#include "executor_internal.h"

namespace hwinfer {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Blocks for |tokens| tokens of |block_size|, without overflow.
int64_t CeilBlocks(int64_t tokens, int64_t block_size) {
  return tokens / block_size + (tokens % block_size != 0 ? 1 : 0);
}

}  // namespace

ExecutorMemory LlamaExecutor::MemoryNeeded(const ModelShape& m, const ExecutorOptions& options,
                                           int64_t tensor_parallel) {
  ExecutorMemory memory;
  // This rank's heads and FFN width (a degree that does not divide them is refused at Create).
  const double ranks = static_cast<double>(std::max<int64_t>(tensor_parallel, 1));
  const int64_t bs = std::max<int64_t>(options.kv_block_size, 1);
  const int64_t asked =
      options.kv_cache_tokens > 0 ? options.kv_cache_tokens : 2 * m.context_length;
  memory.kv_tokens = CeilBlocks(asked, bs) * bs;
  const double blocks = static_cast<double>(CeilBlocks(asked, bs));
  const double kv_heads = std::max(static_cast<double>(m.n_kv_heads) / ranks, 1.0);
  const double kv_dim = kv_heads * static_cast<double>(m.head_dim());
  const double element = options.kv_dtype == HWINFER_DTYPE_I8 ? 1.0 : 2.0;
  const double scales = options.kv_dtype == HWINFER_DTYPE_I8 ? 4.0 * kv_heads : 0.0;
  memory.kv_bytes = 2.0 * static_cast<double>(m.n_layers) * blocks *
                    (static_cast<double>(bs) * kv_dim * element + scales);

  // The activation buffer (executor_internal.h's ActivationLayout, F32 rows; I32 region).
  const double T = static_cast<double>(options.max_batch_tokens);
  const double S = static_cast<double>(options.max_sequences);
  const double d = static_cast<double>(m.d_model), ffn = static_cast<double>(m.ffn_dim) / ranks;
  const double q_dim = static_cast<double>(m.n_heads) / ranks * static_cast<double>(m.head_dim());
  const double per_token = 3.0 * d + 2.0 * q_dim + 2.0 * kv_dim + 3.0 * ffn + 3.0;
  const double per_sequence = 4.0 + 2.0 * static_cast<double>(MaxBlocksPerSequence(m, options));
  const double per_logit_row = d + static_cast<double>(m.vocab_size);
  const double R = static_cast<double>(options.logit_rows());
  memory.activation_bytes =
      4.0 * (per_token * T + per_sequence * S + per_logit_row * R) + 13.0 * 256.0;
  return memory;
}

int64_t LlamaExecutor::MaxBlocksPerSequence(const ModelShape& m, const ExecutorOptions& options) {
  // A sequence holds at most the context length and at most the whole cache.
  const int64_t bs = std::max<int64_t>(options.kv_block_size, 1);
  const int64_t asked =
      options.kv_cache_tokens > 0 ? options.kv_cache_tokens : 2 * m.context_length;
  return std::min(CeilBlocks(m.context_length, bs), CeilBlocks(asked, bs));
}

namespace executor_internal {

RankDims DimsOfRank(const ModelShape& m, int64_t ranks) {
  RankDims dims;
  dims.n_heads = m.n_heads / ranks;
  dims.n_kv_heads = std::max<int64_t>(m.n_kv_heads / ranks, 1);  // a copy each past one per rank
  dims.head_dim = m.head_dim();
  dims.ffn_dim = m.ffn_dim / ranks;
  return dims;
}

Status CheckDeviceMemory(const Device& device, const ModelShape& m, const ExecutorMemory& memory,
                         double weight_bytes) {
  const DeviceInfo& info = device.info();
  double available = static_cast<double>(info.memory_total_bytes);
  if (info.memory_free_bytes > 0) {
    available = std::min(available, static_cast<double>(info.memory_free_bytes));
  }
  if (available <= 0) return Status::Ok();  // the device does not say: allocation will tell
  const double needed = memory.total() + weight_bytes;
  if (needed <= available) return Status::Ok();
  return OutOfMemory(fmt::format(
      "{} has {:.2f} GiB of memory; {} needs {:.2f} GiB: the KV cache of {} tokens {:.2f} GiB, "
      "activations {:.2f} GiB{}; lower the KV cache (kv_cache_tokens, the prompt and output "
      "lengths, the batch) or max_batch_tokens",
      device.id(), available / kGiB, m.name, needed / kGiB, memory.kv_tokens,
      memory.kv_bytes / kGiB, memory.activation_bytes / kGiB,
      weight_bytes > 0 ? fmt::format(", weights {:.2f} GiB", weight_bytes / kGiB) : ""));
}

}  // namespace executor_internal
}  // namespace hwinfer
