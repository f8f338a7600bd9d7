// tokenizer.cpp — see hwinfer/tokenizer.h: the vocabulary read from the GGUF metadata, special
// tokens split out of the text, ids turned back into bytes (whole or streamed). The
// SentencePiece algorithm itself is in spm_tokenizer.cpp.
#include "hwinfer/tokenizer.h"

#include <algorithm>
#include <cstdio>

#include "byte_level.h"
#include "pretokenizer.h"
#include "token_index.h"
#include "utf8.h"

namespace hwinfer {
namespace {

// The array under |key| with |n| items of |type| (n < 0: any length), or an error naming the key.
StatusOr<const GgufArray*> TypedArray(const GgufFile& file, const std::string& key, GgufType type,
                                      int64_t n) {
  auto array = file.GetArray(key);
  if (!array.ok()) return array.status();
  if ((*array)->element_type != type) {
    return InvalidArgument(key + ": expected an array of " + GgufTypeName(type) + ", found " +
                           GgufTypeName((*array)->element_type));
  }
  if (n >= 0 && static_cast<int64_t>((*array)->items.size()) != n) {
    return InvalidArgument(key + ": " + std::to_string((*array)->items.size()) +
                           " entries, expected one per token (" + std::to_string(n) + ")");
  }
  return *array;
}

// The token id under |key|, -1 when absent; an id outside [0, n) is an error naming the key.
StatusOr<int32_t> OptionalTokenId(const GgufFile& file, const std::string& key, int64_t n) {
  if (file.Find(key) == nullptr) return -1;
  auto id = file.GetUint32(key);
  if (!id.ok()) return id.status();
  if (static_cast<int64_t>(*id) >= n) {
    return InvalidArgument(key + " = " + std::to_string(*id) + " is outside the vocabulary of " +
                           std::to_string(n) + " tokens");
  }
  return static_cast<int32_t>(*id);
}

bool OptionalBool(const GgufFile& file, const std::string& key, bool fallback) {
  auto value = file.GetBool(key);
  return value.ok() ? *value : fallback;
}

// The byte <0xXX> stands for, or -1.
int ByteOfToken(const std::string& text) {
  unsigned value = 0;
  if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return -1;
  if (std::sscanf(text.c_str() + 3, "%2X", &value) != 1) return -1;
  return static_cast<int>(value);
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromGguf(const GgufFile& file) {
  std::unique_ptr<Tokenizer> tokenizer(new Tokenizer());
  Status loaded = tokenizer->Load(file);
  if (!loaded.ok()) return loaded.WithContext(file.name());
  return tokenizer;
}

Status Tokenizer::Load(const GgufFile& file) {
  auto model = file.GetString("tokenizer.ggml.model");
  if (!model.ok()) return model.status();
  if (*model == "gpt2") {
    family_ = TokenizerFamily::kBytePairs;
  } else if (*model != "llama") {
    return Unsupported(
        "tokenizer.ggml.model '" + *model +
        "' has no tokenizer here; known: llama (SentencePiece), gpt2 (byte-level BPE)");
  }
  const bool spm = family_ == TokenizerFamily::kSentencePiece;
  auto tokens = TypedArray(file, "tokenizer.ggml.tokens", GgufType::kString, -1);
  if (!tokens.ok()) return tokens.status();
  const auto n = static_cast<int64_t>((*tokens)->items.size());
  // Scores order SentencePiece's merges; byte-level vocabularies may leave them out.
  const GgufArray* scores = nullptr;
  if (spm || file.Find("tokenizer.ggml.scores") != nullptr) {
    auto found = TypedArray(file, "tokenizer.ggml.scores", GgufType::kFloat32, n);
    if (!found.ok()) return found.status();
    scores = *found;
  }
  auto types = TypedArray(file, "tokenizer.ggml.token_type", GgufType::kInt32, n);
  if (!types.ok()) return types.status();
  tokens_.reserve(static_cast<size_t>(n));
  scores_.reserve(static_cast<size_t>(n));
  types_.reserve(static_cast<size_t>(n));
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), -1);
  std::vector<int32_t> specials;
  for (int64_t id = 0; id < n; ++id) {
    const auto i = static_cast<size_t>(id);
    tokens_.push_back(std::get<std::string>((*tokens)->items[i].data));
    scores_.push_back(scores ? static_cast<float>(std::get<double>(scores->items[i].data)) : 0.f);
    const int64_t type = std::get<int64_t>((*types)->items[i].data);
    types_.push_back(type >= 0 && type <= 6 ? static_cast<TokenType>(type) : TokenType::kNormal);
    const int byte = spm && types_.back() == TokenType::kByte ? ByteOfToken(tokens_.back()) : -1;
    if (byte >= 0) byte_ids_[byte] = static_cast<int32_t>(id);
    if (types_.back() == TokenType::kControl || types_.back() == TokenType::kUserDefined ||
        types_.back() == TokenType::kUnknown) {
      if (!tokens_.back().empty()) specials.push_back(static_cast<int32_t>(id));
    }
  }
  std::stable_sort(specials.begin(), specials.end(),
                   [&](int32_t a, int32_t b) { return text(a).size() > text(b).size(); });
  for (int32_t id : specials)
    special_by_first_byte_[static_cast<uint8_t>(text(id)[0])].push_back(id);
  ids_ = std::make_unique<text::TokenIndex>(tokens_);
  for (auto [key, id] : {std::pair{"tokenizer.ggml.bos_token_id", &bos_},
                         std::pair{"tokenizer.ggml.eos_token_id", &eos_},
                         std::pair{"tokenizer.ggml.eot_token_id", &eot_},
                         std::pair{"tokenizer.ggml.eom_token_id", &eom_},
                         std::pair{"tokenizer.ggml.unknown_token_id", &unknown_}}) {
    auto value = OptionalTokenId(file, key, n);
    if (!value.ok()) return value.status();
    *id = *value;
  }
  FindEndOfTurnTokens();
  if (!spm) {
    if (Status bpe = LoadBytePairs(file); !bpe.ok()) return bpe;
  }
  spm_words_merge_alone_ = spm && SpacesOnlyLead();
  // llama.cpp's defaults per family (Llama 3's pre-tokenizer also adds BOS by default).
  const bool default_bos = spm || (pretokenizer_ && pretokenizer_->ignore_merges());
  add_bos_ = OptionalBool(file, "tokenizer.ggml.add_bos_token", default_bos);
  add_eos_ = OptionalBool(file, "tokenizer.ggml.add_eos_token", false);
  add_space_prefix_ = OptionalBool(file, "tokenizer.ggml.add_space_prefix", spm);
  return Status::Ok();
}

void Tokenizer::FindEndOfTurnTokens() {
  auto find = [&](std::initializer_list<const char*> names) {
    for (const char* name : names) {
      const int32_t found = ids_->Find(name);
      if (found >= 0) return found;
    }
    return -1;
  };
  if (eot_ < 0) {
    eot_ = find({"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>"});
  }
  if (eom_ < 0) eom_ = find({"<|eom_id|>"});
}

int32_t Tokenizer::MatchSpecial(std::string_view text, size_t at, bool parse_special) const {
  for (int32_t id : special_by_first_byte_[static_cast<uint8_t>(text[at])]) {
    const bool always = type(id) == TokenType::kUserDefined;
    if ((always || parse_special) && text.compare(at, this->text(id).size(), this->text(id)) == 0) {
      return id;
    }
  }
  return -1;
}

void Tokenizer::EncodeFragment(std::string_view fragment, bool first_of_text,
                               std::vector<int32_t>& out) const {
  if (family_ == TokenizerFamily::kBytePairs) {
    EncodeBytePairs(fragment, out);
    return;
  }
  std::string escaped = add_space_prefix_ && first_of_text ? "\xe2\x96\x81" : "";
  for (char c : fragment)
    escaped += c == ' ' ? std::string_view("\xe2\x96\x81") : std::string_view(&c, 1);
  EncodeSpm(escaped, out);
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && add_bos_ && bos_ >= 0) out.push_back(bos_);
  bool after_special = true;  // the first fragment of text gets the space prefix
  auto encode_text = [&](std::string_view fragment) {
    if (fragment.empty()) return;
    EncodeFragment(fragment, after_special, out);
    after_special = false;
  };
  size_t start = 0, i = 0;
  while (i < text.size()) {
    const int32_t match = MatchSpecial(text, i, parse_special);
    if (match < 0) {
      ++i;
      continue;
    }
    encode_text(text.substr(start, i - start));
    out.push_back(match);
    after_special = true;
    i += this->text(match).size();
    start = i;
  }
  encode_text(text.substr(start));
  if (add_special && add_eos_ && eos_ >= 0) out.push_back(eos_);
  return out;
}

