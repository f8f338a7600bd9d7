// byte_level.h — GPT-2's byte-level alphabet: each of the 256 byte values stands for one printable
// code point (bytes that are printable Latin-1 for themselves, the others for U+0100 onwards in
// byte order), so byte-level BPE vocabularies (tokenizer.ggml.model = gpt2) store every token as
// text. Internal to core/src/text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hwinfer::text {

// The code point byte |b| stands for.
char32_t ByteToCodePoint(uint8_t b);

// |bytes| spelled in the alphabet (UTF-8 of each byte's code point), appended to |out|.
void AppendByteLevel(std::string_view bytes, std::string& out);

// The bytes a token's text stands for, appended to |out|: each code point of the alphabet as its
// byte; a code point outside the alphabet (a token not written byte-level) as its UTF-8.
void AppendBytesOfByteLevel(std::string_view token_text, std::string& out);

}  // namespace hwinfer::text
