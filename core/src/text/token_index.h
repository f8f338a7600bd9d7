// token_index.h — the lookups a tokenizer makes hundreds of thousands of times while it is built
// and runs: token text -> id (128k tokens for Llama 3) and a pair of ids -> its BPE merge (280k
// merges). Open addressing in flat arrays (no allocation per entry), so building the Llama 3
// tokenizer stays well under the 200 ms issue 16 allows. Internal to core/src/text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hwinfer::text {

class TokenIndex {
 public:
  // Indexes |tokens| (which must outlive the index unchanged); a text listed twice maps to its
  // last id, as llama.cpp reads a vocabulary.
  explicit TokenIndex(const std::vector<std::string>& tokens);
  // The id of the token spelled |text|, or -1.
  int32_t Find(std::string_view text) const;

 private:
  struct Slot {
    uint32_t tag;  // high bits of the hash, to skip most string comparisons
    int32_t id;    // -1: empty
  };
  const std::vector<std::string>& tokens_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

// A merge of two adjacent tokens (byte-level BPE): lower ranks merge first.
struct BpeMerge {
  int32_t rank;
  int32_t merged;  // the token the pair becomes
};

class MergeTable {
 public:
  explicit MergeTable(size_t expected_merges = 0);
  // Adds the merge of (left, right) unless the pair has one already (the first rank wins).
  void Insert(int32_t left, int32_t right, BpeMerge merge);
  // The pair's merge, or nullptr.
  const BpeMerge* Find(int32_t left, int32_t right) const;

 private:
  struct Slot {
    uint64_t key;  // left << 32 | right; kEmpty when free
    BpeMerge merge;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

}  // namespace hwinfer::text
