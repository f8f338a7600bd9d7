// tokenizer.h — text <-> token ids from a GGUF file's `tokenizer.ggml.*` metadata alone, as
// llama.cpp tokenizes (docs/text-io.md): SentencePiece (`model = llama`: Llama 1/2, Mistral, ...)
// and byte-level BPE (`model = gpt2`: Llama 3, Qwen 2, GPT-2, with the pre-tokenizer `pre`
// names); another `model` or `pre` is an error naming it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/status.h"

namespace hwinfer {
namespace text {
class Pretokenizer;
class TokenIndex;
class MergeTable;
}  // namespace text

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// tokenizer.ggml.model: how text becomes ids.
enum class TokenizerFamily {
  kSentencePiece,  // "llama": score-ordered merges of characters, <0xXX> byte fallback
  kBytePairs,      // "gpt2": words by the pre-tokenizer, rank-ordered merges of bytes
};

class Tokenizer {
 public:
  // Errors name the key: a missing or mistyped tokenizer.ggml.tokens / scores / token_type /
  // merges, arrays of different lengths, a special token id outside the vocabulary, an unknown
  // `model` or `pre`.
  static StatusOr<std::unique_ptr<Tokenizer>> FromGguf(const GgufFile& file);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // |text| (UTF-8 bytes) -> ids. Bytes that are no UTF-8 are kept as byte tokens (SentencePiece)
  // or read as U+FFFD (byte-level BPE), as llama.cpp does. |add_special|: BOS / EOS as
  // add_bos_token / add_eos_token say. |parse_special|: the texts of control and user-defined
  // tokens in |text| become those tokens (otherwise they are tokenized as plain text).
  std::vector<int32_t> Encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes token |id| stands for: U+2581 as a space, <0xXX> as that byte (SentencePiece), each
  // code point of GPT-2's byte alphabet as its byte (byte-level BPE); control tokens give "" unless
  // |special|, an unknown token U+2585 (as llama.cpp); an id outside the vocabulary "".
  std::string Piece(int32_t id, bool special) const;
  // Pieces of |ids| concatenated; the space Encode puts before the first word (add_space_prefix)
  // is removed from the first non-empty piece, so Decode(Encode(t)) == t for plain text.
  std::string Decode(const std::vector<int32_t>& ids, bool special) const;

  TokenizerFamily family() const { return family_; }
  int32_t vocab_size() const { return static_cast<int32_t>(tokens_.size()); }
  int32_t bos() const { return bos_; }
  // Encode with |add_special| starts with BOS (add_bos_token, and the vocabulary has one).
  bool adds_bos() const { return add_bos_ && bos_ >= 0; }
  int32_t eos() const { return eos_; }
  // -1 when the vocabulary has none (tokenizer.ggml.eot_token_id, else a token named as the
  // common templates end a turn: <|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, ...).
  int32_t eot() const { return eot_; }
  // EOS, EOT, or Llama 3's end of message <|eom_id|>.
  bool IsEndOfGeneration(int32_t id) const {
    return id == eos_ || (eot_ >= 0 && id == eot_) || (eom_ >= 0 && id == eom_);
  }
  // The ids IsEndOfGeneration accepts (those the vocabulary has).
  std::vector<int32_t> EndOfGenerationIds() const {
    std::vector<int32_t> ids;
    for (int32_t id : {eos_, eot_, eom_}) {
      if (id >= 0) ids.push_back(id);
    }
    return ids;
  }
  TokenType type(int32_t id) const { return types_[static_cast<size_t>(id)]; }
  const std::string& text(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }

 private:
  Tokenizer();
  Status Load(const GgufFile& file);
  Status LoadBytePairs(const GgufFile& file);  // merges and pre-tokenizer
  void FindEndOfTurnTokens();
  // One fragment of text between special tokens, by the family's algorithm.
  void EncodeFragment(std::string_view fragment, bool first_of_text,
                      std::vector<int32_t>& out) const;
  // SentencePiece-BPE over one fragment of plain text (already escaped: spaces as U+2581), word
  // by word when spm_words_merge_alone_.
  void EncodeSpm(std::string_view escaped, std::vector<int32_t>& out) const;
  void MergeSpm(std::string_view escaped, std::vector<int32_t>& out) const;
  // Whether every token has U+2581 only at its start (then no merge crosses a word's start).
  bool SpacesOnlyLead() const;
  // Byte-level BPE: pre-tokenize, then merge each word by rank.
  void EncodeBytePairs(std::string_view fragment, std::vector<int32_t>& out) const;
  void MergeWord(std::string_view word, std::vector<int32_t>& out) const;
  void AppendByteTokens(std::string_view bytes, std::vector<int32_t>& out) const;
  // The special token whose text starts |text| at |at| (longest first), or -1.
  int32_t MatchSpecial(std::string_view text, size_t at, bool parse_special) const;

  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::unique_ptr<const text::TokenIndex> ids_;  // text -> id
  // Control, user-defined and unknown tokens by the first byte of their text, longest first.
  std::array<std::vector<int32_t>, 256> special_by_first_byte_;
  TokenizerFamily family_ = TokenizerFamily::kSentencePiece;
  // SentencePiece: the <0xXX> token of each byte. Byte-level: the token of each byte's code point.
  int32_t byte_ids_[256] = {};
  std::unique_ptr<const text::MergeTable> merges_;  // byte-level BPE
  std::unique_ptr<const text::Pretokenizer> pretokenizer_;
  int32_t bos_ = -1, eos_ = -1, eot_ = -1, eom_ = -1, unknown_ = -1;
  bool add_bos_ = true, add_eos_ = false, add_space_prefix_ = true;
  bool spm_words_merge_alone_ = false;
};

// Turns ids into text as they are generated: a UTF-8 character split over several tokens is
// returned once its last byte has arrived.
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  // The complete characters token |id| finishes (maybe "").
  std::string Push(int32_t id);
  // What is still held back (an incomplete sequence at the end: its bytes as they are).
  std::string Flush();

 private:
  const Tokenizer& tokenizer_;
  std::string pending_;
};

}  // namespace hwinfer
