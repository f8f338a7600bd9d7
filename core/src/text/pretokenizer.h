// pretokenizer.h — the regular expressions a byte-level BPE vocabulary's `tokenizer.ggml.pre`
// names, splitting text into the words BPE merges within (merges never cross a word boundary).
// Matched with PCRE2 (UTF-8, Unicode properties for \p{L} \p{N} \p{P} \s, JIT-compiled). Several
// expressions apply in turn, each splitting the pieces of the one before; text no expression
// matches stays a piece of its own. Internal to core/src/text.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwinfer/status.h"

namespace hwinfer::text {

class Pretokenizer {
 public:
  // |pre| as tokenizer.ggml.pre writes it; unknown names are an error listing the known ones.
  static StatusOr<std::unique_ptr<Pretokenizer>> ForName(const std::string& pre);
  // "default, gpt-2, llama-bpe, ..." for messages.
  static std::string KnownNames();

  ~Pretokenizer();
  Pretokenizer(const Pretokenizer&) = delete;
  Pretokenizer& operator=(const Pretokenizer&) = delete;

  // Appends the words of |text| (views into it, in order, covering all of it) to |words|.
  // Thread-safe.
  void Split(std::string_view text, std::vector<std::string_view>& words) const;

  // Whether this vocabulary takes a word that is a token whole, before any merge (Llama 3).
  bool ignore_merges() const { return ignore_merges_; }

 private:
  struct Expression;
  Pretokenizer() = default;
  void SplitWith(const Expression& expression, std::string_view text,
                 std::vector<std::string_view>& out) const;

  std::vector<std::unique_ptr<Expression>> expressions_;
  bool ignore_merges_ = false;
};

}  // namespace hwinfer::text
