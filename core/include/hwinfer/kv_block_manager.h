// hwinfer/kv_block_manager.h — the paged KV cache's bookkeeping, owned by the core: a pool of
// fixed-size blocks with reference counts, and per-sequence block tables that grow as tokens are
// appended (vLLM's block manager). Backends only ever see block ids, block tables and slot
// mappings (plugin.h's paged layout); the memory itself is a pair of device pools per layer.
//
// Pure state, no devices and no clock: the scheduler drives it (admission asks CanAppend before
// committing; preemption Releases a sequence). It must never hand out a block twice, and every
// reference count returns to zero when every sequence is released.
//
// A sequence may also reserve blocks ahead of its tokens (Reserve: what servers that give every
// sequence a contiguous buffer of its maximum length do): reserved blocks stay on the free list
// but count as used, only that sequence's Appends draw from them, and Release returns them.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer {

using SequenceId = int64_t;

class KvBlockManager {
 public:
  // |num_blocks| blocks of |block_size| tokens each (both > 0).
  KvBlockManager(int32_t num_blocks, int32_t block_size);

  int32_t num_blocks() const { return static_cast<int32_t>(ref_counts_.size()); }
  int32_t block_size() const { return block_size_; }
  // Blocks no sequence holds or has reserved; used = held + reserved.
  int32_t num_free_blocks() const {
    return static_cast<int32_t>(free_blocks_.size()) - reserved_blocks_;
  }
  int32_t num_used_blocks() const { return num_blocks() - num_free_blocks(); }

  // Blocks a sequence holding |tokens| tokens needs.
  int32_t BlocksForTokens(int64_t tokens) const;

  // Whether |n_tokens| more tokens fit for |sequence| (new or existing) right now, its
  // reservation included.
  bool CanAppend(SequenceId sequence, int64_t n_tokens) const;

  // Sets free blocks aside so that |sequence| (new: created with no tokens, or existing) can grow
  // to |tokens| tokens without taking any other block: the blocks it would still need beyond
  // those it holds and has reserved leave num_free_blocks() now, and its Appends (copy-on-write
  // copies included) draw from them first. Never shrinks a reservation. All or nothing:
  // OutOfMemory (naming the blocks needed and free) leaves the state untouched. Release returns
  // what is left of it; Fork does not share it.
  Status Reserve(SequenceId sequence, int64_t tokens);
  // Blocks set aside for |sequence| and not yet taken by its Appends (0 for unknown sequences).
  int32_t ReservedBlocks(SequenceId sequence) const;

  // Appends |n_tokens| tokens to |sequence| (creating it on first use), allocating blocks as
  // needed, and returns the slot of each new token (block_id * block_size + row), the
  // slot_mapping of the KV-append kernel. All or nothing: OutOfMemory (naming how many blocks were
  // needed and free) leaves the state untouched. Appending to a sequence whose last block is
  // shared (after Fork) first gives it a private copy of that block: the returned
  // |copy_on_write| pairs (from, to) must be copied on the device before the append runs.
  struct AppendResult {
    std::vector<int32_t> slots;
    std::vector<std::pair<int32_t, int32_t>> copy_on_write;
  };
  StatusOr<AppendResult> Append(SequenceId sequence, int64_t n_tokens);

  // |child| shares every block of |parent| (reference counts go up); FailedPrecondition when the
  // child exists or the parent does not.
  Status Fork(SequenceId parent, SequenceId child);

  // Drops the sequence; its blocks' counts go down and blocks at zero return to the free list.
  // Releasing an unknown sequence is NotFound.
  Status Release(SequenceId sequence);

  bool HasSequence(SequenceId sequence) const { return sequences_.count(sequence) != 0; }
  // Tokens held and the block table of a sequence (empty for unknown sequences).
  int64_t SequenceTokens(SequenceId sequence) const;
  // Tokens held by all sequences (a token shared after Fork counts once per sequence).
  int64_t TotalTokens() const;
  int64_t num_sequences() const { return static_cast<int64_t>(sequences_.size()); }
  const std::vector<int32_t>& BlockTable(SequenceId sequence) const;
  int32_t RefCount(int32_t block) const { return ref_counts_.at(static_cast<size_t>(block)); }

  // Checks every invariant (counts equal the number of tables holding each block, free blocks
  // have count zero and appear once, tables are long enough for their tokens); Internal naming the
  // first violation. For tests and debug builds.
  Status CheckInvariants() const;

 private:
  struct Sequence {
    int64_t tokens = 0;
    std::vector<int32_t> blocks;
    int32_t reserved = 0;  // blocks set aside on the free list for this sequence
  };
  // Pops the lowest free block for |seq|, from its reservation when it has one.
  int32_t TakeFreeBlock(Sequence& seq);

  int32_t block_size_;
  std::vector<int32_t> ref_counts_;   // [num_blocks]
  std::vector<int32_t> free_blocks_;  // stack; lowest ids handed out first
  int32_t reserved_blocks_ = 0;       // sum of every sequence's |reserved|
  std::map<SequenceId, Sequence> sequences_;
};

}  // namespace hwinfer
