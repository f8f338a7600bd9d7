// tokenizer.h — text <-> token ids from a GGUF file's `tokenizer.ggml.*` metadata alone, as
// llama.cpp tokenizes (docs/text-io.md). Built so far: the SentencePiece family (`model =
// llama`: Llama 1/2, Mistral, ...); another `model` is an error naming it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hwinfer/gguf.h"
#include "hwinfer/status.h"

namespace hwinfer {

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

class Tokenizer {
 public:
  // Errors name the key: a missing or mistyped tokenizer.ggml.tokens / scores / token_type, arrays
  // of different lengths, a special token id outside the vocabulary, an unknown `model`.
  static StatusOr<std::unique_ptr<Tokenizer>> FromGguf(const GgufFile& file);

  // |text| (UTF-8 bytes) -> ids. |add_special|: BOS / EOS as add_bos_token / add_eos_token say.
  // |parse_special|: the texts of control and user-defined tokens in |text| become those tokens
  // (otherwise they are tokenized as plain text).
  std::vector<int32_t> Encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes token |id| stands for: U+2581 as a space, <0xXX> as that byte; control tokens give
  // "" unless |special|, an unknown token U+2585 (as llama.cpp); an id outside the vocabulary "".
  std::string Piece(int32_t id, bool special) const;
  // Pieces of |ids| concatenated; the space Encode puts before the first word (add_space_prefix)
  // is removed from the first non-empty piece, so Decode(Encode(t)) == t for plain text.
  std::string Decode(const std::vector<int32_t>& ids, bool special) const;

  int32_t vocab_size() const { return static_cast<int32_t>(tokens_.size()); }
  int32_t bos() const { return bos_; }
  int32_t eos() const { return eos_; }
  // -1 when the vocabulary has none.
  int32_t eot() const { return eot_; }
  bool IsEndOfGeneration(int32_t id) const { return id == eos_ || (eot_ >= 0 && id == eot_); }
  TokenType type(int32_t id) const { return types_[static_cast<size_t>(id)]; }
  const std::string& text(int32_t id) const { return tokens_[static_cast<size_t>(id)]; }

 private:
  Tokenizer() = default;
  Status Load(const GgufFile& file);
  // SentencePiece-BPE over one fragment of plain text (already escaped: spaces as U+2581).
  void EncodeSpm(std::string_view escaped, std::vector<int32_t>& out) const;
  void AppendByteTokens(std::string_view bytes, std::vector<int32_t>& out) const;

  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<int32_t> special_ids_;  // control and user-defined, longest text first
  int32_t byte_ids_[256] = {};
  int32_t bos_ = -1, eos_ = -1, eot_ = -1, unknown_ = -1;
  bool add_bos_ = true, add_eos_ = false, add_space_prefix_ = true;
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
