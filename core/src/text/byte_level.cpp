// byte_level.cpp — see byte_level.h.
#include "byte_level.h"

#include <array>

#include "utf8.h"

namespace hwinfer::text {
namespace {

bool IsPrintableLatin1(uint8_t b) {
  return (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
}

struct Alphabet {
  std::array<char32_t, 256> code_point{};
  std::array<int16_t, 0x144> byte_of{};  // code points used: < U+0144; -1 when none
  Alphabet() {
    byte_of.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const auto byte = static_cast<uint8_t>(b);
      code_point[byte] = IsPrintableLatin1(byte) ? char32_t(b) : next++;
      byte_of[code_point[byte]] = static_cast<int16_t>(b);
    }
  }
};

const Alphabet& GetAlphabet() {
  static const Alphabet alphabet;
  return alphabet;
}

}  // namespace

char32_t ByteToCodePoint(uint8_t b) { return GetAlphabet().code_point[b]; }

void AppendByteLevel(std::string_view bytes, std::string& out) {
  const Alphabet& alphabet = GetAlphabet();
  for (char c : bytes) AppendUtf8(alphabet.code_point[static_cast<uint8_t>(c)], out);
}

void AppendBytesOfByteLevel(std::string_view token_text, std::string& out) {
  const Alphabet& alphabet = GetAlphabet();
  for (size_t at = 0; at < token_text.size();) {
    const auto lead = static_cast<uint8_t>(token_text[at]);
    const size_t length = std::min(Utf8LengthFromLead(lead), token_text.size() - at);
    char32_t cp = length == 1 ? lead : lead & (0x7f >> length);
    for (size_t k = 1; k < length; ++k) cp = (cp << 6) | (token_text[at + k] & 0x3f);
    if (cp < alphabet.byte_of.size() && alphabet.byte_of[cp] >= 0) {
      out += static_cast<char>(alphabet.byte_of[cp]);
    } else {
      out.append(token_text.substr(at, length));
    }
    at += length;
  }
}

}  // namespace hwinfer::text
