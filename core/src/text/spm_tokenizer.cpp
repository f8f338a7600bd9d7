// spm_tokenizer.cpp — the SentencePiece-BPE merge loop of llama.cpp's `llama` tokenizers
// (Tokenizer::EncodeSpm): the text, spaces already U+2581, starts as one symbol per UTF-8
// character; the adjacent pair whose concatenation is a token with the highest score merges
// first (ties: the leftmost), until no pair forms a token; a symbol that is no token is emitted as
// <0xXX> byte tokens. When no token has U+2581 after another character (Llama 2's vocabulary), no
// merge can cross the start of a word, so each word is merged on its own: the same result, with
// a small queue instead of one over the whole text.
#include <algorithm>
#include <queue>
#include <vector>

#include "hwinfer/tokenizer.h"
#include "token_index.h"
#include "utf8.h"

namespace hwinfer {
namespace {

struct Symbol {
  int prev, next;
  size_t offset, length;  // in the escaped text; length 0 once merged into its left neighbour
};

struct Bigram {
  int left, right;
  float score;
  size_t length;  // of the merged text, to recognise a pair whose symbols changed since
};

struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

constexpr std::string_view kSpace = "\xe2\x96\x81";  // U+2581

}  // namespace

bool Tokenizer::SpacesOnlyLead() const {
  for (const std::string& token : tokens_) {
    size_t lead = 0;
    while (token.compare(lead, kSpace.size(), kSpace) == 0) lead += kSpace.size();
    if (token.find(kSpace, lead) != std::string::npos) return false;
  }
  return true;
}

void Tokenizer::EncodeSpm(std::string_view escaped, std::vector<int32_t>& out) const {
  if (!spm_words_merge_alone_) return MergeSpm(escaped, out);
  size_t start = 0;
  for (size_t at = 0; (at = escaped.find(kSpace, at)) != std::string_view::npos;
       at += kSpace.size()) {
    // A word starts at a U+2581 that follows another character.
    if (at > start && escaped.compare(at - kSpace.size(), kSpace.size(), kSpace) != 0) {
      MergeSpm(escaped.substr(start, at - start), out);
      start = at;
    }
  }
  MergeSpm(escaped.substr(start), out);
}

void Tokenizer::MergeSpm(std::string_view escaped, std::vector<int32_t>& out) const {
  std::vector<Symbol> symbols;
  for (size_t offset = 0; offset < escaped.size();) {
    const size_t length = std::min(text::Utf8LengthFromLead(static_cast<uint8_t>(escaped[offset])),
                                   escaped.size() - offset);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, index + 1, offset, length});
    offset += length;
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t length = symbols[left].length + symbols[right].length;
    const int32_t found = ids_->Find(escaped.substr(symbols[left].offset, length));
    if (found < 0) return;
    queue.push({left, right, scores_[static_cast<size_t>(found)], length});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_pair(i - 1, i);
  while (!queue.empty()) {
    const Bigram pair = queue.top();
    queue.pop();
    Symbol& left = symbols[pair.left];
    Symbol& right = symbols[pair.right];
    if (left.length == 0 || right.length == 0 || left.length + right.length != pair.length) {
      continue;  // one side was merged elsewhere since this pair was queued
    }
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = pair.left;
    try_pair(left.prev, pair.left);
    try_pair(pair.left, left.next);
  }
  for (int i = 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = escaped.substr(symbols[i].offset, symbols[i].length);
    const int32_t found = ids_->Find(piece);
    if (found >= 0) {
      out.push_back(found);
    } else {
      AppendByteTokens(piece, out);
    }
  }
}

}  // namespace hwinfer
