// hwinfer/text_escape.h — making text that came from a file, a plugin or a flag safe to print.
//
// Tensor names, YAML keys, model and device names are chosen by whoever wrote the file or the
// plugin; printed raw, an ESC byte or a carriage return can rewrite the user's terminal or forge
// a line of output. Every message and every name printed as text goes through this first.
#pragma once

#include <string>
#include <string_view>

namespace hwinfer {

// |text| with every control character escaped: \n, \r and \t as those two characters, other C0
// controls, DEL and the C1 controls (U+0080-U+009F) as \xNN (C1 as the bytes of their UTF-8
// form), and bytes that are not valid UTF-8 as \xNN. Printable ASCII and valid UTF-8 are kept.
std::string EscapeControlCharacters(std::string_view text);

// The offset of the first byte of |text| that does not belong to a valid UTF-8 sequence (a stray
// continuation byte, a truncated or overlong sequence, a surrogate, past U+10FFFF), or npos when
// all of |text| is valid UTF-8. For refusing text a tokenizer would otherwise take byte by byte.
size_t FindInvalidUtf8(std::string_view text);

}  // namespace hwinfer
