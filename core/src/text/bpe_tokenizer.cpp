// bpe_tokenizer.cpp — byte-level BPE (`tokenizer.ggml.model = gpt2`: Llama 3, Qwen 2, GPT-2), as
// llama.cpp and Hugging Face's tokenizers run it: the pre-tokenizer cuts the text into words;
// each word, spelled in GPT-2's byte alphabet, starts as one token per byte and the adjacent pair
// with the lowest merge rank (tokenizer.ggml.merges order; ties: the leftmost) merges first until
// no pair has a merge. Llama 3 takes a word that is a token whole before merging (ignore_merges).
#include <queue>
#include <vector>

#include "byte_level.h"
#include "hwinfer/tokenizer.h"
#include "pretokenizer.h"
#include "token_index.h"
#include "utf8.h"

namespace hwinfer {
namespace {

struct Symbol {
  int32_t id;  // the token; -1: a byte without one; kAbsorbed: merged into its left neighbour
  int prev, next;
};
constexpr int32_t kAbsorbed = -2;

struct Candidate {
  int32_t rank;
  int left, right;
  int32_t left_id, right_id;  // to recognise a pair that changed since it was queued
  int32_t merged;
};

struct LowerRankFirst {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

Status Tokenizer::LoadBytePairs(const GgufFile& file) {
  std::string pre = "default";
  if (file.Find("tokenizer.ggml.pre") != nullptr) {
    auto value = file.GetString("tokenizer.ggml.pre");
    if (!value.ok()) return value.status();
    pre = *value;
  }
  auto pretokenizer = text::Pretokenizer::ForName(pre);
  if (!pretokenizer.ok()) return pretokenizer.status();
  pretokenizer_ = std::move(*pretokenizer);
  std::string spelled;
  for (int b = 0; b < 256; ++b) {
    spelled.clear();
    text::AppendUtf8(text::ByteToCodePoint(static_cast<uint8_t>(b)), spelled);
    byte_ids_[b] = ids_->Find(spelled);
  }
  auto merges = file.GetArray("tokenizer.ggml.merges");
  if (!merges.ok()) return merges.status();
  if ((*merges)->element_type != GgufType::kString) {
    return InvalidArgument(
        std::string("tokenizer.ggml.merges: expected an array of strings, found ") +
        GgufTypeName((*merges)->element_type));
  }
  const std::vector<GgufValue>& items = (*merges)->items;
  auto merges_table = std::make_unique<text::MergeTable>(items.size());
  std::string joined;
  for (size_t rank = 0; rank < items.size(); ++rank) {
    const std::string& merge = std::get<std::string>(items[rank].data);
    const size_t space = merge.find(' ', 1);
    auto bad = [&](const std::string& why) {
      return InvalidArgument("tokenizer.ggml.merges[" + std::to_string(rank) + "] '" + merge +
                             "': " + why);
    };
    if (space == std::string::npos) return bad("expected two tokens separated by a space");
    const std::string_view left(merge.data(), space);
    const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
    joined.assign(left).append(right);
    const int32_t left_id = ids_->Find(left), right_id = ids_->Find(right);
    const int32_t merged = ids_->Find(joined);
    if (left_id < 0 || right_id < 0 || merged < 0) {
      return bad("names a token that is not in tokenizer.ggml.tokens");
    }
    merges_table->Insert(left_id, right_id, {static_cast<int32_t>(rank), merged});
  }
  merges_ = std::move(merges_table);
  return Status::Ok();
}

void Tokenizer::EncodeBytePairs(std::string_view fragment, std::vector<int32_t>& out) const {
  std::string repaired;
  if (text::ReplaceBrokenUtf8(fragment, repaired)) fragment = repaired;
  std::vector<std::string_view> words;
  pretokenizer_->Split(fragment, words);
  for (std::string_view word : words) MergeWord(word, out);
}

void Tokenizer::MergeWord(std::string_view word, std::vector<int32_t>& out) const {
  if (pretokenizer_->ignore_merges()) {
    std::string spelled;
    text::AppendByteLevel(word, spelled);
    const int32_t whole = ids_->Find(spelled);
    if (whole >= 0) {
      out.push_back(whole);
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (size_t k = 0; k < word.size(); ++k) {
    const int index = static_cast<int>(k);
    symbols.push_back({byte_ids_[static_cast<uint8_t>(word[k])], index - 1, index + 1});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;
  std::priority_queue<Candidate, std::vector<Candidate>, LowerRankFirst> queue;
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0 || symbols[left].id < 0 || symbols[right].id < 0) return;
    const text::BpeMerge* merge = merges_->Find(symbols[left].id, symbols[right].id);
    if (merge == nullptr) return;
    queue.push({merge->rank, left, right, symbols[left].id, symbols[right].id, merge->merged});
  };
  for (int k = 1; k < static_cast<int>(symbols.size()); ++k) consider(k - 1, k);
  while (!queue.empty()) {
    const Candidate pair = queue.top();
    queue.pop();
    Symbol& left = symbols[pair.left];
    Symbol& right = symbols[pair.right];
    if (left.id != pair.left_id || right.id != pair.right_id || left.next != pair.right) continue;
    left.id = pair.merged;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = pair.left;
    right.id = kAbsorbed;
    consider(left.prev, pair.left);
    consider(pair.left, left.next);
  }
  for (int k = 0; k >= 0; k = symbols[k].next) {
    if (symbols[k].id >= 0) {
      out.push_back(symbols[k].id);
    } else if (unknown_ >= 0) {
      out.push_back(unknown_);  // a byte the vocabulary cannot spell
    }
  }
}

}  // namespace hwinfer
