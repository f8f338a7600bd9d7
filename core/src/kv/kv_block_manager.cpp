// kv_block_manager.cpp — block allocation, reference counts, copy-on-write and per-sequence block
// tables (kv_block_manager.h). Deterministic: the lowest free block id is always handed out
// first, so schedules replay identically. No device work here.
#include "hwinfer/kv_block_manager.h"

#include <algorithm>
#include <string>

namespace hwinfer {

KvBlockManager::KvBlockManager(int32_t num_blocks, int32_t block_size)
    : block_size_(std::max(block_size, 1)),
      ref_counts_(static_cast<size_t>(std::max(num_blocks, 0)), 0) {
  free_blocks_.reserve(ref_counts_.size());
  for (int32_t b = num_blocks - 1; b >= 0; --b) free_blocks_.push_back(b);
}

int32_t KvBlockManager::BlocksForTokens(int64_t tokens) const {
  return static_cast<int32_t>((tokens + block_size_ - 1) / block_size_);
}

int64_t KvBlockManager::SequenceTokens(SequenceId sequence) const {
  auto it = sequences_.find(sequence);
  return it == sequences_.end() ? 0 : it->second.tokens;
}

int64_t KvBlockManager::TotalTokens() const {
  int64_t total = 0;
  for (const auto& [id, sequence] : sequences_) total += sequence.tokens;
  return total;
}

const std::vector<int32_t>& KvBlockManager::BlockTable(SequenceId sequence) const {
  static const std::vector<int32_t> kEmpty;
  auto it = sequences_.find(sequence);
  return it == sequences_.end() ? kEmpty : it->second.blocks;
}

int32_t KvBlockManager::ReservedBlocks(SequenceId sequence) const {
  auto it = sequences_.find(sequence);
  return it == sequences_.end() ? 0 : it->second.reserved;
}

bool KvBlockManager::CanAppend(SequenceId sequence, int64_t n_tokens) const {
  auto it = sequences_.find(sequence);
  const int64_t tokens = it == sequences_.end() ? 0 : it->second.tokens;
  int32_t needed = BlocksForTokens(tokens + n_tokens) - BlocksForTokens(tokens);
  if (it != sequences_.end() && tokens % block_size_ != 0 && n_tokens > 0 &&
      ref_counts_[static_cast<size_t>(it->second.blocks.back())] > 1) {
    ++needed;  // copy-on-write of the shared partial last block
  }
  const int32_t reserved = it == sequences_.end() ? 0 : it->second.reserved;
  return needed - reserved <= num_free_blocks();
}

Status KvBlockManager::Reserve(SequenceId sequence, int64_t tokens) {
  if (tokens < 0) return InvalidArgument("cannot reserve a negative number of tokens");
  auto it = sequences_.find(sequence);
  const int32_t held = it == sequences_.end() ? 0 : static_cast<int32_t>(it->second.blocks.size());
  const int32_t reserved = it == sequences_.end() ? 0 : it->second.reserved;
  const int32_t more = std::max(BlocksForTokens(tokens) - held - reserved, 0);
  if (more > num_free_blocks()) {
    return OutOfMemory("KV cache full: sequence " + std::to_string(sequence) + " reserving " +
                       std::to_string(tokens) + " tokens needs " + std::to_string(more) +
                       " more block(s), " + std::to_string(num_free_blocks()) + " free of " +
                       std::to_string(num_blocks()));
  }
  sequences_[sequence].reserved += more;
  reserved_blocks_ += more;
  return Status::Ok();
}

int32_t KvBlockManager::TakeFreeBlock(Sequence& seq) {
  if (seq.reserved > 0) {
    --seq.reserved;
    --reserved_blocks_;
  }
  const int32_t block = free_blocks_.back();
  free_blocks_.pop_back();
  ref_counts_[static_cast<size_t>(block)] = 1;
  return block;
}

StatusOr<KvBlockManager::AppendResult> KvBlockManager::Append(SequenceId sequence,
                                                              int64_t n_tokens) {
  if (n_tokens < 0) return InvalidArgument("cannot append a negative number of tokens");
  if (!CanAppend(sequence, n_tokens)) {
    const int64_t tokens = SequenceTokens(sequence);
    return OutOfMemory(
        "KV cache full: sequence " + std::to_string(sequence) + " needs " +
        std::to_string(BlocksForTokens(tokens + n_tokens) - BlocksForTokens(tokens)) +
        " more block(s), " + std::to_string(num_free_blocks()) + " free of " +
        std::to_string(num_blocks()));
  }
  Sequence& seq = sequences_[sequence];
  AppendResult result;
  if (n_tokens > 0 && seq.tokens % block_size_ != 0) {
    int32_t& last = seq.blocks.back();
    if (ref_counts_[static_cast<size_t>(last)] > 1) {
      const int32_t copy = TakeFreeBlock(seq);
      --ref_counts_[static_cast<size_t>(last)];
      result.copy_on_write.emplace_back(last, copy);
      last = copy;
    }
  }
  result.slots.reserve(static_cast<size_t>(n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t, ++seq.tokens) {
    const int64_t row = seq.tokens % block_size_;
    if (row == 0) seq.blocks.push_back(TakeFreeBlock(seq));
    result.slots.push_back(seq.blocks.back() * block_size_ + static_cast<int32_t>(row));
  }
  return result;
}

Status KvBlockManager::Fork(SequenceId parent, SequenceId child) {
  auto it = sequences_.find(parent);
  if (it == sequences_.end()) {
    return FailedPrecondition("cannot fork unknown sequence " + std::to_string(parent));
  }
  if (sequences_.count(child) != 0) {
    return FailedPrecondition("cannot fork into existing sequence " + std::to_string(child));
  }
  for (int32_t block : it->second.blocks) ++ref_counts_[static_cast<size_t>(block)];
  Sequence copy = it->second;
  copy.reserved = 0;  // the parent's reservation stays the parent's
  sequences_.emplace(child, std::move(copy));
  return Status::Ok();
}

Status KvBlockManager::Release(SequenceId sequence) {
  auto it = sequences_.find(sequence);
  if (it == sequences_.end()) return NotFound("unknown sequence " + std::to_string(sequence));
  for (int32_t block : it->second.blocks) {
    if (--ref_counts_[static_cast<size_t>(block)] == 0) free_blocks_.push_back(block);
  }
  reserved_blocks_ -= it->second.reserved;
  sequences_.erase(it);
  // Keep the lowest ids on top of the stack so allocation order is deterministic.
  std::sort(free_blocks_.begin(), free_blocks_.end(), std::greater<>());
  return Status::Ok();
}

Status KvBlockManager::CheckInvariants() const {
  std::vector<int32_t> holders(ref_counts_.size(), 0);
  int64_t reserved = 0;
  for (const auto& [id, seq] : sequences_) {
    if (seq.reserved < 0) {
      return Internal("sequence " + std::to_string(id) + " reserves " +
                      std::to_string(seq.reserved) + " blocks");
    }
    reserved += seq.reserved;
    if (static_cast<int64_t>(seq.blocks.size()) != BlocksForTokens(seq.tokens)) {
      return Internal("sequence " + std::to_string(id) + " holds " +
                      std::to_string(seq.blocks.size()) + " blocks for " +
                      std::to_string(seq.tokens) + " tokens");
    }
    for (int32_t block : seq.blocks) {
      if (block < 0 || block >= num_blocks()) {
        return Internal("sequence " + std::to_string(id) + " holds invalid block " +
                        std::to_string(block));
      }
      ++holders[static_cast<size_t>(block)];
    }
  }
  if (reserved != reserved_blocks_ || reserved > static_cast<int64_t>(free_blocks_.size())) {
    return Internal("sequences reserve " + std::to_string(reserved) + " blocks, the total says " +
                    std::to_string(reserved_blocks_) + ", " + std::to_string(free_blocks_.size()) +
                    " are on the free list");
  }
  std::vector<bool> is_free(ref_counts_.size(), false);
  for (int32_t block : free_blocks_) {
    if (is_free[static_cast<size_t>(block)]) {
      return Internal("block " + std::to_string(block) + " is on the free list twice");
    }
    is_free[static_cast<size_t>(block)] = true;
  }
  for (size_t b = 0; b < ref_counts_.size(); ++b) {
    if (ref_counts_[b] != holders[b]) {
      return Internal("block " + std::to_string(b) + " has count " +
                      std::to_string(ref_counts_[b]) + " but " + std::to_string(holders[b]) +
                      " holder(s)");
    }
    if (is_free[b] != (ref_counts_[b] == 0)) {
      return Internal("block " + std::to_string(b) +
                      (is_free[b] ? " is free but used" : " is lost"));
    }
  }
  return Status::Ok();
}

}  // namespace hwinfer
