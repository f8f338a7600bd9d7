// token_index.cpp — see token_index.h. Both tables keep their load under one half, probe
// linearly, and never shrink or delete.
#include "token_index.h"

#include <functional>

namespace hwinfer::text {
namespace {

// A power of two with room for |n| entries at a load of at most one half.
size_t CapacityFor(size_t n) {
  size_t capacity = 16;
  while (capacity < 2 * n) capacity *= 2;
  return capacity;
}

uint64_t MixPair(uint64_t key) {  // a 64-bit finaliser (splitmix64)
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ull;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebull;
  return key ^ (key >> 31);
}

}  // namespace

TokenIndex::TokenIndex(const std::vector<std::string>& tokens) : tokens_(tokens) {
  slots_.assign(CapacityFor(tokens.size()), Slot{0, -1});
  mask_ = slots_.size() - 1;
  for (size_t id = 0; id < tokens.size(); ++id) {
    const size_t hash = std::hash<std::string_view>{}(tokens[id]);
    const auto tag = static_cast<uint32_t>(hash >> 32);
    for (size_t at = hash & mask_;; at = (at + 1) & mask_) {
      Slot& slot = slots_[at];
      if (slot.id < 0 || (slot.tag == tag && tokens_[static_cast<size_t>(slot.id)] == tokens[id])) {
        slot = {tag, static_cast<int32_t>(id)};
        break;
      }
    }
  }
}

int32_t TokenIndex::Find(std::string_view text) const {
  const size_t hash = std::hash<std::string_view>{}(text);
  const auto tag = static_cast<uint32_t>(hash >> 32);
  for (size_t at = hash & mask_;; at = (at + 1) & mask_) {
    const Slot& slot = slots_[at];
    if (slot.id < 0) return -1;
    if (slot.tag == tag && tokens_[static_cast<size_t>(slot.id)] == text) return slot.id;
  }
}

MergeTable::MergeTable(size_t expected_merges) {
  slots_.assign(CapacityFor(expected_merges), Slot{kEmpty, {0, 0}});
  mask_ = slots_.size() - 1;
}

void MergeTable::Insert(int32_t left, int32_t right, BpeMerge merge) {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  for (size_t at = MixPair(key) & mask_;; at = (at + 1) & mask_) {
    Slot& slot = slots_[at];
    if (slot.key == key) return;
    if (slot.key == kEmpty) {
      slot = {key, merge};
      return;
    }
  }
}

const BpeMerge* MergeTable::Find(int32_t left, int32_t right) const {
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  for (size_t at = MixPair(key) & mask_;; at = (at + 1) & mask_) {
    const Slot& slot = slots_[at];
    if (slot.key == key) return &slot.merge;
    if (slot.key == kEmpty) return nullptr;
  }
}

}  // namespace hwinfer::text