void Tokenizer::AppendByteTokens(std::string_view bytes, std::vector<int32_t>& out) const {
  for (char c : bytes) {
    const int32_t id = byte_ids_[static_cast<uint8_t>(c)];
    out.push_back(id >= 0 ? id : unknown_);
  }
}

std::string Tokenizer::Piece(int32_t id, bool special) const {
  if (id < 0 || id >= vocab_size()) return "";
  const std::string& piece = text(id);
  switch (type(id)) {
    case TokenType::kControl:
      return special ? piece : "";
    case TokenType::kUnknown:
      return "\xe2\x96\x85";  // U+2585, as llama.cpp shows an unknown token
    case TokenType::kByte: {
      const int byte = ByteOfToken(piece);
      return byte >= 0 ? std::string(1, static_cast<char>(byte)) : "";
    }
    default:
      break;
  }
  std::string out;
  if (family_ == TokenizerFamily::kBytePairs) {
    if (type(id) == TokenType::kUserDefined) return piece;
    text::AppendBytesOfByteLevel(piece, out);
    return out;
  }
  for (size_t k = 0; k < piece.size();) {
    if (piece.compare(k, 3, "\xe2\x96\x81") == 0) {
      out += ' ';
      k += 3;
    } else {
      out += piece[k++];
    }
  }
  return out;
}

std::string Tokenizer::Decode(const std::vector<int32_t>& ids, bool special) const {
  std::string out;
  bool strip = add_space_prefix_;  // the space Encode put before the first word
  for (int32_t id : ids) {
    std::string piece = Piece(id, special);
    if (piece.empty()) continue;
    if (strip && piece[0] == ' ') piece.erase(0, 1);
    strip = false;
    out += piece;
  }
  return out;
}

std::string StreamingDecoder::Push(int32_t id) {
  pending_ += tokenizer_.Piece(id, false);
  // Hold back an incomplete UTF-8 sequence at the end.
  size_t complete = pending_.size();
  for (size_t back = 1; back <= 4 && back <= pending_.size(); ++back) {
    const auto byte = static_cast<uint8_t>(pending_[pending_.size() - back]);
    if ((byte & 0xc0) == 0x80) continue;  // a continuation byte: look further back
    // A byte 0xf8-0xff starts no sequence: it is passed on as it is.
    if (byte < 0xf8 && text::Utf8LengthFromLead(byte) > back) complete = pending_.size() - back;
    break;
  }
  std::string out = pending_.substr(0, complete);
  pending_.erase(0, complete);
  return out;
}

std::string StreamingDecoder::Flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace hwinfer
