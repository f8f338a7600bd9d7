// utf8.cpp — see utf8.h.
#include "utf8.h"

namespace hwinfer::text {
namespace {

// The length of the well-formed sequence at |text[at]|, or 0: the lead byte's length when every
// continuation byte it announces is there (no check of overlong forms, as llama.cpp).
size_t SequenceLength(std::string_view text, size_t at) {
  const auto lead = static_cast<uint8_t>(text[at]);
  size_t length = 0;
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) == 0xc0) {
    length = 2;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4;
  } else {
    return 0;  // a continuation byte or 0xf8-0xff
  }
  if (at + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((static_cast<uint8_t>(text[at + k]) & 0xc0) != 0x80) return 0;
  }
  return length;
}

}  // namespace

void AppendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

bool ReplaceBrokenUtf8(std::string_view text, std::string& out) {
  size_t at = 0;
  while (at < text.size() && SequenceLength(text, at) != 0) at += SequenceLength(text, at);
  if (at == text.size()) return false;
  out.assign(text.substr(0, at));
  while (at < text.size()) {
    const size_t length = SequenceLength(text, at);
    if (length == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return true;
}

}  // namespace hwinfer::text
