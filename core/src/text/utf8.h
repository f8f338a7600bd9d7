// utf8.h — UTF-8 as llama.cpp's tokenizers read it. Internal to core/src/text: the tokenizers split
// text into characters, the byte-level one replaces broken sequences, and the streaming decoder
// holds back incomplete ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hwinfer::text {

// The length of a sequence as its first byte announces it, by its high nibble (a continuation
// byte or an ASCII byte stands alone; 0xf0-0xff announce four bytes).
inline size_t Utf8LengthFromLead(uint8_t lead) {
  if (lead < 0xc0) return 1;
  if (lead < 0xe0) return 2;
  return lead < 0xf0 ? 3 : 4;
}

// Appends code point |cp| (< 0x110000) encoded as UTF-8.
void AppendUtf8(char32_t cp, std::string& out);

// |text| with each byte that starts no well-formed sequence (a stray continuation byte, a lead
// byte 0xf8-0xff, a lead whose continuation bytes are missing) replaced by U+FFFD, as llama.cpp's
// byte-level tokenizer reads it. Returns false (and leaves |out| alone) when there is none.
bool ReplaceBrokenUtf8(std::string_view text, std::string& out);

}  // namespace hwinfer::text
